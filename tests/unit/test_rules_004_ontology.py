"""The Ontology-aware memory document's rules (seed 004), row by row: the resolution cascade's thresholds, the
fact lifecycle (cap, reinforcement, passive decay, conflict strategies), the multi-signal retrieval formula and
its weights, consolidation's boost, extraction's event classes. Each table is copied from the document; the
rules table is docs/rules.md."""

from __future__ import annotations

import itertools
import math
from datetime import UTC, datetime, timedelta
from typing import get_args

import pytest

from engram.enrichment.extract import extract_events
from engram.enrichment.ingest import ingest_events
from engram.enrichment.resolve import (
    CoreferenceTask,
    ResolutionScope,
    link_references,
    resolve_events,
    resolve_name,
    user_entity,
)
from engram.model.entities import AliasSource, DomainMatch, DomainSource, EntityAlias, EntitySighting, ResolutionMethod
from engram.model.events import StoredEvent
from engram.model.heuristics import DEFAULT_HEURISTICS, Heuristics
from engram.model.memories import ConfidenceFactors, ConflictKind, ConflictStrategy
from engram.model.search import IndexDocument
from engram.model.world import World
from engram.ports import Coreference, Reference
from engram.retrieval.fusion import relevance
from engram.rules.classify import EXTRACTABLE, classify
from engram.rules.confidence import confirmed, explain, initial_factors, reinforced, stored_confidence
from engram.rules.conflicts import Side, conflict_kind, decide
from engram.rules.mentions import detect_mentions
from engram.rules.relevance import effective_confidence, jaccard
from tests.fakes.conversations import T0, said
from tests.fakes.domain import InMemoryDomain
from tests.fakes.ports import FakePorts

H = DEFAULT_HEURISTICS
NOW = datetime(2026, 3, 4, 12, 0, tzinfo=UTC)


# ---------------------------------------------------------------- every number the document names
@pytest.mark.parametrize(("heuristic", "stated"), [
    ("alias_accept", 0.85),  # alias['confidence'] > 0.85
    ("fuzzy_min", 0.7),  # similarity(ea.alias_text, $1) > 0.7
    ("fuzzy_single_accept", 0.85),  # len(fuzzy) == 1 and fuzzy[0]['score'] > 0.85
    ("disambiguation_candidates", 5),  # ... ORDER BY score DESC LIMIT 5
    ("coreference_accept", 0.7),  # llm_result.confidence > 0.7: learn_alias(..., 'coreference', ...)
    ("coreference_min", 0.0),  # the LLM's coreference is returned whatever its confidence
    ("domain_search_limit", 3),  # search_domain_database(mention, limit=3)
    ("domain_create_confidence", 0.85),  # learn_alias(..., 'domain_db', 0.85); confidence=0.85
    ("max_confidence", 0.95),  # MAX_CONFIDENCE = 0.95
    ("conflict_confidence_gap", 0.30),  # trust higher confidence if gap > 0.30
    ("conflict_recency_gap_days", 60),  # trust recency if age gap > 60 days
    ("weight_semantic", 0.4),
    ("weight_entity", 0.25),
    ("weight_recency", 0.2),
    ("weight_importance", 0.1),
    ("weight_reinforcement", 0.05),
    ("recency_half_life_days", 30),  # half_life = 30 if memory.type == 'episodic'
    ("recency_half_life_long_days", 90),  # else 90
    ("reinforcement_full_count", 5),  # min(1.0, memory.reinforcement_count / 5)
    ("reinforcement_default", 0.5),  # else: reinforce_score = 0.5
    ("consolidation_boost", 0.1),  # SET confidence = LEAST(0.95, confidence + 0.1)
])
def test_each_number_of_the_document_is_the_default_heuristic(heuristic: str, stated: float) -> None:
    assert H.flat()[heuristic] == stated


def test_the_multi_signal_weights_sum_to_one_as_in_the_document() -> None:
    r = H.retrieval
    weights = {"semantic": r.weight_semantic, "entity": r.weight_entity, "recency": r.weight_recency,
               "importance": r.weight_importance, "reinforcement": r.weight_reinforcement}
    assert weights == {"semantic": 0.4, "entity": 0.25, "recency": 0.2, "importance": 0.1, "reinforcement": 0.05}
    assert sum(weights.values()) == pytest.approx(1.0)


