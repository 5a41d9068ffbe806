"""The learned ranker: its features (every brain's, by name), the tree walker against a hand-made tree and
against LightGBM itself, the calibration (monotone, a probability), the relevance floor, and the shipped model
reading only features the search gives."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import pytest

from engram.model.heuristics import Heuristics
from engram.model.search import IndexDocument
from engram.retrieval.features import Query, features
from engram.retrieval.fusion import Scored, fuse, key
from engram.retrieval.ranker import Model, rank, recording, relevant, shipped

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
H = Heuristics()
FUSION = H.with_overrides({"ranker": "fusion"})


def _doc(doc_id: str, *, kind: str = "event", conversation: str | None = "s1", entities: Sequence[str] = (),
         user: str | None = None, events: Sequence[str] = (), days: int = 0) -> IndexDocument:
    return IndexDocument(world_id="w", doc_id=doc_id, kind=kind, text=doc_id, conversation_id=conversation,  # type: ignore[arg-type]
                         entity_ids=list(entities), user_id=user, event_ids=list(events),
                         occurred_at=NOW - timedelta(days=days))


def _docs(*docs: IndexDocument) -> dict[str, IndexDocument]:
    return {key(d.kind, d.doc_id): d for d in docs}


DOCS = _docs(_doc("a", entities=["e1"], user="dana", days=3), _doc("b", days=2), _doc("c", conversation="s2", days=1),
             _doc("f", kind="semantic", entities=["e1", "e2"], events=["a", "b"]))
RANKINGS = {"keyword": ["event:a", "event:b"], "semantic": ["event:b", "semantic:f"], "expansion": ["event:c"]}
QUERY = Query("semantic", ["e1"], speakers=["dana"])


def _columns(rankings: dict[str, list[str]] = RANKINGS) -> tuple[list[str], dict[str, list[float]]]:
    scored = fuse(rankings, {b: 1.0 for b in rankings}, {"event:a": 3.0, "event:b": 1.0}, {"event:b": 0.8},
                  DOCS, {"event:a": ["event:b"]}, QUERY.entities, NOW, H, speakers=QUERY.speakers)
    keys = list(DOCS)
    return keys, features(keys, rankings, scored, {"event:a": 3.0, "event:b": 1.0}, {"event:b": 0.8}, DOCS,
                          {"event:a": ["event:b"]}, QUERY, NOW, H)


# ---------------------------------------------------------------- features
def test_every_brain_in_the_rankings_becomes_its_own_columns() -> None:
    keys, cols = _columns()
    assert cols["keyword.rr"] == [1.0, 0.5, 0.0, 0.0]
    assert cols["semantic.rr"] == [0.0, 1.0, 0.0, 0.5]
    assert cols["expansion.rr"] == [0.0, 0.0, 1.0, 0.0]  # a brain fusion never heard of: features all the same
    assert cols["expansion.found"] == [0.0, 0.0, 1.0, 0.0]
    assert "graph.rr" not in cols
    assert all(len(v) == len(keys) for v in cols.values())


def test_features_read_entities_speakers_provenance_and_the_query() -> None:
    keys, cols = _columns()
    at = {k: i for i, k in enumerate(keys)}
    assert cols["entity.overlap"][at["semantic:f"]] == 1.0 and cols["entity.jaccard"][at["semantic:f"]] == 0.5
    assert cols["entity.speaker"] == [1.0, 0.0, 0.0, 0.0]  # what Dana said herself, when the question names her
    assert cols["doc.sources"][at["semantic:f"]] == 2.0  # a fact's source turns
    assert cols["context.cited_by"][at["event:a"]] >= 0.0 and cols["context.cited_by"][at["semantic:f"]] == 0.0
    assert cols["kind.semantic"] == [0.0, 0.0, 0.0, 1.0]
    assert cols["query.semantic"] == [1.0] * 4 and cols["query.temporal"] == [0.0] * 4
    assert cols["time.position"][at["event:a"]] < cols["time.position"][at["event:c"]]  # older, lower


def test_a_question_asking_when_marks_the_turns_that_say_when() -> None:
    docs = _docs(IndexDocument(world_id="w", doc_id="d", kind="event", text="I went to the lake yesterday.",
                               occurred_at=NOW),
                 IndexDocument(world_id="w", doc_id="u", kind="event", text="I love the lake.", occurred_at=NOW),
                 IndexDocument(world_id="w", doc_id="s", kind="semantic", text="dana visited lake in May 2023"))
    keys, rankings = list(docs), {"semantic": list(docs)}
    scored = fuse(rankings, {"semantic": 1.0}, {}, {}, docs, {}, [], NOW, H)

    def cols(question: Query) -> dict[str, list[float]]:
        return features(keys, rankings, scored, {}, {}, docs, {}, question, NOW, H)

    asking = cols(Query("temporal", [], asks_when=True))
    assert asking["time.dated_when"] == [1.0, 0.0, 0.0]  # a turn that says when; a fact is no turn
    assert asking["query.when"] == [1.0] * 3
    telling = cols(Query("temporal", []))
    assert telling["time.dated_when"] == [0.0] * 3 and telling["query.when"] == [0.0] * 3


# ---------------------------------------------------------------- the tree walker
def _leaf(v: float) -> dict[str, Any]:
    return {"leaf_value": v}


def _split(feature: int, threshold: float, left: dict[str, Any], right: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"split_feature": feature, "threshold": threshold, "left_child": left, "right_child": right, **extra}


TINY = {"feature_names": ["x", "y"], "calibration": {"x": [-1.0, 1.0], "y": [0.1, 0.9]}, "tree_info": [
    {"tree_structure": _split(0, 0.5, _split(1, 2.0, _leaf(1.0), _leaf(2.0)), _leaf(3.0))},
    {"tree_structure": _split(1, 0.0, _leaf(-0.5), _leaf(0.25), missing_type="NaN", default_left=False)},
    {"tree_structure": _leaf(0.125)},  # a tree of one leaf
]}


def test_the_walker_follows_a_hand_made_tree() -> None:
    model = Model(TINY)
    x = np.array([[0.0, 1.0], [0.0, 3.0], [0.5, 2.0], [0.6, -1.0], [0.0, np.nan]])
    # row 4: x <= 0.5 and y NaN -> NaN is 0 in the first tree (missing type None: 1.0) and goes right in the second
    assert model.raw(x).tolist() == [1.0 + 0.25 + 0.125, 2.0 + 0.25 + 0.125, 1.0 + 0.25 + 0.125,
                                     3.0 - 0.5 + 0.125, 1.0 + 0.25 + 0.125]


def test_a_zero_missing_type_sends_zero_the_default_way() -> None:
    model = Model({"feature_names": ["x"], "tree_info": [
        {"tree_structure": _split(0, -1.0, _leaf(1.0), _leaf(2.0), missing_type="Zero", default_left=True)}]})
    assert model.raw(np.array([[0.0], [0.5], [-2.0]])).tolist() == [1.0, 2.0, 1.0]


def test_the_walker_scores_what_lightgbm_predicts() -> None:
    lgb = pytest.importorskip("lightgbm")
    from engram.bench.ranker import trimmed

    rng = np.random.default_rng(3)
    x = rng.normal(size=(600, 5))
    x[rng.random(x.shape) < 0.1] = np.nan
    x[:, 4] = np.where(rng.random(600) < 0.3, 0.0, x[:, 4])
    y = (np.nan_to_num(x[:, 0]) + 0.5 * np.nan_to_num(x[:, 1]) > 0.3).astype(float)
    data = lgb.Dataset(x, y, group=[60] * 10, feature_name=[f"f{i}" for i in range(5)])
    booster = lgb.train({"objective": "lambdarank", "num_leaves": 7, "min_data_in_leaf": 5, "verbose": -1,
                         "num_threads": 1}, data, num_boost_round=30)
    model = Model(trimmed(booster.dump_model(), {"x": [0.0], "y": [0.5]}))
    probe = rng.normal(size=(200, 5))
    probe[rng.random(probe.shape) < 0.1] = np.nan
    probe[:20, 4] = 0.0
    assert np.max(np.abs(model.raw(probe) - booster.predict(probe, raw_score=True))) < 1e-9


# ---------------------------------------------------------------- calibration and the floor
def test_the_calibration_is_monotone_and_a_probability() -> None:
    model = shipped()
    raw = np.linspace(-20.0, 20.0, 2001)
    p = model.probability(raw)
    assert np.all(np.diff(p) >= 0.0) and p.min() >= 0.0 and p.max() <= 1.0
    assert p[0] < p[-1]


def test_the_isotonic_fit_gives_rising_points() -> None:
    scipy_optimize = pytest.importorskip("scipy.optimize")
    from engram.bench.ranker import _calibration

    rng = np.random.default_rng(5)
    raw = rng.normal(size=2000)
    labels = (rng.random(2000) < 1 / (1 + np.exp(-3 * raw))).astype(float)
    points = _calibration(scipy_optimize.isotonic_regression, raw, labels)
    assert np.all(np.diff(points["x"]) > 0) and np.all(np.diff(points["y"]) > 0)
    assert 0.0 <= points["y"][0] < 0.2 and 0.8 < points["y"][-1] <= 1.0


def _scored(score: float) -> Scored:
    return Scored(rrf=0.0, match=0.0, signal=0.0, base=score, score=score)


def test_hits_below_the_floor_are_dropped_and_none_left_is_nothing_relevant() -> None:
    h = H.with_overrides({"search_min_relevance": 0.2})
    scored = {"event:a": _scored(0.5), "event:b": _scored(0.1), "event:c": _scored(0.3)}
    assert relevant(scored, h) == ["event:a", "event:c"]
    assert relevant({"event:b": _scored(0.1)}, h) == []
    # Fusion's scores are not probabilities: no floor
    assert relevant(scored, FUSION.with_overrides({"search_min_relevance": 0.2})) == ["event:a", "event:c", "event:b"]


def test_the_learned_ranking_follows_the_model_and_its_scores_are_probabilities() -> None:
    # A model that likes what only the expansion brain found: the candidate fusion ranked last comes first.
    model = Model({"feature_names": ["expansion.rr"], "calibration": {"x": [0.0, 1.0], "y": [0.01, 0.6]},
                   "tree_info": [{"tree_structure": _split(0, 0.5, _leaf(0.0), _leaf(1.0))}]})
    scored = rank(RANKINGS, {b: 1.0 for b in RANKINGS}, {"event:a": 3.0}, {"event:b": 0.8}, DOCS, {}, QUERY, NOW, H,
                  model=model)
    order = relevant(scored, H)
    assert order[0] == "event:c" and scored["event:c"].score == pytest.approx(0.6)
    assert all(s.score == pytest.approx(0.01) for k, s in scored.items() if k != "event:c")
    fused = rank(RANKINGS, {b: 1.0 for b in RANKINGS}, {"event:a": 3.0}, {"event:b": 0.8}, DOCS, {}, QUERY, NOW,
                 FUSION, model=model)
    assert fused == fuse(RANKINGS, {b: 1.0 for b in RANKINGS}, {"event:a": 3.0}, {"event:b": 0.8}, DOCS, {},
                         QUERY.entities, NOW, FUSION, speakers=QUERY.speakers)


def test_recording_hands_every_ranking_its_features() -> None:
    with recording() as samples:
        rank(RANKINGS, {b: 1.0 for b in RANKINGS}, {}, {}, DOCS, {}, QUERY, NOW, FUSION)
    assert len(samples) == 1 and samples[0].keys == list(DOCS) and "expansion.rr" in samples[0].columns


def test_the_shipped_model_reads_only_features_the_search_gives() -> None:
    _keys, cols = _columns({"keyword": ["event:a"], "semantic": ["event:b"], "graph": ["semantic:f"],
                            "expansion": ["event:c"]})  # the four brains the search runs by default
    model = shipped()
    assert model.roots.size > 0 and set(model.feature_names) <= set(cols)


def test_losses_say_how_each_evidence_turn_is_in_the_pool_and_where_it_was_ranked() -> None:
    from engram.bench.losses import losses, table
    from engram.bench.ranker import Question

    names = ["keyword.found", "kind.event", "semantic.found"]
    # D1 found by a brain, D2 only a neighbour, D3 cited by a fact only, D4 in no candidate.
    x = np.asarray([[1.0, 1.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [0.0, 1.0, 1.0]])
    events = [["D1"], ["D2"], ["D3", "D9"], ["D5"]]
    q = Question("conv", "multi-hop", ("D1", "D2", "D3", "D4"), names, x, np.zeros(4), events, np.zeros(4),
                 np.zeros((4, 4)))
    ranked = ["D5", *(f"X{i}" for i in range(9)), "D2", "D1"]
    part = losses([q], [ranked])["multi-hop"]
    assert part["found"] == {"top 10": 0, "11-20": 1, "lower": 0}
    assert part["neighbour"] == {"top 10": 0, "11-20": 1, "lower": 0}
    assert part["cited"] == {"top 10": 0, "11-20": 0, "lower": 1}
    assert part["missing"] == {"top 10": 0, "11-20": 0, "lower": 1}
    assert any("missing" in line and "25.0%" in line for line in table({"multi-hop": part}))


def test_a_search_builds_only_the_columns_the_trees_read_with_the_values_training_records() -> None:
    rankings = {"keyword": ["event:a"], "semantic": ["event:b", "semantic:f"], "graph": ["semantic:f"],
                "expansion": ["event:c"]}
    scored = fuse(rankings, {b: 1.0 for b in rankings}, {"event:a": 3.0}, {"event:b": 0.8}, DOCS,
                  {"event:a": ["event:b"]}, QUERY.entities, NOW, H, speakers=QUERY.speakers)
    keys = list(DOCS)
    when = Query("temporal", ["e1"], speakers=["dana"], asks_when=True)
    every = features(keys, rankings, scored, {"event:a": 3.0}, {"event:b": 0.8}, DOCS, {"event:a": ["event:b"]},
                     when, NOW, H)
    model = shipped()
    some = features(keys, rankings, scored, {"event:a": 3.0}, {"event:b": 0.8}, DOCS, {"event:a": ["event:b"]},
                    when, NOW, H, wanted=model.used)
    assert set(some) == model.used and len(model.used) < len(every)
    assert all(some[name] == every[name] for name in some)
    assert (model.matrix(some, len(keys)) == np.where(
        [name in model.used for name in model.feature_names], model.matrix(every, len(keys)), 0.0)).all()


def test_a_candidates_time_position_is_its_place_among_the_known_times_ties_sharing_the_first() -> None:
    days = [3, None, 1, 3, 0, 1]
    docs = _docs(*(IndexDocument(world_id="w", doc_id=f"d{i}", kind="event", text="t",
                                 occurred_at=None if d is None else NOW - timedelta(days=d))
                   for i, d in enumerate(days)))
    keys = list(docs)
    scored = fuse({"semantic": keys}, {"semantic": 1.0}, {}, {}, docs, {}, [], NOW, H)
    cols = features(keys, {"semantic": keys}, scored, {}, {}, docs, {}, Query("semantic", []), NOW, H)
    # five known times, oldest first: 3, 3, 1, 1, 0 days ago; the unknown one sits in the middle
    assert cols["time.position"] == [0.0, 0.5, 0.5, 0.0, 1.0, 0.5]


def _synthetic_questions(rng: np.random.Generator) -> list[Any]:
    """Three conversations of questions whose evidence a noisy first feature tells, among noise features."""
    from engram.bench.ranker import Question

    out = []
    for conv in ("c1", "c2", "c3"):
        for n in range(30):
            relevant = rng.random(40) < 0.1
            x = rng.normal(size=(40, 4))
            x[:, 0] += 1.5 * relevant
            events = [[f"{conv}-{n}-{j}"] for j in range(40)]
            evidence = tuple(e[0] for e, r in zip(events, relevant, strict=True) if r) or (events[0][0],)
            labels = np.asarray([1.0 if e[0] in evidence else 0.0 for e in events])
            out.append(Question(conv, "multi-hop" if n % 2 else "single-hop", evidence, ["a", "b", "c", "d"], x,
                                labels, events, np.zeros(40), np.zeros((40, 4))))
    return out


def test_the_seed_spread_repeats_the_cross_validation_with_each_seed() -> None:
    pytest.importorskip("lightgbm")
    from engram.bench.ranker import seed_spread

    questions = _synthetic_questions(np.random.default_rng(5))
    small = {"min_data_in_leaf": 20}
    drawn = seed_spread(questions, ["c1", "c2", "c3"], (7, 1, 2), small, rounds=20)
    runs, spread = drawn["recall_at_10"], drawn["spread"]
    assert list(runs) == ["7", "1", "2"] and set(spread) == {"overall", "multi-hop", "single-hop"}
    assert len({r["overall"] for r in runs.values()}) > 1  # bagging and feature sampling draw from the seed
    for figure, s in spread.items():
        values = [r[figure] for r in runs.values()]
        assert s["min"] == min(values) <= s["mean"] <= max(values) == s["max"]
    assert spread["overall"]["min"] > 0.5  # the first feature tells the evidence: far above chance (about 0.25)
    # Without bagging or feature sampling the seed draws nothing: every seed gives the same figure.
    fixed = seed_spread(questions, ["c1", "c2", "c3"], (7, 1), {**small, "bagging_fraction": 1.0,
                                                                "feature_fraction": 1.0}, rounds=20)
    assert fixed["spread"]["overall"]["min"] == fixed["spread"]["overall"]["max"]


def test_the_report_table_shows_the_seed_spread() -> None:
    from engram.bench.ranker import table

    cv = {"questions": 2, "overall": {"recall@10": 0.8}, "by_category": {}}
    report = {"trained_on": ["c1"], "folds": [], "cv": {"learned": cv, "fusion": cv},
              "seeds": {"seeds": [7, 1], "spread": {"overall": {"min": 0.795, "mean": 0.7976, "max": 0.8002}}}}
    assert "  overall      0.7950 / 0.7976 / 0.8002" in table(report).splitlines()
