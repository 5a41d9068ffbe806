"""The extract and index steps on in-memory fakes of their ports, with the offline model: what a conversation
leaves as facts, episodes and edges, how facts live on (reinforced, superseded), what a rejected window leaves,
and what the keyword index learns."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta

from engram.adapters.offline.llm import OfflineLLM
from engram.enrichment.extract import ExtractPorts, extract_events
from engram.enrichment.indexing import IndexingPorts, index_pending, mark_failed
from engram.enrichment.ingest import ingest_events
from engram.enrichment.resolve import resolve_events, user_entity
from engram.errors import ExtractionRejected
from engram.model.entities import EntitySighting
from engram.model.memories import OntologyPredicate, SemanticMemory
from engram.model.world import World
from engram.ports import ExtractedTriple, ExtractionResult, LLMReply, Reference, Usage, WindowEvent
from tests.fakes.conversations import T0, said
from tests.fakes.ports import FakePorts

WORLD = World("w1")


def _extract(fakes: FakePorts, *turns: str, first: int = 1, days: int = 0, conversation: str = "c1") -> dict[str, int]:
    request = said(*turns, first=first, start=T0 + timedelta(days=days), conversation=conversation,
                   prefix="e" if conversation == "c1" else f"{conversation}-")
    ingest_events(fakes, WORLD, request)
    ids = [e.event_id for e in request.events if e.event_id]
    resolve_events(fakes, WORLD, ids)
    ports: ExtractPorts = fakes
    return extract_events(ports, WORLD, ids)


def _facts(fakes: FakePorts, predicate: str | None = None,
           statuses: Sequence[str] = ("active",)) -> list[SemanticMemory]:
    dana = user_entity(fakes, "w1", "dana")
    return fakes.store.find_facts("w1", dana.entity_id, predicate, statuses)


def test_extract_stores_a_fact_from_i_live_in_porto_with_the_offline_model() -> None:
    fakes = FakePorts()
    counts = _extract(fakes, "I live in Porto.")
    [fact] = _facts(fakes, "lives_in")
    assert (fact.object_value, fact.user_id, fact.source_event_ids) == ("Porto", "dana", ["e1"])
    assert counts["facts_created"] == 1 and counts["windows"] == 1 and counts["episodes"] == 1
    [episode] = fakes.store.t.episodes.values()
    assert episode.event_ids == ["e1"] and fact.subject_entity_id in episode.entity_ids
    assert ("w1", "e1") in fakes.store.t.event_vectors and ("w1", "e1") in fakes.store.t.context_vectors


def test_saying_it_again_reinforces_the_fact_instead_of_storing_another() -> None:
    fakes = FakePorts()
    _extract(fakes, "I live in Porto.")
    counts = _extract(fakes, "I live in Porto, by the river.", first=2, days=1)
    [fact] = _facts(fakes, "lives_in")
    assert counts["facts_reinforced"] == 1 and counts["facts_created"] == 0
    assert fact.reinforcement_count == 1 and fact.source_event_ids == ["e1", "e2"]
    assert fact.confidence > 0.9


def test_a_correction_supersedes_the_old_value_and_records_the_conflict_the_rules_settled() -> None:
    fakes = FakePorts()
    _extract(fakes, "I live in Porto.")
    _extract(fakes, "Actually, I live in Lisbon now.", first=2, days=1)
    assert [f.object_value for f in _facts(fakes, "lives_in")] == ["Lisbon"]
    [old] = _facts(fakes, "lives_in", ("superseded",))
    assert old.object_value == "Porto" and old.valid_to is not None
    [conflict] = fakes.store.list_conflicts("w1", "resolved")
    assert (conflict.strategy, conflict.resolved_by, conflict.memory_id) == ("correction", "rules", old.memory_id)


def test_a_fact_whose_object_is_an_entity_becomes_an_edge_of_the_graph() -> None:
    fakes = FakePorts()
    _extract(fakes, "I work at Acme Robotics.")
    [fact] = _facts(fakes, "works_at")
    acme = fakes.store.find_entity_by_name("w1", "Acme Robotics")
    assert acme is not None and fact.object_entity_id == acme.entity_id
    [edge] = fakes.store.relationships("w1", acme.entity_id, 1, user_id="dana")
    assert (edge.source_entity_id, edge.relation, edge.target_entity_id) == (
        fact.subject_entity_id, "works_at", acme.entity_id)
    assert edge.source_memory_ids == [fact.memory_id] and edge.evidence_event_ids == ["e1"]


def test_a_pronoun_is_linked_within_the_extraction_call_to_the_person_the_conversation_just_named() -> None:
    fakes = FakePorts()
    counts = _extract(fakes, "I had lunch with Priya Sharma today.", "She thinks the launch will slip.")
    priya = fakes.store.find_entity_by_name("w1", "Priya Sharma")
    assert priya is not None and counts["coreferences"] == 1 and counts["model_calls"] == 1
    [she] = [m for m in fakes.store.recorded_mentions("w1", ["e2"]) if m.text == "She"]
    assert (she.method, she.entity_id) == ("llm_coreference", priya.entity_id)
    assert fakes.store.find_alias("w1", "she", "dana") == []  # a pronoun is never learned as an alias


class RejectingLLM(OfflineLLM):
    """The offline model, except that it rejects the windows of one conversation as a model returning
    invalid output twice does."""

    def __init__(self, conversation_events: Sequence[str]) -> None:
        super().__init__()
        self.rejected = set(conversation_events)

    def extract(self, events: Sequence[WindowEvent], known_entities: Sequence[str], *,
                references: Sequence[Reference] = (), candidates: Sequence[EntitySighting] = (),
                predicates: Sequence[OntologyPredicate] = ()) -> LLMReply[ExtractionResult]:
        if {e.event_id for e in events} & self.rejected:
            raise ExtractionRejected("the model's output did not validate twice")
        return super().extract(events, known_entities, references=references, candidates=candidates,
                               predicates=predicates)


def test_a_window_the_model_rejects_is_marked_failed_and_the_other_windows_go_on() -> None:
    fakes = FakePorts(llm=RejectingLLM(["e1"]))
    request = said("I live in Porto.", conversation="c1")
    other = said("I work at Acme Robotics.", conversation="c2", prefix="f")
    ingest_events(fakes, WORLD, request)
    ingest_events(fakes, WORLD, other)
    resolve_events(fakes, WORLD, ["e1", "f1"])
    counts = extract_events(fakes, WORLD, ["e1", "f1"])
    assert counts["failed_events"] == 1 and counts["windows"] == 2
    failed = fakes.store.get_event("w1", "e1")
    assert failed is not None and failed.enrichment_status == "failed"
    assert failed.enrichment_error == "the model's output did not validate twice"
    assert _facts(fakes, "lives_in") == [] and [f.object_value for f in _facts(fakes, "works_at")] == ["Acme Robotics"]


def test_the_index_step_writes_what_the_outbox_holds_and_marks_the_batch_enriched() -> None:
    fakes = FakePorts()
    _extract(fakes, "I live in Porto.")
    ports: IndexingPorts = fakes
    done = index_pending(ports, "w1", ["e1"])
    assert done > 0 and fakes.store.pending_index_ops("w1", 100) == []
    indexed = {(kind, doc_id) for (_w, kind, doc_id) in fakes.index.docs}
    [fact] = _facts(fakes, "lives_in")
    assert {("event", "e1"), ("semantic", fact.memory_id), ("entity", fact.subject_entity_id)} <= indexed
    assert "e1" in [h.doc_id for h in fakes.index.search("w1", "Porto")]
    assert fakes.store.get_event("w1", "e1").enrichment_status == "enriched"  # type: ignore[union-attr]
    assert ("w1", fact.subject_entity_id) in fakes.store.t.entity_vectors  # kept current with its document


def test_the_index_step_leaves_a_failed_event_failed() -> None:
    fakes = FakePorts(llm=RejectingLLM(["e1"]))
    _extract(fakes, "I live in Porto.")
    index_pending(fakes, "w1", ["e1"])
    assert fakes.store.get_event("w1", "e1").enrichment_status == "failed"  # type: ignore[union-attr]


def test_an_enrichment_failed_for_good_leaves_its_events_stored_and_failed_with_the_cause() -> None:
    fakes = FakePorts()
    ingest_events(fakes, WORLD, said("I live in Porto.", "I work at Acme Robotics."))
    result = mark_failed(fakes, "w1", ["e1", "e2"], {"Error": "States.Timeout", "Cause": "the extract task timed out"})
    assert result == {"world_id": "w1", "event_ids": ["e1", "e2"], "status": "failed"}
    events = fakes.store.get_events("w1", ["e1", "e2"])
    assert {(e.enrichment_status, e.enrichment_error) for e in events} == {
        ("failed", "States.Timeout: the extract task timed out")}


class ReadingLLM(OfflineLLM):
    """A model that reads one third-person fact, with the entity types it saw, out of every window."""

    def extract(self, events: Sequence[WindowEvent], known_entities: Sequence[str], *,
                references: Sequence[Reference] = (), candidates: Sequence[EntitySighting] = (),
                predicates: Sequence[OntologyPredicate] = ()) -> LLMReply[ExtractionResult]:
        triple = ExtractedTriple(subject="Kalani Brandt", predicate="lives_in", object="Cork", object_is_entity=True,
                                 event_id=events[0].event_id, subject_type="person", object_type="place")
        return LLMReply(value=ExtractionResult(triples=[triple]), usage=Usage())


def test_a_name_first_met_in_a_triple_is_created_with_the_type_the_reader_saw() -> None:
    fakes = FakePorts(llm=ReadingLLM())
    _extract(fakes, "apparently kalani brandt lives in cork now")
    kalani, cork = fakes.store.find_entity_by_name("w1", "Kalani Brandt"), fakes.store.find_entity_by_name("w1", "Cork")
    assert kalani is not None and cork is not None and (kalani.entity_type, cork.entity_type) == ("person", "place")
