"""The score's calibration across world sizes: the pool map (monotone in the raw score, higher in a smaller pool),
its fit, and LoCoMo's small worlds (a question's candidates cut to a few sessions and ranked again)."""

from __future__ import annotations

import random
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pytest

from engram.bench import calibration
from engram.model.heuristics import Heuristics
from engram.model.search import IndexDocument
from engram.retrieval.features import Query
from engram.retrieval.fusion import key
from engram.retrieval.ranker import Model, PoolMap, rank, recording, relevant, shipped

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
H = Heuristics()


def _doc(doc_id: str, *, kind: str = "event", events: tuple[str, ...] = ()) -> IndexDocument:
    return IndexDocument(world_id="w", doc_id=doc_id, kind=kind, text=f"text of {doc_id}",  # type: ignore[arg-type]
                         conversation_id=f"session_{doc_id[1]}" if kind == "event" else None,
                         event_ids=list(events), occurred_at=NOW)


def test_the_pool_map_keeps_the_order_and_scores_a_hit_higher_in_a_smaller_pool() -> None:
    pool = PoolMap(slope=1.5, by_size=-0.9, slope_by_size=-0.09, bias=5.2)
    isotonic = np.linspace(0.0, 1.0, 501)
    for size in (1, 5, 20, 350, 10_000, 10**9):  # the slope stays positive however large the pool
        assert np.all(np.diff(pool.probability(isotonic, size)) >= 0.0)
    small, large = pool.probability(np.array([0.05]), 20)[0], pool.probability(np.array([0.05]), 350)[0]
    assert small > 2 * large and 0.0 < large < small < 1.0
    assert PoolMap.read(pool.document()) == pool


def test_the_shipped_score_of_the_same_raw_score_is_higher_among_twenty_candidates() -> None:
    model = shipped()
    assert model.pool is not None
    raw = np.linspace(-10.0, 10.0, 2001)
    for size in (10, 20, 60, 350, 1000):
        p = model.probability(raw, size)
        assert np.all(np.diff(p) >= 0.0) and p.min() >= 0.0 and p.max() <= 1.0
    top = np.array([model.calibration_x[-5]])
    assert model.probability(top, 20)[0] > model.probability(top, 350)[0]
    # In LoCoMo's own pools the map stays near the isotonic fit it was measured by.
    assert abs(model.probability(top, 350)[0] - model.probability(top)[0]) < 0.1


def test_the_fit_finds_how_much_more_a_score_means_in_a_small_pool() -> None:
    pytest.importorskip("scipy.optimize")
    rng = np.random.default_rng(7)
    isotonic = rng.uniform(0.001, 0.6, 40_000)
    size = rng.choice([15.0, 40.0, 350.0], 40_000)
    truth = PoolMap(slope=1.0, by_size=-1.0, slope_by_size=0.0, bias=np.log1p(350.0))  # no change at 350
    chance = np.empty(40_000)
    for n in (15, 40, 350):
        chance[size == n] = truth.probability(isotonic[size == n], n)
    labels = (rng.random(40_000) < chance).astype(float)
    fitted = calibration.fit(isotonic, size, labels)
    assert fitted.by_size == pytest.approx(-1.0, abs=0.35) and fitted.slope == pytest.approx(1.0, abs=0.35)
    for n in (15, 350):
        got, want = fitted.probability(np.array([0.1]), n)[0], truth.probability(np.array([0.1]), n)[0]
        assert got == pytest.approx(want, rel=0.15)