# ---------------------------------------------------------------- multi-signal retrieval
def _doc(kind: str = "episodic", *, age_days: float | None = None, importance: float = 0.0,
         entities: tuple[str, ...] = (), reinforcements: int = 0, confidence: float = 1.0,
         validated_days_ago: float | None = None) -> IndexDocument:
    return IndexDocument(world_id="w", doc_id="d", kind=kind, text="t",  # type: ignore[arg-type]
                         occurred_at=None if age_days is None else NOW - timedelta(days=age_days),
                         importance=importance, entity_ids=list(entities), reinforcements=reinforcements,
                         confidence=confidence,
                         validated_at=None if validated_days_ago is None else NOW - timedelta(days=validated_days_ago))


def _document_score(semantic: float, entity: float, age_days: int | None, half_life: int, importance: float,
                    reinforce: float) -> float:
    """The document's `score_memory_relevance`, written out."""
    recency = math.exp(-age_days * math.log(2) / half_life) if age_days is not None else 0.0
    return 0.4 * semantic + 0.25 * entity + 0.2 * recency + 0.1 * importance + 0.05 * reinforce


@pytest.mark.parametrize(("kind", "similarity", "entities", "age", "importance", "count", "expected"), [
    ("episodic", 0.9, ("a", "b"), 0, 0.5, 0, _document_score(0.9, 0.5, 0, 30, 0.5, 0.5)),
    ("episodic", 0.3, (), 30, 1.0, 0, _document_score(0.3, 0.0, 30, 30, 1.0, 0.5)),
    ("semantic", 0.6, ("a", "b"), 90, 0.8, 0, _document_score(0.6, 0.5, 90, 90, 0.8, 0.0)),
    ("semantic", 0.6, ("a",), 45, 0.8, 1, _document_score(0.6, 1.0, 45, 90, 0.8, 0.2)),
    ("semantic", 0.0, (), 10, 0.0, 5, _document_score(0.0, 0.0, 10, 90, 0.0, 1.0)),
    ("semantic", 0.0, (), 10, 0.0, 12, _document_score(0.0, 0.0, 10, 90, 0.0, 1.0)),
])
def test_relevance_is_the_documents_weighted_formula(kind: str, similarity: float, entities: tuple[str, ...],
                                                      age: int, importance: float, count: int,
                                                      expected: float) -> None:
    doc = _doc(kind, age_days=age, importance=importance, entities=entities, reinforcements=count)
    assert relevance(doc, similarity, ["a"], NOW, H) == pytest.approx(expected)


@pytest.mark.parametrize(("memory", "query", "expected"), [
    (("a", "b"), ("a",), 0.5),
    (("a",), ("a",), 1.0),
    (("a",), ("b",), 0.0),
    ((), ("a",), 0.0),
])
def test_entity_overlap_is_the_jaccard_index(memory: tuple[str, ...], query: tuple[str, ...], expected: float) -> None:
    assert jaccard(memory, query) == expected


def test_recency_counts_the_whole_days_of_age_as_the_document_does() -> None:
    almost_a_day = _doc("episodic", age_days=0.99)
    assert relevance(almost_a_day, 0.0, [], NOW, H) == pytest.approx(0.2 * 1.0 + 0.05 * 0.5)


def test_relevance_is_multiplied_by_the_facts_effective_confidence() -> None:
    sure = _doc("semantic", age_days=0, confidence=0.9, validated_days_ago=0)
    decayed = _doc("semantic", age_days=0, confidence=0.9, validated_days_ago=180)
    signal = 0.2 * 1.0  # recency only
    assert relevance(sure, 0.0, [], NOW, H) == pytest.approx(signal * 0.9)
    assert relevance(decayed, 0.0, [], NOW, H) == pytest.approx(signal * 0.9 * math.exp(-180 * math.log(2) / 180))


