"""Ingest, resolve, extract and index on the real parts: what a conversation leaves in memory."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from engram.enrichment.ingest import ingest_events
from engram.model.events import IngestRequest
from engram.ports.clients import Clients
from tests.builder import enrich

pytestmark = pytest.mark.integration
T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


def _batch(*turns: tuple[str, str, str], conversation: str = "c1", user: str = "dana", start: datetime = T0):
    return IngestRequest.model_validate({"events": [
        {"event_id": eid, "user_id": user, "conversation_id": conversation, "role": role, "content": text,
         "occurred_at": (start + timedelta(minutes=i)).isoformat()}
        for i, (eid, role, text) in enumerate(turns)]})


def test_ingest_scores_tags_and_stores_each_event_and_starts_one_enrichment(clients: Clients) -> None:
    response = ingest_events(clients, clients.world("w1"), _batch(
        ("e1", "user", "Hi! My name is Dana and I live in Lisbon."),
        ("e2", "assistant", "Nice to meet you, Dana. What's the weather like?"),
    ))
    assert response.accepted == 2 and response.duplicates == 0
    first, second = response.events
    assert first.importance == pytest.approx(0.6)  # userinput 0.4 + keyword boost 0.2
    assert {"greeting", "personal"} <= set(first.tags)
    assert {"weather", "question"} <= set(second.tags)
    assert clients.workflows.enrichments == [("w1", ["e1", "e2"], response.enrichment_id)]  # type: ignore[attr-defined]


def test_a_replay_is_a_duplicate_and_starts_no_second_enrichment(clients: Clients) -> None:
    started = len(clients.workflows.enrichments)  # type: ignore[attr-defined]
    response = ingest_events(clients, clients.world("w1"), _batch(("e1", "user", "Hi! My name is Dana and I live in Lisbon.")))
    assert response.events[0].duplicate is True and response.enrichment_id is None
    assert len(clients.workflows.enrichments) == started  # type: ignore[attr-defined]


def test_enrichment_builds_entities_facts_and_an_index_that_finds_them(clients: Clients) -> None:
    enrich(clients, "w1", ["e1", "e2"])
    dana = clients.store.find_entity_by_name("w1", "dana")
    assert dana is not None
    facts = {(f.predicate, f.object_value) for f in clients.store.find_facts("w1", dana.entity_id)}
    assert ("lives_in", "Lisbon") in facts
    assert clients.store.get_event("w1", "e1").enrichment_status == "enriched"  # type: ignore[union-attr]
    assert clients.store.pending_index_ops("w1", 10) == []
    assert "e1" in {h.doc_id for h in clients.index.search("w1", "Lisbon")}


def test_saying_it_again_reinforces_the_fact_instead_of_duplicating_it(clients: Clients) -> None:
    ingest_events(clients, clients.world("w1"), _batch(("e3", "user", "I live in Lisbon, by the river."), start=T0 + timedelta(days=1)))
    enrich(clients, "w1", ["e3"])
    dana = clients.store.find_entity_by_name("w1", "dana")
    [fact] = clients.store.find_facts("w1", dana.entity_id, "lives_in")  # type: ignore[union-attr]
    # 0.9 closes 0.3 of its gap to the 0.95 cap: 0.915.
    assert fact.reinforcement_count == 1 and fact.confidence == pytest.approx(0.915)
    assert fact.source_event_ids == ["e1", "e3"]
    assert fact.factors is not None and fact.factors.reinforcement == pytest.approx(0.015)


def test_a_correction_supersedes_the_old_value_and_records_why(clients: Clients) -> None:
    ingest_events(clients, clients.world("w1"), _batch(("e4", "user", "Actually, I live in Porto now."), start=T0 + timedelta(days=2)))
    enrich(clients, "w1", ["e4"])
    dana = clients.store.find_entity_by_name("w1", "dana")
    active = clients.store.find_facts("w1", dana.entity_id, "lives_in")  # type: ignore[union-attr]
    assert [f.object_value for f in active] == ["Porto"]
    [conflict] = clients.store.list_conflicts("w1", "resolved")
    assert conflict.strategy == "correction"


def test_close_contradictions_stay_open_for_the_user(clients: Clients) -> None:
    ingest_events(clients, clients.world("w1"), _batch(("e5", "user", "I work at Acme Robotics."),
                                        ("e6", "user", "I work at Globex."), start=T0 + timedelta(days=3)))
    enrich(clients, "w1", ["e5", "e6"])
    assert [c.strategy for c in clients.store.list_conflicts("w1", "open")] == ["ask_user"]


def test_re_running_enrichment_changes_nothing(clients: Clients) -> None:
    before = clients.store.user_memories("w1", "dana", "semantic", 100)
    enrich(clients, "w1", ["e1", "e2", "e3", "e4", "e5", "e6"])
    after = clients.store.user_memories("w1", "dana", "semantic", 100)
    assert sorted((m.memory_id, m.confidence) for m in before) == sorted((m.memory_id, m.confidence) for m in after)


def test_another_world_sees_none_of_it(clients: Clients) -> None:
    assert clients.store.find_entity_by_name("w2", "dana") is None
    assert clients.index.search("w2", "Lisbon") == []
