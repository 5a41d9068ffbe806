"""Ingest and the sweeps on in-memory fakes of their ports (the events and the workflows): what is stored,
what is acknowledged as a replay, and which enrichments start."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import pytest

from engram.enrichment.ingest import (
    THROTTLED,
    IngestPorts,
    await_enrichment,
    batch_status,
    ingest_events,
    resume_interrupted,
    sweep_orphaned,
    sweep_stalled,
)
from engram.errors import EventIdConflict
from engram.model.events import IngestRequest
from engram.model.world import World
from tests.fakes.conversations import T0, said
from tests.fakes.ports import FakePorts
from tests.fakes.workflows import RecordingWorkflows

WORLD = World("w1")


def test_ingest_stores_the_batch_scored_and_tagged_and_starts_one_enrichment_for_it() -> None:
    fakes = FakePorts()
    ports: IngestPorts = fakes
    response = ingest_events(ports, WORLD, said("Hi! My name is Dana and I live in Lisbon.",
                                                ("assistant", "Nice to meet you. What's the weather like?")), now=T0)
    assert (response.accepted, response.duplicates) == (2, 0)
    stored = fakes.store.get_events("w1", ["e1", "e2"])
    assert [e.enrichment_status for e in stored] == ["pending", "pending"]
    assert {"greeting", "personal"} <= set(stored[0].tags) and stored[0].importance > stored[1].importance
    assert fakes.workflows.enrichments == [("w1", ["e1", "e2"], response.enrichment_id)]
    assert {e.enrichment_id for e in stored} == {response.enrichment_id}


def test_a_replayed_event_is_acknowledged_as_a_duplicate_and_only_the_new_one_is_enriched() -> None:
    fakes = FakePorts()
    first = ingest_events(fakes, WORLD, said("I live in Lisbon."))
    again = ingest_events(fakes, WORLD, said("I live in Lisbon.", "I work at Acme Robotics."))
    assert (again.accepted, again.duplicates) == (1, 1)
    replay, new = again.events
    assert replay.duplicate and replay.enrichment_id == first.enrichment_id
    assert not new.duplicate and new.enrichment_id == again.enrichment_id
    assert [ids for _w, ids, _e in fakes.workflows.enrichments] == [["e1"], ["e2"]]


def test_a_batch_of_replays_starts_no_enrichment() -> None:
    fakes = FakePorts()
    ingest_events(fakes, WORLD, said("I live in Lisbon."))
    again = ingest_events(fakes, WORLD, said("I live in Lisbon."))
    assert again.enrichment_id is None and len(fakes.workflows.enrichments) == 1


def test_an_event_id_sent_again_with_other_content_refuses_the_whole_batch_naming_it() -> None:
    fakes = FakePorts()
    ingest_events(fakes, WORLD, said("I live in Lisbon.", "I work at Acme Robotics."))
    with pytest.raises(EventIdConflict) as refused:
        ingest_events(fakes, WORLD, said("I live in Porto.", "I work at Acme Robotics.", "I have a cat."))
    assert (refused.value.status, refused.value.code, refused.value.details) == (409, "event_id_conflict",
                                                                                 {"event_ids": ["e1"]})
    assert "e1" in refused.value.message
    assert [e.content for e in fakes.store.get_events("w1", ["e1", "e2", "e3"])] == [
        "I live in Lisbon.", "I work at Acme Robotics."]
    assert len(fakes.workflows.enrichments) == 1


def test_another_speaker_conversation_or_role_under_a_stored_event_id_is_a_conflict_too() -> None:
    fakes = FakePorts()
    ingest_events(fakes, WORLD, said("I live in Lisbon."))
    for other in (said("I live in Lisbon.", user="sam"), said("I live in Lisbon.", conversation="c2"),
                  said(("assistant", "I live in Lisbon."))):
        with pytest.raises(EventIdConflict):
            ingest_events(fakes, WORLD, other)
    assert len(fakes.store.t.events) == 1


def test_an_event_id_repeated_with_other_content_inside_one_batch_stores_nothing() -> None:
    fakes = FakePorts()
    batch = said("I live in Lisbon.", "I have a cat.", "I live in Porto.", prefix="x")
    repeated = IngestRequest(events=[batch.events[0], batch.events[1],
                                     batch.events[2].model_copy(update={"event_id": "x1"})])
    with pytest.raises(EventIdConflict) as refused:
        ingest_events(fakes, WORLD, repeated)
    assert refused.value.details == {"event_ids": ["x1"]} and fakes.store.t.events == {}


def test_a_replay_sent_at_another_time_or_with_other_metadata_is_still_a_duplicate() -> None:
    fakes = FakePorts()
    ingest_events(fakes, WORLD, said("I live in Lisbon."))
    replay = said("I live in Lisbon.", start=T0 + timedelta(hours=1))
    replay = IngestRequest(events=[replay.events[0].model_copy(update={"metadata": {"retry": 1}})])
    again = ingest_events(fakes, WORLD, replay)
    assert (again.accepted, again.duplicates) == (0, 1)


def test_the_same_event_id_in_another_world_is_another_event() -> None:
    fakes = FakePorts()
    ingest_events(fakes, WORLD, said("I live in Lisbon."))
    other = ingest_events(fakes, World("w2"), said("I live in Porto."))
    assert (other.accepted, other.duplicates) == (1, 0)


def test_the_worlds_are_listed_with_their_counts_the_most_recently_active_first() -> None:
    fakes = FakePorts()
    ingest_events(fakes, WORLD, said("I live in Lisbon.", "Hello.", user="dana"))
    ingest_events(fakes, WORLD, said("I am Sam.", user="sam", conversation="c2", prefix="s"))
    ingest_events(fakes, World("w2"), said("Hi.", start=T0 + timedelta(days=1)))
    listed = fakes.store.worlds(None)
    assert [(w.world_id, w.events, w.users, w.conversations) for w in listed] == [("w2", 1, 1, 1), ("w1", 3, 2, 2)]
    assert [w.world_id for w in fakes.store.worlds(["w1", "nowhere"])] == ["w1"]
    assert fakes.store.has_events("w1") and not fakes.store.has_events("nowhere")


def test_a_failed_workflow_start_leaves_the_events_stored_and_pending() -> None:
    fakes = FakePorts(workflows=RecordingWorkflows(fail=True))
    response = ingest_events(fakes, WORLD, said("I live in Lisbon.", "I work at Acme Robotics."), now=T0)
    assert response.accepted == 2 and response.enrichment_id is None
    assert [e.enrichment_status for e in fakes.store.get_events("w1", ["e1", "e2"])] == ["pending", "pending"]
    assert fakes.workflows.enrichments == []


def test_the_sweep_starts_enrichment_again_for_events_whose_start_was_lost() -> None:
    fakes = FakePorts(workflows=RecordingWorkflows(fail=True))
    ingest_events(fakes, WORLD, said("I live in Lisbon.", "I work at Acme Robotics."), now=T0)
    fakes.workflows.fail = False
    too_soon = sweep_stalled(fakes, WORLD, now=T0 + timedelta(seconds=10))
    assert too_soon.events == 0 and fakes.workflows.enrichments == []
    swept = sweep_stalled(fakes, WORLD, now=T0 + timedelta(hours=1))
    assert (swept.events, swept.not_started) == (2, 0)
    assert fakes.workflows.enrichments == [("w1", ["e1", "e2"], swept.enrichment_ids[0])]


def test_failed_events_are_swept_only_when_asked_for() -> None:
    fakes = FakePorts()
    ingest_events(fakes, WORLD, said("I live in Lisbon."), now=T0)
    fakes.store.set_enrichment("w1", ["e1"], "failed", error="ExtractionRejected: invalid output")
    later = T0 + timedelta(hours=1)
    assert sweep_stalled(fakes, WORLD, now=later).events == 0
    assert sweep_stalled(fakes, WORLD, include_failed=True, now=later).events == 1
    assert fakes.workflows.enrichments[-1][1] == ["e1"]


def test_a_restart_resumes_every_worlds_pending_and_enriching_events() -> None:
    fakes = FakePorts()
    ingest_events(fakes, World("w1"), said("I live in Lisbon."), now=T0)
    ingest_events(fakes, World("w2"), said("I live in Porto.", "I work at Acme Robotics."), now=T0)
    fakes.store.set_enrichment("w2", ["e2"], "enriching")
    fakes.store.set_enrichment("w2", ["e1"], "enriched")
    resumed = resume_interrupted(fakes, now=T0 + timedelta(seconds=1))
    assert resumed.events == 2 and len(resumed.enrichment_ids) == 2
    assert sorted((w, ids) for w, ids, _e in fakes.workflows.enrichments[-2:]) == [("w1", ["e1"]), ("w2", ["e2"])]


def test_events_failed_by_throttling_are_restarted_and_other_failures_are_left_failed() -> None:
    fakes = FakePorts()
    ingest_events(fakes, WORLD, said("I live in Lisbon.", "I work at Acme Robotics."), now=T0)
    fakes.store.set_enrichment("w1", ["e1"], "failed", error=f"{THROTTLED}: Rate Exceeded.")
    fakes.store.set_enrichment("w1", ["e2"], "failed", error="ExtractionRejected: invalid output")
    swept = sweep_orphaned(fakes, received_before=T0 + timedelta(seconds=1))
    assert swept.events == 1
    assert fakes.workflows.enrichments[-1][1] == ["e1"]
    assert fakes.store.get_event("w1", "e2").enrichment_status == "failed"  # type: ignore[union-attr]


class _Clock:
    """A clock that moves only when the code under test sleeps; `on_sleep` runs at each sleep."""

    def __init__(self, on_sleep: Callable[[int], None] = lambda n: None) -> None:
        self.now, self.sleeps, self.on_sleep = 0.0, list[float](), on_sleep

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds
        self.on_sleep(len(self.sleeps))

    def __call__(self) -> float:
        return self.now


def test_waiting_answers_once_every_event_of_the_batch_is_enriched_with_each_status() -> None:
    fakes = FakePorts()
    response = ingest_events(fakes, WORLD, said("I live in Lisbon.", "I work at Acme Robotics."))

    def enrich_at_the_third_sleep(n: int) -> None:
        if n == 3:
            fakes.store.set_enrichment("w1", ["e1", "e2"], "enriched")

    clock = _Clock(enrich_at_the_third_sleep)
    waited = await_enrichment(fakes, response, 10, sleep=clock.sleep, clock=clock)
    assert waited.enrichment_status == "enriched"
    assert [e.enrichment_status for e in waited.events] == ["enriched", "enriched"]
    assert clock.sleeps == pytest.approx([0.2, 0.3, 0.45])  # reads often at first


def test_waiting_stops_at_the_timeout_with_the_least_advanced_status() -> None:
    fakes = FakePorts()
    response = ingest_events(fakes, WORLD, said("I live in Lisbon.", "I work at Acme Robotics."))
    fakes.store.set_enrichment("w1", ["e1"], "enriching")
    clock = _Clock()
    waited = await_enrichment(fakes, response, 5, sleep=clock.sleep, clock=clock)
    assert waited.enrichment_status == "pending"
    assert clock.now == 5 and max(clock.sleeps) == 1.0  # never past the timeout, at most a second between reads


def test_a_replayed_batch_already_enriched_answers_at_once() -> None:
    fakes = FakePorts()
    ingest_events(fakes, WORLD, said("I live in Lisbon."))
    fakes.store.set_enrichment("w1", ["e1"], "failed", error="boom")
    again = ingest_events(fakes, WORLD, said("I live in Lisbon."))
    clock = _Clock()
    waited = await_enrichment(fakes, again, 10, sleep=clock.sleep, clock=clock)
    assert (waited.enrichment_status, clock.sleeps) == ("failed", [])


def test_a_batch_is_failed_once_finished_if_any_event_failed() -> None:
    assert batch_status(["enriched", "failed"]) == "failed"
    assert batch_status(["enriched", "enriching", "failed"]) == "enriching"
    assert batch_status(["enriched"]) == "enriched"
    assert batch_status([]) is None