# ---------------------------------------------------------------- passive decay
@pytest.mark.parametrize(("confidence", "days_since_validation", "expected_days"), [
    (0.8, 0.0, 0), (0.8, 0.9, 0), (0.8, 1.5, 1), (0.8, 180.0, 180), (0.95, 365.0, 365),
])
def test_effective_confidence_is_confidence_times_exp_of_minus_whole_days_times_the_rate(
        confidence: float, days_since_validation: float, expected_days: int) -> None:
    rate = math.log(2) / H.extract.decay_half_life_days  # default_rate_per_day of the half-life in force
    expected = max(0.0, min(1.0, confidence * math.exp(-expected_days * rate)))
    validated = NOW - timedelta(days=days_since_validation)
    assert effective_confidence(confidence, validated, NOW, H.extract.decay_half_life_days, 1.0) == \
        pytest.approx(expected)
    why = explain(ConfidenceFactors(base=confidence), confidence, validated, NOW, H.extract.decay_half_life_days, 1.0)
    assert why.effective == pytest.approx(expected, abs=1e-4) and why.stored == confidence


# ---------------------------------------------------------------- confidence: the cap, reinforcement, consolidation
@pytest.mark.parametrize("base", [0.0, 0.7, 0.95, 1.0])
def test_the_system_never_claims_more_than_0_95(base: float) -> None:
    factors = initial_factors(base, "user", H.extract.fact_source_weights, 0.95)
    for _ in range(50):
        factors = reinforced(factors, 0.95, H.extract.reinforce_gain)
    assert stored_confidence(factors, 0.95) <= 0.95


def test_reinforcement_has_diminishing_returns() -> None:
    factors, levels = initial_factors(0.7, "user", H.extract.fact_source_weights, 0.95), [0.7]
    for _ in range(4):
        factors = reinforced(factors, 0.95, H.extract.reinforce_gain)
        levels.append(stored_confidence(factors, 0.95))
    gains = [b - a for a, b in itertools.pairwise(levels)]
    assert all(g > 0 for g in gains) and gains == sorted(gains, reverse=True)


@pytest.mark.parametrize(("before", "after"), [(0.5, 0.6), (0.7, 0.8), (0.9, 0.95), (0.95, 0.95)])
def test_a_fact_a_summary_confirms_gains_0_1_up_to_0_95(before: float, after: float) -> None:
    factors = confirmed(ConfidenceFactors(base=before), 0.95, H.consolidation.consolidation_boost)
    assert stored_confidence(factors, 0.95) == pytest.approx(after)  # LEAST(0.95, confidence + 0.1)


# ---------------------------------------------------------------- conflict resolution
def _side(confidence: float, days: int = 0, source: str = "user", correction: bool = False) -> Side:
    return Side(confidence, source, NOW + timedelta(days=days), correction)  # type: ignore[arg-type]


@pytest.mark.parametrize(("old", "new", "strategy", "winner"), [
    # Trust domain DB if conflict is memory_vs_db
    (_side(0.5, source="domain"), _side(0.95, 400), "trust_db", "old"),
    (_side(0.95, 400), _side(0.5, source="domain"), "trust_db", "new"),
    # Trust higher confidence if gap > 0.30
    (_side(0.9), _side(0.59), "confidence_gap", "old"),
    (_side(0.5), _side(0.85), "confidence_gap", "new"),
    (_side(0.9), _side(0.6, 1), "ask_user", None),  # a gap of exactly 0.30 is not above it
    # Trust recency if age gap > 60 days
    (_side(0.9), _side(0.85, 61), "trust_recent", "new"),
    (_side(0.9, 90), _side(0.85, 0), "trust_recent", "old"),
    (_side(0.9), _side(0.9, 60), "ask_user", None),  # exactly 60 days is not above it
    # Ask user if ambiguous
    (_side(0.9), _side(0.8, 3), "ask_user", None),
    # A correction is the user's answer to what would be asked, after the document's three rules
    (_side(0.9), _side(0.8, 3, correction=True), "correction", "new"),
    (_side(0.95), _side(0.6, correction=True), "confidence_gap", "old"),
    (_side(0.9, 90), _side(0.85, 0, correction=True), "trust_recent", "old"),
])
def test_a_conflict_is_settled_by_the_documents_rules_in_order(old: Side, new: Side, strategy: str,
                                                               winner: str | None) -> None:
    decision = decide(old, new, confidence_gap=0.30, recency_gap_days=60)
    assert (decision.strategy, decision.winner) == (strategy, winner)


def test_a_world_may_let_a_correction_win_before_the_gaps() -> None:
    decision = decide(_side(0.95), _side(0.6, correction=True), confidence_gap=0.30, recency_gap_days=60,
                      correction_first=True)
    assert (decision.strategy, decision.winner) == ("correction", "new")
    assert Heuristics().with_overrides({"conflict_correction_first": True}).extract.conflict_correction_first


