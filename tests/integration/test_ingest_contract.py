"""The ingest contract under stress: concurrent replays, lost enrichment starts and the sweep."""

from __future__ import annotations

import dataclasses
import random
import string
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import Any

import pytest

from engram.consolidation.run import plan
from engram.enrichment.ingest import ingest_events, sweep_stalled
from engram.model.events import IngestRequest, StoredEvent
from engram.ports.clients import Clients
from tests.fakes.workflows import RecordingWorkflows

pytestmark = pytest.mark.integration
T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


def _hundred(prefix: str) -> IngestRequest:
    return IngestRequest.model_validate({"events": [
        {"event_id": f"{prefix}-{i}", "user_id": "dana", "conversation_id": "c1", "role": "user",
         "content": f"Message number {i}: I always take the train to work.",
         "occurred_at": (T0 + timedelta(seconds=i)).isoformat()} for i in range(100)]})


def _count(clients: Clients, world: str) -> int:
    with clients.store.tx(world) as cur:  # type: ignore[attr-defined]
        cur.execute("SELECT count(*) AS n FROM chat_events WHERE world_id = %s", (world,))
        return int(cur.fetchone()["n"])


def test_ten_concurrent_replays_of_a_batch_store_it_once_and_enrich_it_once(clients: Clients) -> None:
    clients.workflows = RecordingWorkflows()
    batch = _hundred("race")
    with ThreadPoolExecutor(max_workers=5) as pool:
        responses = list(pool.map(lambda _: ingest_events(clients, clients.world("w-race"), batch), range(10)))
    assert _count(clients, "w-race") == 100
    assert sum(r.accepted for r in responses) == 100
    assert sum(r.duplicates for r in responses) == 900
    assert len(clients.workflows.enrichments) == 1  # type: ignore[attr-defined]
    assert len(clients.workflows.enrichments[0][1]) == 100  # type: ignore[attr-defined]


def test_an_id_repeated_inside_one_batch_is_stored_once_and_reported_as_a_duplicate(clients: Clients) -> None:
    clients.workflows = RecordingWorkflows()
    event = {"event_id": "twice", "user_id": "dana", "conversation_id": "c1", "role": "user", "content": "Hello"}
    response = ingest_events(clients, clients.world("w-twice"), IngestRequest.model_validate({"events": [event, event]}))
    assert [e.duplicate for e in response.events] == [False, True]
    assert _count(clients, "w-twice") == 1


def test_a_lost_enrichment_start_keeps_the_events_pending_until_the_sweep_starts_it(clients: Clients) -> None:
    clients.workflows = RecordingWorkflows(fail=True)
    response = ingest_events(clients, clients.world("w-sweep"), _hundred("lost"), now=T0)
    assert response.accepted == 100 and response.enrichment_id is None
    stored = clients.store.get_event("w-sweep", "lost-0")
    assert stored is not None and stored.enrichment_status == "pending"

    clients.workflows = RecordingWorkflows()
    early = sweep_stalled(clients, clients.world("w-sweep"), now=T0 + timedelta(seconds=10))
    assert early.events == 0  # within the grace period the original start may still be on its way
    result = sweep_stalled(clients, clients.world("w-sweep"), now=T0 + timedelta(minutes=10))
    assert result.events == 100 and len(result.enrichment_ids) == 1 and result.not_started == 0
    assert clients.workflows.enrichments[0][0] == "w-sweep"  # type: ignore[attr-defined]
    assert sorted(clients.workflows.enrichments[0][1]) == sorted(f"lost-{i}" for i in range(100))  # type: ignore[attr-defined]


def test_the_scheduled_plan_sweeps_stalled_events_of_every_world_and_failed_ones_only_on_request(
        clients: Clients) -> None:
    clients.workflows = RecordingWorkflows(fail=True)
    ingest_events(clients, clients.world("w-sched"), IngestRequest.model_validate({"events": [
        {"event_id": "s1", "user_id": "u", "conversation_id": "c", "role": "user", "content": "Hi there"}]}), now=T0)
    clients.store.set_enrichment("w-sweep", ["lost-0"], "failed", error="LLMUnavailable: overloaded")
    clients.workflows = RecordingWorkflows()
    later = datetime.now(UTC) + timedelta(hours=1)
    run = plan(clients, None, now=later)
    started_worlds = {w for w, _, _ in clients.workflows.enrichments}  # type: ignore[attr-defined]
    assert "w-sched" in started_worlds and run.enrichments_restarted >= 1
    retried = sweep_stalled(clients, clients.world("w-sweep"), include_failed=True, now=later)
    assert retried.events >= 1
    event = clients.store.get_event("w-sweep", "lost-0")
    assert event is not None and event.enrichment_status == "pending" and event.enrichment_error is None


class _Together:
    """The store, with every `insert_events` call held until all the batches of a round have reached it: the
    batches meet in the database, as concurrent requests of a busy API do."""

    def __init__(self, store: object, batches: int) -> None:
        self.store, self.barrier = store, threading.Barrier(batches, timeout=30)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)

    def insert_events(self, events: Sequence[StoredEvent]) -> list[bool]:
        self.barrier.wait()
        return self.store.insert_events(events)  # type: ignore[attr-defined, no-any-return]


def test_concurrent_batches_with_overlapping_ids_in_different_orders_store_each_event_once(clients: Clients) -> None:
    rng = random.Random(17)
    # Long turns keep each batch's transaction open long enough for the batches to meet inside it.
    words = ["".join(rng.choices(string.ascii_lowercase, k=rng.randint(2, 9))) for _ in range(2_000)]
    for round_ in range(8):
        ids = [f"overlap{round_}-{i}" for i in range(100)]
        content = {i: " ".join(rng.choices(words, k=1_500)) for i in ids}
        batches = [IngestRequest.model_validate({"events": [
            {"event_id": i, "user_id": "dana", "conversation_id": "c1", "role": "user", "content": content[i]}
            for i in rng.sample(ids, len(ids))]}) for _ in range(4)]
        meeting = dataclasses.replace(clients, store=_Together(clients.store, len(batches)),  # type: ignore[arg-type]
                                      workflows=RecordingWorkflows())
        with ThreadPoolExecutor(max_workers=len(batches)) as pool:  # no deadlock: every batch is acknowledged
            responses = list(pool.map(partial(ingest_events, meeting, meeting.world("w-overlap")), batches))
        accepted = [e.event_id for r in responses for e in r.events if not e.duplicate]
        assert sorted(accepted) == sorted(ids)  # each event stored by exactly one batch...
        assert sum(r.duplicates for r in responses) == 3 * len(ids)  # ...and flagged a duplicate in the others
    assert _count(clients, "w-overlap") == 8 * 100
