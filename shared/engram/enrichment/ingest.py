"""Ingest: validate, score, tag and store events, then start one enrichment for the new ones.

Storing never depends on enrichment: if starting the workflow fails, the events stay stored as
`pending` and can be enriched later.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime, timedelta
from itertools import groupby
from typing import Protocol

from engram.model.common import new_id, utcnow
from engram.model.events import (
    CONTENT_TYPE_BY_ROLE,
    EnrichmentStatus,
    IngestedEvent,
    IngestRequest,
    IngestResponse,
    StoredEvent,
    SweepResult,
)
from engram.model.heuristics import Heuristics
from engram.model.world import World
from engram.observability import logger
from engram.ports.events import EventStore
from engram.ports.workflows import Workflows
from engram.rules.scoring import importance
from engram.rules.tags import tags_for


class IngestPorts(Protocol):
    """The ports ingest and the sweeps use: the events, the workflows that enrich them, and the default
    heuristics (a sweep of every world reads no world's own)."""

    @property
    def store(self) -> EventStore: ...
    @property
    def workflows(self) -> Workflows: ...
    @property
    def heuristics(self) -> Heuristics: ...


def ingest_events(clients: IngestPorts, world: World, request: IngestRequest, *,
                  now: datetime | None = None) -> IngestResponse:
    """Store a batch atomically; duplicates (by event_id) are acknowledged and start nothing."""
    now = now or utcnow()
    world_id, h = world.world_id, world.heuristics
    categories = {**h.ingest.tag_keywords, **world.config.tag_categories}
    stored = []
    for e in request.events:
        content_type = e.content_type or CONTENT_TYPE_BY_ROLE[e.role]
        stored.append(StoredEvent(
            world_id=world_id, event_id=e.event_id or new_id("evt"), user_id=e.user_id,
            conversation_id=e.conversation_id, role=e.role, content=e.content, content_type=content_type,
            occurred_at=e.occurred_at or now, received_at=now, metadata=e.metadata,
            importance=importance(e.content, content_type, h),
            tags=tags_for(e.content, categories, h.ingest.tag_keyword_match),
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


WAIT_DEFAULT_S = 10.0
WAIT_MAX_S = 25.0  # under API Gateway's 29 s integration limit and the ingest function's 29 s timeout
_POLL_FIRST_S, _POLL_MAX_S = 0.2, 1.0  # reads of the batch's statuses: often at first, then once a second
_FINISHED: frozenset[EnrichmentStatus] = frozenset({"enriched", "failed"})
_LEAST_ADVANCED_FIRST: tuple[EnrichmentStatus, ...] = ("pending", "enriching", "failed", "enriched")


def await_enrichment(clients: IngestPorts, response: IngestResponse, timeout_s: float, *,
                     sleep: Callable[[float], None] = time.sleep,
                     clock: Callable[[], float] = time.monotonic) -> IngestResponse:
    """Wait until every event of an ingested batch (duplicates too: a retried batch waits for the first's
    enrichment) is enriched or failed, or `timeout_s` passes; answer the response with each event's status and the
    batch's. So a question asked right after `POST .../events?wait=true` reads what the events said."""
    ids = [e.event_id for e in response.events]
    deadline, delay = clock() + timeout_s, _POLL_FIRST_S
    while True:
        statuses = {e.event_id: e.enrichment_status for e in clients.store.get_events(response.world_id, ids)}
        left = deadline - clock()
        if set(statuses.values()) <= _FINISHED or left <= 0:
            break
        sleep(min(delay, left))
        delay = min(_POLL_MAX_S, delay * 1.5)
    return response.model_copy(update={
        "events": [e.model_copy(update={"enrichment_status": statuses.get(e.event_id)}) for e in response.events],
        "enrichment_status": batch_status(list(statuses.values())),
    })


def batch_status(statuses: list[EnrichmentStatus]) -> EnrichmentStatus | None:
    """A batch's enrichment from its events': the least advanced while some run, else failed if any failed.
    None for no events (erased while it waited)."""
    return next((status for status in _LEAST_ADVANCED_FIRST if status in statuses), None)


def sweep_stalled(clients: IngestPorts, world: World | None, *, include_failed: bool = False,
                  now: datetime | None = None) -> SweepResult:
    """Start enrichment again for events whose start was lost (still `pending` after the grace period)
    and, on request, for events whose enrichment failed. Runs on the consolidation schedule (every world)
    and on demand (`engram enrich --pending`); `None`: every world, by the default heuristics. The steps are
    idempotent, so a late original is harmless."""
    now = now or utcnow()
    world_id, h = (world.world_id, world.heuristics) if world else (None, clients.heuristics)
    statuses: list[EnrichmentStatus] = ["pending", "failed"] if include_failed else ["pending"]
    return _restart(clients, world_id, statuses, now - timedelta(seconds=h.ingest.enrichment_sweep_grace_s),
                    h.ingest.enrichment_sweep_limit, h)


def resume_interrupted(clients: IngestPorts, *, now: datetime | None = None) -> SweepResult:
    """Start enrichment again, in every world, for each event still `pending` or `enriching`: for a process
    whose workflow runtime lives in memory (the local stack), whose executions died with the process before
    it (a crash, SIGKILL). Run at its start, before it serves, when no execution of its own can be running."""
    return _restart(clients, None, ["pending", "enriching"], now or utcnow(), None, clients.heuristics)


THROTTLED = "Lambda.TooManyRequestsException"  # the state machine's name for a function's concurrency reached


def sweep_orphaned(clients: IngestPorts, *, received_before: datetime) -> SweepResult:
    """Start enrichment again, in every world, for events left behind while no enrichment runs: those still
    `pending` or `enriching` (received before `received_before`, so none whose start is under way) and those
    marked failed because their functions stayed throttled past the state machine's retries in a burst. The
    local stack runs it only when no enrichment execution is running: then the restarted batches meet free
    concurrency, so every round enriches some and none is restarted forever. Failures of any other kind stay
    `failed` for `engram enrich --pending --failed`."""
    orphaned = clients.store.stalled_events(None, ["pending", "enriching"], received_before, None)
    failed = clients.store.stalled_events(None, ["failed"], received_before, None)
    throttled = [(world, e.event_id) for world, rows in groupby(sorted(failed), key=lambda r: r[0])
                 for e in clients.store.get_events(world, [event_id for _, event_id in rows])
                 if (e.enrichment_error or "").startswith(THROTTLED)]
    return _start_batches(clients, orphaned + throttled, clients.heuristics)


def _restart(clients: IngestPorts, world_id: str | None, statuses: list[EnrichmentStatus], received_before: datetime,
             limit: int | None, h: Heuristics) -> SweepResult:
    return _start_batches(clients, clients.store.stalled_events(world_id, statuses, received_before, limit), h)


def _start_batches(clients: IngestPorts, stalled: list[tuple[str, str]], h: Heuristics) -> SweepResult:
    started: list[str] = []
    not_started = 0
    for world, rows in groupby(sorted(stalled, key=lambda r: r[0]), key=lambda r: r[0]):
        ids = [event_id for _, event_id in rows]
        for i in range(0, len(ids), h.ingest.max_events_per_batch):
            batch = ids[i:i + h.ingest.max_events_per_batch]
            enrichment_id = _start_enrichment(clients, world, batch)
            if enrichment_id is None:
                not_started += len(batch)
            else:
                started.append(enrichment_id)
    return SweepResult(events=len(stalled), enrichment_ids=started, not_started=not_started)


def _start_enrichment(clients: IngestPorts, world_id: str, event_ids: list[str]) -> str | None:
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