def _loves(every_predicate: bool | None, *turns: tuple[str, int]) -> FakePorts:
    """The offline model's facts of `turns` (text, day), in a world whose `conflict_every_predicate` is given."""
    fakes = FakePorts()
    world = World("w1", H.with_overrides({} if every_predicate is None else {"conflict_every_predicate": every_predicate}))
    for n, (text, day) in enumerate(turns):
        request = said(text, first=n + 1, start=T0 + timedelta(days=day))
        ingest_events(fakes, world, request)
        resolve_events(fakes, world, [e.event_id for e in request.events if e.event_id])
        extract_events(fakes, world, [e.event_id for e in request.events if e.event_id])
    return fakes


@pytest.mark.parametrize(("every_predicate", "conflicts"), [
    (True, [("ask_user", "open")]),  # seed 004: a different value of any predicate → handle_memory_conflict
    (False, []),
    (None, []),  # the default: "loves" holds many values at once, so a second one is a second fact
])
def test_a_different_value_of_the_same_subject_and_predicate_conflicts(every_predicate: bool | None,
                                                                       conflicts: list[tuple[str, str]]) -> None:
    fakes = _loves(every_predicate, ("I love hiking.", 0), ("I love painting.", 1))
    dana = user_entity(fakes, "w1", "dana").entity_id
    assert {f.object_value for f in fakes.store.find_facts("w1", dana, "loves")} == {"hiking", "painting"}
    assert [(c.strategy, c.status) for c in fakes.store.list_conflicts("w1", None)] == conflicts


def test_a_conflict_of_any_predicate_is_settled_by_the_same_rules() -> None:
    fakes = _loves(True, ("I love hiking.", 0), ("I love painting.", 90))  # more than 60 days apart: the recent wins
    dana = user_entity(fakes, "w1", "dana").entity_id
    assert [f.object_value for f in fakes.store.find_facts("w1", dana, "loves")] == ["painting"]
    [conflict] = fakes.store.list_conflicts("w1", None)
    assert (conflict.strategy, conflict.status) == ("trust_recent", "resolved")


# ---------------------------------------------------------------- extraction: which events are read for facts
@pytest.mark.parametrize(("content", "extracted"), [
    ("Acme prefers Friday deliveries and NET30 terms.", True),  # the document's example statement
    ("Remember that Acme pays 2-3 days late.", True),  # "remember" = explicit statement
    ("Actually, Acme moved to NET45.", True),  # a correction
    ("Does Acme prefer Friday deliveries?", False),  # "?" = question
    ("Show me the open invoices", False),  # a command
    ("ok", False),  # a confirmation
])
def test_only_statements_corrections_and_explicit_preferences_are_extracted(content: str, extracted: bool) -> None:
    assert {"statement", "correction", "explicit_preference"} == EXTRACTABLE
    assert (classify(content) in EXTRACTABLE) is extracted


# ---------------------------------------------------------------- entity resolution: the cascade
@pytest.mark.parametrize(("text", "kind"), [
    ("they", "pronoun"), ("it", "pronoun"), ("them", "pronoun"), ("the customer", "description"),
])
def test_the_documents_coreference_candidates_are_mentions_waiting_for_coreference(text: str, kind: str) -> None:
    [found] = [m for m in detect_mentions("e1", f"We talked to {text} yesterday.") if m.text == text]
    assert found.kind == kind


def _scope(fakes: FakePorts, h: Heuristics = H) -> ResolutionScope:
    return ResolutionScope("w1", h, fakes.store.domain_sources("w1") if fakes.domain is not None else [])


def test_an_exact_canonical_name_resolves_with_confidence_1() -> None:
    fakes = FakePorts()
    acme = fakes.store.create_entity("w1", "Acme Corporation", "customer").entity_id
    found = resolve_name(fakes, _scope(fakes), "Acme Corporation", "u1")
    assert (found.entity_id, found.method, found.confidence) == (acme, "exact", 1.0)


