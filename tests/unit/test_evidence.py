"""The question's evidence: absolute columns (cosine, the question's words, its entities, the keyword brain), the
logistic map to a probability shipped beside the ranker, and the floor under which search finds nothing relevant."""

from __future__ import annotations

import numpy as np
import pytest

from engram.model.heuristics import Heuristics
from engram.model.search import IndexDocument
from engram.retrieval.evidence import COLUMNS, Evidence, best, columns, cover
from engram.retrieval.fusion import Scored
from engram.retrieval.ranker import relevant, shipped

H = Heuristics()
FLOOR = H.retrieval.search_min_evidence


def _doc(doc_id: str, text: str, entities: tuple[str, ...] = ()) -> IndexDocument:
    return IndexDocument(world_id="w", doc_id=doc_id, kind="event", text=text, entity_ids=list(entities))


def _scored(*scores: float) -> dict[str, Scored]:
    return {f"event:{i}": Scored(0.0, 0.0, 0.0, 0.0, s) for i, s in enumerate(scores)}


def _shipped_probability(similarity: float, words: float, entities: float, keyword: float) -> float:
    evidence = shipped().evidence
    assert evidence is not None
    row = dict(zip(COLUMNS, ([similarity], [words], [entities], [keyword]), strict=True))
    return float(evidence.probability(row)[0])


@pytest.mark.parametrize(("terms", "text", "share"), [
    (["cats", "called"], "I have two cats, Luna and Pepper.", 0.5),
    (["maya", "birthday"], "Maya's birthday is on March 3.", 1.0),
    (["erupt", "vesuvius"], "Last Friday I went to a concert.", 0.0),
    (["cat"], "A catalog and a concat.", 0.0),  # whole words only: a word inside another is not the word
    (["sleeps", "laptop"], "Luna likes to sleep on my laptop.", 1.0),  # a plural or third person -s aside
    ([], "anything", 0.0),
])
def test_cover_is_the_share_of_the_questions_words_the_text_contains(terms: list[str], text: str,
                                                                     share: float) -> None:
    assert cover(terms, text) == share


def test_the_columns_read_each_candidate_alone() -> None:
    docs = {"event:a": _doc("a", "I work as a nurse in Leeds", ("e1",)), "event:b": _doc("b", "Luna sleeps")}
    cols = columns(["event:a", "event:b"], {"keyword": ["event:a"]}, {"event:a": 0.6}, docs, ["nurse", "work"],
                   ["e1", "e2"])
    assert cols == {"similarity": [0.6, 0.0], "cover": [1.0, 0.0], "entities": [0.5, 0.0], "keyword": [1.0, 0.0]}


def test_the_map_is_a_probability_rising_with_each_column() -> None:
    evidence = Evidence((7.6, 3.6, 1.0, 0.7), -10.5)
    low = evidence.probability({"similarity": [0.1], "cover": [0.0], "entities": [0.0], "keyword": [0.0]})
    for column in COLUMNS:
        row = {"similarity": [0.1], "cover": [0.0], "entities": [0.0], "keyword": [0.0], column: [1.0]}
        assert 0.0 < low[0] < evidence.probability(row)[0] < 1.0
    assert Evidence.read(evidence.document()) == Evidence((7.6, 3.6, 1.0, 0.7), -10.5)
    assert Evidence.read(None) is None
    with pytest.raises(ValueError, match="evidence columns"):
        Evidence.read({"columns": ["similarity"], "weights": [1.0], "bias": 0.0})


def test_without_candidates_there_is_no_evidence_and_without_a_map_no_floor() -> None:
    docs = {"event:a": _doc("a", "text")}
    assert best(Evidence((1.0, 1.0, 1.0, 1.0), 0.0), [], {}, {}, docs, ["text"], []) == 0.0
    assert best(None, ["event:a"], {}, {}, docs, ["text"], []) == 1.0
    strong = best(Evidence((1.0, 1.0, 1.0, 1.0), 0.0), ["event:a"], {}, {}, docs, ["text"], [])
    assert strong == pytest.approx(1 / (1 + np.exp(-1.0)))


def test_under_the_evidence_floor_every_hit_is_dropped_whatever_its_score() -> None:
    scored = _scored(0.9, 0.2, 0.5)
    assert relevant(scored, H, best_evidence=FLOOR) == ["event:0", "event:2", "event:1"]
    assert relevant(scored, H, best_evidence=FLOOR / 2) == []
    assert relevant(scored, H.with_overrides({"ranker": "fusion"}), best_evidence=FLOOR / 2) == []  # both rankers
    assert relevant(scored, H.with_overrides({"search_min_evidence": 0.0}), best_evidence=0.0) == list(
        relevant(scored, H))


def test_the_shipped_map_tells_a_turn_about_the_question_from_one_sharing_a_stray_word() -> None:
    # Answers in a world of twenty turns (MiniLM cosines): "I'm allergic to peanuts", "I have two cats, Luna and
    # Pepper" to "What is Dana allergic to?", "What are the cats called?".
    assert _shipped_probability(0.34, 0.5, 0.0, 1.0) >= FLOOR
    assert _shipped_probability(0.37, 0.5, 0.0, 1.0) >= FLOOR
    # "When did Mount Vesuvius last erupt?" against "Last Friday I went to a concert": one stray word.
    assert _shipped_probability(0.05, 0.25, 0.0, 1.0) < FLOOR
    assert _shipped_probability(0.1, 0.0, 0.0, 0.0) < FLOOR  # a faint cosine alone


def test_train_ranker_fits_the_map_on_the_candidates_and_reports_its_reliability() -> None:
    from engram.bench.ranker import Question, fit_evidence, reliability

    rng = np.random.default_rng(3)
    questions = []
    for n in range(60):
        x = np.column_stack([rng.uniform(0, 0.6, 40), rng.choice([0.0, 0.5, 1.0], 40), np.zeros(40),
                             rng.choice([0.0, 1.0], 40)])
        labels = ((x[:, 0] > 0.45) & (x[:, 1] == 1.0)).astype(float)  # relevant: close in meaning and every word
        questions.append(Question(f"c{n % 3}", "single-hop", ("D1:1",), [], np.zeros((40, 0)), labels, [[]] * 40,
                                  np.zeros(40), x))
    fitted = fit_evidence(questions)
    assert fitted.weights[0] > 0 and fitted.weights[1] > 0 and fitted.bias < 0
    x = np.vstack([q.absolute for q in questions])
    y = np.concatenate([q.labels for q in questions])
    rows = reliability(fitted.probability({c: x[:, j].tolist() for j, c in enumerate(COLUMNS)}), y)
    assert sum(r["candidates"] for r in rows) == len(y)
    assert rows[0]["share_relevant"] < rows[-1]["share_relevant"]  # the buckets rise with the score
