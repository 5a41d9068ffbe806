"""Ingest: validate, score, tag and store events, then start one enrichment for the new ones.

Storing never depends on enrichment: if starting the workflow fails, the events stay stored as
`pending` and can be enriched later.
"""

from __future__ import annotations

from datetime import datetime

from engram.model.common import new_id, utcnow
from engram.model.events import CONTENT_TYPE_BY_ROLE, IngestedEvent, IngestRequest, IngestResponse, StoredEvent
from engram.observability import logger
from engram.rules.scoring import importance
from engram.rules.tags import tags_for
from engram.service import Clients


def ingest_events(clients: Clients, world_id: str, request: IngestRequest, *,
                  now: datetime | None = None) -> IngestResponse:
    """Store a batch atomically; duplicates (by event_id) are acknowledged and start nothing."""
    now = now or utcnow()
    h = clients.heuristics_for(world_id)
    categories = {**h.tag_keywords, **clients.store.world_config(world_id).get("tag_categories", {})}
    stored = []
    for e in request.events:
        content_type = e.content_type or CONTENT_TYPE_BY_ROLE[e.role]
        stored.append(StoredEvent(
            world_id=world_id, event_id=e.event_id or new_id("evt"), user_id=e.user_id,
            conversation_id=e.conversation_id, role=e.role, content=e.content, content_type=content_type,
            occurred_at=e.occurred_at or now, received_at=now, metadata=e.metadata,
            importance=importance(e.content, content_type, h), tags=tags_for(e.content, categories),
        ))
    inserted = clients.store.insert_events(stored)
    new_ids = [e.event_id for e, ok in zip(stored, inserted, strict=True) if ok]
    duplicates = {e.event_id: e for e in clients.store.get_events(
        world_id, [e.event_id for e, ok in zip(stored, inserted, strict=True) if not ok])}

    enrichment_id = _start_enrichment(clients, world_id, new_ids) if new_ids else None
    results = []
    for event, ok in zip(stored, inserted, strict=True):
        shown = event if ok else duplicates.get(event.event_id, event)
        results.append(IngestedEvent(event_id=event.event_id, importance=shown.importance, tags=shown.tags,
                                     duplicate=not ok, enrichment_id=enrichment_id if ok else shown.enrichment_id))
    return IngestResponse(world_id=world_id, accepted=len(new_ids), duplicates=len(stored) - len(new_ids),
                          enrichment_id=enrichment_id, events=results)


def _start_enrichment(clients: Clients, world_id: str, event_ids: list[str]) -> str | None:
    """One execution for the whole batch. A failure leaves the events `pending`, never lost."""
    enrichment_id = new_id("enr")
    try:
        clients.store.set_enrichment(world_id, event_ids, "pending", enrichment_id=enrichment_id)
        clients.workflows.start_enrichment(world_id, event_ids, enrichment_id)
    except Exception:  # the events are stored; enrichment can be retried from their pending status
        logger.exception("enrichment could not be started; events stay pending",
                         extra={"world_id": world_id, "events": len(event_ids)})
        return None
    return enrichment_id