@pytest.mark.parametrize(("alias_confidence", "method"), [(0.9, "alias"), (0.86, "alias"), (0.85, "fuzzy")])
def test_a_known_alias_resolves_only_above_0_85(alias_confidence: float, method: str) -> None:
    fakes = FakePorts()
    acme = fakes.store.create_entity("w1", "Acme Corporation", "customer").entity_id
    fakes.store.add_alias(EntityAlias(world_id="w1", entity_id=acme, alias="Acme", confidence=alias_confidence))
    found = resolve_name(fakes, _scope(fakes), "Acme", "u1")
    assert (found.entity_id, found.method) == (acme, method)


def test_the_users_own_alias_comes_before_the_global_one() -> None:
    fakes = FakePorts()
    kim = fakes.store.create_entity("w1", "Alex Kim", "person").entity_id
    park = fakes.store.create_entity("w1", "Alex Park", "person").entity_id
    fakes.store.add_alias(EntityAlias(world_id="w1", entity_id=kim, alias="Lex", confidence=0.95))
    fakes.store.add_alias(EntityAlias(world_id="w1", entity_id=park, alias="Lex", user_id="u1", confidence=0.9))
    assert resolve_name(fakes, _scope(fakes), "Lex", "u1").entity_id == park
    assert resolve_name(fakes, _scope(fakes), "Lex", "u2").entity_id == kim


def test_a_single_fuzzy_match_above_0_85_resolves_and_is_learned_as_an_alias() -> None:
    fakes = FakePorts()
    globex = fakes.store.create_entity("w1", "Globex Corporation", "customer").entity_id
    found = resolve_name(fakes, _scope(fakes), "Globex Corporations", "u1")
    assert (found.entity_id, found.method) == (globex, "fuzzy") and found.confidence > 0.85
    assert found.learned is not None and (found.learned.source, found.learned.user_id) == ("fuzzy", "u1")
    assert found.learned.confidence == found.confidence


def test_several_fuzzy_matches_need_the_users_disambiguation() -> None:
    fakes = FakePorts()
    one = fakes.store.create_entity("w1", "Katherine Johnson", "person").entity_id
    two = fakes.store.create_entity("w1", "Katherine Johnston", "person").entity_id
    found = resolve_name(fakes, _scope(fakes), "Katherine Johns", "u1")
    assert found.method == "disambiguation_required" and found.entity_id is None
    assert {c.entity_id for c in found.candidates} == {one, two}


@pytest.mark.parametrize(("by_confidence", "method"), [(False, "fuzzy"), (True, "created")])
def test_a_fuzzy_candidate_scores_its_trigram_similarity_whatever_its_aliass_confidence(by_confidence: bool,
                                                                                         method: str) -> None:
    fakes = FakePorts()
    globex = fakes.store.create_entity("w1", "Initech", "customer").entity_id
    fakes.store.add_alias(EntityAlias(world_id="w1", entity_id=globex, alias="Globex Corporation", confidence=0.6))
    h = Heuristics().with_overrides({"fuzzy_by_alias_confidence": by_confidence})
    # similarity 0.86 > 0.85: resolves (and is learned); times the alias's 0.6 it is no candidate (0.51 < 0.7)
    found = resolve_name(fakes, _scope(fakes, h), "Globex Corporations", "u1")
    assert found.method == method and (found.entity_id == globex) is (method == "fuzzy")


@pytest.mark.parametrize(("weak_resolves", "method"), [(False, "not_found"), (True, "fuzzy")])
def test_one_fuzzy_candidate_at_or_under_0_85_resolves_nothing_and_is_never_learned(weak_resolves: bool,
                                                                                     method: str) -> None:
    fakes = FakePorts()
    priya = fakes.store.create_entity("w1", "Priya Sharma", "person").entity_id
    h = Heuristics().with_overrides({"fuzzy_weak_single_resolves": weak_resolves})
    found = resolve_name(fakes, _scope(fakes, h), "Priya Sharme", "u1", entity_type="person")  # similarity 0.73
    assert (found.method, found.entity_id, found.learned) == (method, priya if weak_resolves else None, None)
    assert len(fakes.store.list_entities("w1", "Priya", 10)) == 1  # no entity made of a near miss


CUSTOMERS = DomainSource(entity_type="customer", source_table="customers", key_column="id", name_column="name")


def _domain(*refs: str) -> FakePorts:
    fakes = FakePorts(domain=InMemoryDomain([DomainMatch(entity_type="customer", name="Acme Corporation",
                                                         external_ref=r) for r in refs]))
    fakes.store.upsert_domain_source("w1", CUSTOMERS)
    return fakes


