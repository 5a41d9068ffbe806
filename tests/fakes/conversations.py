"""Conversations for unit tests: turns as an agent sends them, and a memory built from them by the enrichment
steps on the in-memory fakes (ingest, then engram.app.inline.enrich), as the enrichment workflow runs them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from engram.app.inline import enrich
from engram.enrichment.ingest import ingest_events
from engram.model.events import IngestRequest
from engram.model.world import World
from tests.fakes.ports import FakePorts

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


def said(*turns: str | tuple[str, str], user: str = "dana", conversation: str = "c1", start: datetime = T0,
         first: int = 1, prefix: str = "e") -> IngestRequest:
    """One batch, a minute between turns: a bare text is the user's, a (role, text) pair anyone's; event ids
    `e1`, `e2`... (from `first`, with `prefix`)."""
    events = []
    for n, turn in enumerate(turns):
        role, text = ("user", turn) if isinstance(turn, str) else turn
        events.append({"event_id": f"{prefix}{first + n}", "user_id": user, "conversation_id": conversation,
                       "role": role, "content": text, "occurred_at": (start + timedelta(minutes=n)).isoformat()})
    return IngestRequest.model_validate({"events": events})


def remember(ports: FakePorts, world: World, request: IngestRequest) -> list[str]:
    """Ingest a batch and enrich it as the enrichment workflow does (`engram.app.inline.enrich`, each step
    resolving the fakes' World); returns its event ids."""
    ingest_events(ports, world, request)
    ids = [e.event_id for e in request.events if e.event_id]
    enrich(ports, world.world_id, ids)
    return ids
