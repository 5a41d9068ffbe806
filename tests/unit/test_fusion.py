"""Fusion: how the brains' rankings, the text match, the signals and the turns around a document become
one score; the weights of each query intent; the keyword brain's reading of a query; the query-vector cache."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engram.model.heuristics import Heuristics
from engram.model.search import IndexDocument
from engram.retrieval.embedding_cache import query_vector
from engram.retrieval.fusion import fuse, key, relevance
from engram.retrieval.search import keyword_query
from engram.rules.relevance import effective_confidence, propagate, standardized

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
H = Heuristics()


def _doc(doc_id: str, *, kind: str = "event", conversation: str | None = None, entities: Sequence[str] = (),
         when: datetime | None = None, importance: float = 0.5, confidence: float = 1.0) -> IndexDocument:
    return IndexDocument(world_id="w", doc_id=doc_id, kind=kind, text=doc_id, conversation_id=conversation,  # type: ignore[arg-type]
                         entity_ids=list(entities), occurred_at=when or NOW, importance=importance,
                         confidence=confidence, validated_at=None if kind == "event" else when or NOW)


def _docs(*docs: IndexDocument) -> dict[str, IndexDocument]:
    return {key(d.kind, d.doc_id): d for d in docs}


# ---------------------------------------------------------------- arithmetic
def test_standardized_scores_have_mean_zero_and_unit_spread() -> None:
    z = standardized({"a": 1.0, "b": 2.0, "c": 3.0})
    assert sum(z.values()) == pytest.approx(0.0)
    assert z["c"] == pytest.approx(-z["a"]) and z["c"] == pytest.approx(1.2247, abs=1e-4)


def test_equal_scores_standardize_to_zero_and_nothing_to_nothing() -> None:
    assert standardized({"a": 4.0, "b": 4.0}) == {"a": 0.0, "b": 0.0}
    assert standardized({}) == {}


@given(st.dictionaries(st.text(max_size=3), st.floats(-1e6, 1e6), min_size=2, max_size=30))
def test_standardizing_keeps_the_order(values: dict[str, float]) -> None:
    z = standardized(values)
    for a in values:
        for b in values:
            if values[a] < values[b]:
                assert z[a] <= z[b]


def test_a_turn_next_to_a_strong_turn_gains_and_one_alone_does_not() -> None:
    """Gains are measured above the median candidate: only what stands out lifts its context."""
    scores = {"question": 5.0, "answer": 1.0, "elsewhere": 1.0, "floor": 0.0}
    out = propagate(scores, {"answer": ["question"]}, {}, neighbour_weight=0.5, group_weight=0.0)
    assert out["answer"] == pytest.approx(1.0 + 0.5 * (5.0 - 1.0))  # measured above the median, 1.0
    assert out["elsewhere"] == 1.0 and out["question"] == 5.0


def test_every_turn_of_a_strong_conversation_gains_its_share() -> None:
    scores = {"a1": 4.0, "a2": 1.0, "b1": 1.0, "floor": 0.0}
    out = propagate(scores, {}, {"a1": "A", "a2": "A", "b1": "B"}, neighbour_weight=0.0, group_weight=0.25)
    assert out["a2"] == pytest.approx(1.75) and out["a1"] == pytest.approx(4.75)
    assert out["b1"] == pytest.approx(1.0) and out["floor"] == 0.0


def test_effective_confidence_decays_from_its_last_validation_and_is_capped() -> None:
    assert effective_confidence(0.8, NOW, NOW, 180, 0.95) == pytest.approx(0.8)
    assert effective_confidence(0.8, NOW - timedelta(days=180), NOW, 180, 0.95) == pytest.approx(0.4)
    assert effective_confidence(1.0, NOW, NOW, 180, 0.95) == 0.95
    assert effective_confidence(0.7, None, NOW, 180, 0.95) == 0.7


# ---------------------------------------------------------------- the multi-signal relevance
def test_relevance_weighs_semantic_entity_recency_importance_and_reinforcement_by_the_rules() -> None:
    doc = _doc("e", entities=["ent_a"], importance=1.0)  # an event: no reinforcement count, the signal is 0.5
    assert relevance(doc, 1.0, ["ent_a"], NOW, H) == pytest.approx(0.4 + 0.25 + 0.2 + 0.1 + 0.05 * 0.5)
    assert relevance(doc, 0.0, [], NOW, H) == pytest.approx(0.2 + 0.1 + 0.05 * 0.5)


def test_recency_halves_after_30_days_for_events_and_90_for_facts() -> None:
    old_event = _doc("e", when=NOW - timedelta(days=30), importance=0.0)
    old_fact = _doc("f", kind="semantic", when=NOW - timedelta(days=90), importance=0.0)
    assert relevance(old_event, 0.0, [], NOW, H) == pytest.approx(0.1 + 0.05 * 0.5)
    fact_signal = relevance(old_fact, 0.0, [], NOW, H.with_overrides({"decay_half_life_days": 1e9}))
    assert fact_signal == pytest.approx(0.1)


def test_a_doubtful_fact_counts_less_than_a_sure_one() -> None:
    sure, doubtful = _doc("a", kind="semantic", confidence=0.9), _doc("b", kind="semantic", confidence=0.3)
    assert relevance(sure, 0.5, [], NOW, H) == pytest.approx(3 * relevance(doubtful, 0.5, [], NOW, H))


# ---------------------------------------------------------------- fusion by query intent
def _duel(intent: str) -> dict[str, float]:
    """A document only the keyword brain ranks first against one only the graph brain ranks first."""
    docs = _docs(_doc("by_keyword"), _doc("by_graph"), _doc("other"))
    rankings = {"keyword": ["event:by_keyword", "event:other"], "semantic": ["event:other"],
                "graph": ["event:by_graph", "event:other"]}
    flat = H.with_overrides({"fusion_match_weight": 0.0, "fusion_signal_weight": 0.0,
                             "search_session_weight": 0.0, "search_neighbour_weight": 0.0})
    scored = fuse(rankings, H.retrieval.fusion_weights[intent], {}, {}, docs, {}, [], NOW, flat)
    return {k.split(":")[1]: s.score for k, s in scored.items()}


def test_an_exact_name_query_trusts_the_keyword_brain_and_a_relationship_query_the_graph() -> None:
    named = _duel("exact_name")
    assert named["by_keyword"] > named["by_graph"]
    related = _duel("relationship")
    assert related["by_graph"] > related["by_keyword"]
    typed = _duel("type")
    assert typed["by_graph"] > typed["by_keyword"]


def test_the_text_match_separates_what_rrf_leaves_close() -> None:
    docs = _docs(_doc("strong"), _doc("weak"), _doc("none"))
    rankings = {"keyword": ["event:strong", "event:weak"]}
    scored = fuse(rankings, {"keyword": 1.0}, {"event:strong": 12.0, "event:weak": 1.0}, {}, docs, {}, [], NOW, H)
    rank_only = H.with_overrides({"fusion_match_weight": 0.0})
    plain = fuse(rankings, {"keyword": 1.0}, {"event:strong": 12.0, "event:weak": 1.0}, {}, docs, {}, [], NOW,
                 rank_only)
    gap = scored["event:strong"].score - scored["event:weak"].score
    assert gap > plain["event:strong"].score - plain["event:weak"].score > 0


def test_the_answer_after_a_matching_question_rises_above_an_unrelated_turn() -> None:
    docs = _docs(_doc("question", conversation="s1"), _doc("answer", conversation="s1"),
                 _doc("unrelated", conversation="s2"))
    rankings = {"keyword": ["event:question", "event:answer", "event:unrelated"]}
    keyword = {"event:question": 9.0, "event:answer": 1.0, "event:unrelated": 1.1}
    alone = fuse(rankings, {"keyword": 1.0}, keyword, {}, docs, {}, [], NOW,
                 H.with_overrides({"search_neighbour_weight": 0.0, "search_session_weight": 0.0}))
    read = fuse(rankings, {"keyword": 1.0}, keyword, {}, docs, {"event:answer": ["event:question"]}, [], NOW, H)
    assert alone["event:unrelated"].score > alone["event:answer"].score
    assert read["event:answer"].score > read["event:unrelated"].score


def test_a_document_the_query_entities_are_about_ranks_above_an_equal_one() -> None:
    docs = _docs(_doc("about", entities=["ent_dana"]), _doc("other", entities=["ent_sam"]))
    rankings = {"semantic": ["event:about", "event:other"], "keyword": ["event:other", "event:about"]}
    scored = fuse(rankings, {"semantic": 1.0, "keyword": 1.0}, {}, {}, docs, {}, ["ent_dana"], NOW, H)
    assert scored["event:about"].score > scored["event:other"].score


# ---------------------------------------------------------------- the keyword brain's query
@pytest.mark.parametrize(("query", "sent"), [
    ("What did Caroline research?", "caroline research"),
    ("Where is Dana's new office?", "dana new office"),
    ('"loves hiking" AND NOT mountains', '"loves hiking" AND NOT mountains'),
    ("speaker:bob dog", "speaker:bob dog"),
    ("hik*", "hik*"),
    ("what is it?", ""),
])
def test_a_question_is_searched_by_its_meaningful_words_and_syntax_as_written(query: str, sent: str) -> None:
    assert keyword_query(query) == sent


# ---------------------------------------------------------------- the query-vector cache
class _CountingEmbedder:
    name = "counting"
    dim = 2

    def __init__(self) -> None:
        self.calls: list[str] = []

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls += list(texts)
        return [[1.0, 0.0] for _ in texts]


def test_a_query_is_embedded_once_and_the_oldest_query_leaves_first() -> None:
    embedder = _CountingEmbedder()
    for text in ["a", "b", "a", "c", "a", "b"]:
        query_vector(embedder, text, capacity=2)
    assert embedder.calls == ["a", "b", "c", "b"]