def test_a_domain_match_creates_the_entity_lazily_at_0_85_with_its_names_alias_at_1_0() -> None:
    fakes = _domain("customers:42")
    found = resolve_name(fakes, _scope(fakes), "Acme Corporation", "u1")
    assert (found.method, found.confidence) == ("domain_db", 0.85)
    entity = fakes.store.find_entity_by_external_ref("w1", "customers:42")
    assert entity is not None and found.entity_id == entity.entity_id and entity.entity_type == "customer"
    aliases = {(a.alias, a.confidence) for a in fakes.store.entity_aliases("w1", entity.entity_id, "u1")}
    assert ("Acme Corporation", 1.0) in aliases


def test_of_several_domain_matches_the_first_becomes_the_entity() -> None:
    fakes = _domain("customers:1", "customers:2", "customers:3", "customers:4")
    found = resolve_name(fakes, _scope(fakes), "Acme Corporation", "u1")
    assert found.method == "domain_db"
    assert fakes.store.find_entity_by_external_ref("w1", "customers:1").entity_id == found.entity_id  # type: ignore[union-attr]
    assert fakes.store.find_entity_by_external_ref("w1", "customers:2") is None
    assert fakes.domain.asked == ["Acme Corporation"]  # type: ignore[union-attr]


def test_a_world_may_ask_the_user_between_several_domain_rows() -> None:
    fakes = _domain("customers:1", "customers:2")
    asking = Heuristics().with_overrides({"domain_ask_between_rows": True})
    found = resolve_name(fakes, _scope(fakes, asking), "Acme Corporation", "u1")
    assert found.method == "disambiguation_required" and len(found.candidates) == 2


def test_one_weak_fuzzy_candidate_lets_the_cascade_go_on_to_the_domain_database() -> None:
    fakes = FakePorts(domain=InMemoryDomain([DomainMatch(entity_type="customer", name="Priya Sharme",
                                                         external_ref="customers:7")]))
    fakes.store.upsert_domain_source("w1", CUSTOMERS)
    fakes.store.create_entity("w1", "Priya Sharma", "person")
    found = resolve_name(fakes, _scope(fakes), "Priya Sharme", "u1", entity_type="person")
    assert (found.method, found.confidence) == ("domain_db", 0.85)


@pytest.mark.parametrize(("setting", "with_domain", "method"), [
    (None, True, "not_found"),  # return ResolutionResult(entity_id=None, confidence=0.0, method='not_found')
    (None, False, "created"),  # no domain database to create entities from: the mention makes it
    ("always", True, "created"),
    ("never", False, "not_found"),
])
def test_a_name_nothing_resolves_is_not_found_where_a_domain_database_could_have_known_it(
        setting: str | None, with_domain: bool, method: str) -> None:
    fakes = _domain("customers:42") if with_domain else FakePorts()
    h = Heuristics().with_overrides({"create_unknown_names": setting} if setting else {})
    found = resolve_name(fakes, _scope(fakes, h), "Zorblax Industries", "u1", entity_type="organization")
    assert (found.method, found.entity_id is None, found.confidence) == (
        method, method == "not_found", 0.0 if method == "not_found" else 1.0)


def _coreference(fakes: FakePorts, kind: str, text: str, confidence: float, h: Heuristics = H) -> list[EntityAlias]:
    acme = fakes.store.create_entity("w1", "Acme Corporation", "customer")
    task = CoreferenceTask([Reference(reference_id="e1@0", event_id="e1", text=text, kind=kind, start=0)],  # type: ignore[arg-type]
                           [EntitySighting(entity_id=acme.entity_id, name=acme.name, entity_type="customer")],
                           {"e1@0": "men_1"})
    event = StoredEvent(world_id="w1", event_id="e1", user_id="u1", conversation_id="c1", role="user", content=text,
                        content_type="userinput", occurred_at=NOW, received_at=NOW, importance=0.4)
    links = link_references(fakes, _scope(fakes, h), [event], task,
                            [Coreference(reference_id="e1@0", entity_id=acme.entity_id, confidence=confidence)])
    assert links == (1 if confidence >= h.resolve.coreference_min else 0)
    return [a for a in fakes.store.entity_aliases("w1", acme.entity_id, "u1") if a.source == "coreference"]