def test_a_learned_ranking_scores_with_its_pool_size_and_keeps_the_trees_order() -> None:
    docs = {key("event", f"D1:{i}"): _doc(f"D1:{i}") for i in range(1, 7)}
    rankings = {"semantic": list(docs)}
    similarity = {k: 0.9 - 0.1 * i for i, k in enumerate(docs)}
    document: dict[str, Any] = {"feature_names": ["semantic.rr"], "calibration": {"x": [0.0, 1.0], "y": [0.001, 0.2]},
                "tree_info": [{"tree_structure": {"split_feature": 0, "threshold": 0.4, "left_child": {
                    "leaf_value": 0.0}, "right_child": {"leaf_value": 1.0}}}]}
    plain = Model(document)
    pooled = Model({**document, "calibration": {**document["calibration"], "pool": PoolMap(
        1.0, -1.0, 0.0, float(np.log1p(350.0))).document()}})
    query = Query("semantic", [])
    before = rank(rankings, {"semantic": 1.0}, {}, similarity, docs, {}, query, NOW, H, model=plain)
    after = rank(rankings, {"semantic": 1.0}, {}, similarity, docs, {}, query, NOW, H, model=pooled)
    assert relevant(after, H) == relevant(before, H)
    best = relevant(after, H)[0]
    # Six candidates, not 350: the best hit's 0.2 of LoCoMo's pools means about 0.9 here.
    assert before[best].score == pytest.approx(0.2) and after[best].score > 0.85


def test_a_small_world_keeps_its_sessions_documents_and_ranks_them_again() -> None:
    docs = {key(d.kind, d.doc_id): d for d in (
        _doc("D1:1"), _doc("D1:2"), _doc("D2:1"), _doc("D2:2"),
        _doc("f1", kind="semantic", events=("D1:1",)), _doc("f2", kind="semantic", events=("D1:2", "D2:1")),
        _doc("dana", kind="entity"))}
    rankings = {"semantic": ["event:D2:1", "event:D1:2", "semantic:f1", "event:D1:1", "event:D3:4"],
                "keyword": ["event:D2:2", "event:D1:1"]}
    with recording() as samples:
        rank(rankings, {"semantic": 1.0, "keyword": 1.0}, {"event:D2:2": 3.0, "event:D1:1": 1.0},
             {k: 0.5 for k in docs}, docs, {"event:D1:1": ["event:D1:2"]}, Query("semantic", []), NOW,
             H.with_overrides({"ranker": "fusion"}))
    cut = calibration.cut(samples[0], frozenset({1}))
    assert cut is not None
    assert set(cut.keys) == {"event:D1:1", "event:D1:2", "semantic:f1", "entity:dana"}  # f2 cites session 2 too
    at = {k: i for i, k in enumerate(cut.keys)}
    assert cut.columns["semantic.rr"][at["event:D1:2"]] == 1.0  # first of the world's documents now
    assert cut.columns["keyword.rr"][at["event:D1:1"]] == 1.0
    assert cut.columns["query.candidates"][0] == pytest.approx(np.log1p(4))
    assert calibration.cut(samples[0], frozenset({9})) is not None  # the entity is in every world
    assert calibration.session_of("D12:3") == 12 and calibration.session_of("semantic-1") is None


def test_a_small_world_is_asked_its_own_questions_and_half_as_many_answered_elsewhere() -> None:
    questions = [(0, frozenset({1})), (1, frozenset({1, 2})), (2, frozenset({2})), (3, frozenset({3})),
                 (4, frozenset({4})), (5, frozenset({1, 3})), (6, frozenset())]
    asked = calibration.asked(questions, frozenset({1, 2}), random.Random(1))
    answerable = [i for i, a in asked if a]
    unrelated = [i for i, a in asked if not a]
    assert answerable == [0, 1, 2] and len(unrelated) == 2 and set(unrelated) <= {3, 4}
    assert [sorted(w) for w in calibration.worlds([1, 2, 3, 4])] == [[1], [2], [3], [4], [1, 2, 3]]


def test_reliability_and_its_expected_error() -> None:
    scores = np.array([0.02, 0.02, 0.5, 0.5])
    labels = np.array([0.0, 0.0, 1.0, 0.0])
    rows = calibration.reliability(scores, labels)
    assert [r["candidates"] for r in rows] == [2, 2]
    assert calibration.expected_error(scores, labels) == pytest.approx((2 * 0.02 + 2 * 0.0) / 4)
