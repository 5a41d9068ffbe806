"""Memory built as engram builds it, for the setup of tests and benchmarks: a batch ingested, then taken through
engram-enrichment's steps; a consolidation run. The steps' order is written once, in engram.app.inline."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from engram.app.inline import consolidate, enrich
from engram.enrichment.ingest import ingest_events
from engram.model.events import IngestRequest
from engram.ports.clients import Clients

__all__ = ["consolidate", "enrich", "remember"]


def remember(clients: Clients, world_id: str, events: IngestRequest | Sequence[Mapping[str, Any]], *,
             received_at: datetime | None = None, now: datetime | None = None) -> list[str]:
    """Ingest one batch (an IngestRequest, or its events as dicts) and enrich it (Resolve, Extract, Index);
    returns the batch's event ids. `received_at`: the ingest's time; `now`: the extraction's (both the clock's
    unless given)."""
    request = events if isinstance(events, IngestRequest) else IngestRequest.model_validate({"events": list(events)})
    ids = [e.event_id for e in ingest_events(clients, clients.world(world_id), request, now=received_at).events]
    enrich(clients, world_id, ids, now=now)
    return ids