@pytest.mark.parametrize(("confidence", "learned"), [(0.71, True), (0.7, False), (0.3, False)])
def test_a_coreference_is_taken_at_any_confidence_and_learned_above_0_7(confidence: float, learned: bool) -> None:
    aliases = _coreference(FakePorts(), "description", "the customer", confidence)
    assert bool(aliases) is learned


def test_a_world_may_leave_an_unsure_coreference_unresolved() -> None:
    _coreference(FakePorts(), "description", "the customer", 0.3, Heuristics().with_overrides({"coreference_min": 0.5}))


# ---------------------------------------------------------------- the document's names (migration 0025)
# ResolutionResult(method=...) as 1. Entity Resolution names them; engram's extensions beside them.
DOCUMENT_METHODS = ("exact", "alias", "fuzzy", "llm_coreference", "domain_db", "no_candidates", "not_found")


@pytest.mark.parametrize("method", DOCUMENT_METHODS)
def test_every_resolution_method_the_document_names_is_one_engram_records(method: str) -> None:
    assert method in get_args(ResolutionMethod)


def test_engram_records_no_other_method_but_its_three_extensions() -> None:
    assert set(get_args(ResolutionMethod)) - set(DOCUMENT_METHODS) == {"created", "disambiguation_required", "user"}


@pytest.mark.parametrize(("source", "in_engram"), [
    ("fuzzy", True), ("coreference", True), ("domain_db", True),  # learn_alias(mention, entity, user_id, <source>, ..)
    ("domain", False),  # engram's name before migration 0025
])
def test_an_alias_is_learned_with_the_documents_learn_alias_sources(source: str, in_engram: bool) -> None:
    assert (source in get_args(AliasSource)) is in_engram


def _conversation(*turns: str) -> tuple[FakePorts, list[str]]:
    fakes, world, request = FakePorts(), World("w1", H), said(*turns)
    ingest_events(fakes, world, request)
    ids = [e.event_id for e in request.events if e.event_id]
    resolve_events(fakes, world, ids)
    extract_events(fakes, world, ids)
    return fakes, ids


@pytest.mark.parametrize(("turns", "text", "method"), [
    (("I met Priya Sharma.", "She was upbeat."), "She", "llm_coreference"),  # the model linked it
    (("They called twice.",), "They", "no_candidates"),  # no recent entity to link it to
])
def test_a_reference_is_resolved_by_llm_coreference_or_has_no_candidates(turns: tuple[str, ...], text: str,
                                                                         method: str) -> None:
    fakes, ids = _conversation(*turns)
    [found] = [m for m in fakes.store.recorded_mentions("w1", ids) if m.text == text]
    assert found.method == method and (found.entity_id is None) is (method == "no_candidates")


@pytest.mark.parametrize(("old", "new", "same_predicate", "kind"), [
    ("user", "user", True, "memory_vs_memory"),  # conflict_type='memory_vs_memory', same predicate
    ("reported", "user", True, "memory_vs_memory"),
    ("domain", "user", True, "memory_vs_db"),  # conflict_type='memory_vs_db': the domain database's value
    ("user", "domain", True, "memory_vs_db"),
    ("user", "user", False, "semantic_conflict"),  # conflict_type='semantic_conflict': across predicates
    ("domain", "user", False, "semantic_conflict"),
])
def test_a_conflict_has_the_documents_conflict_type(old: str, new: str, same_predicate: bool, kind: str) -> None:
    assert conflict_kind(old, new, same_predicate=same_predicate) == kind  # type: ignore[arg-type]
    assert kind in get_args(ConflictKind)


@pytest.mark.parametrize("strategy", ["trust_recent", "trust_db", "ask_user"])
def test_every_resolution_strategy_the_document_names_is_one_engram_records(strategy: str) -> None:
    assert strategy in get_args(ConflictStrategy)


def test_engram_settles_by_no_other_strategy_but_its_extensions() -> None:
    extensions = set(get_args(ConflictStrategy)) - {"trust_recent", "trust_db", "ask_user"}
    assert extensions == {"confidence_gap", "correction", "change", "history"}
    assert set(get_args(ConflictKind)) == {"memory_vs_memory", "memory_vs_db", "semantic_conflict"}
