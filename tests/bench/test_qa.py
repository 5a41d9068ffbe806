"""Question answering on LoCoMo (the development split), as `engram bench qa` measures it: engram's answers
through the query loop over worlds ingested as the retrieval bench ingests them (the same cache), next to the
text of the best BM25 turn; token F1 as the LoCoMo paper computes it, category 5 as the share answered
"I don't know". ENGRAM_BENCH_QA_CONVERSATIONS limits the conversations (all by default)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from engram.bench.locomo import Question
from engram.bench.qa import abstains, multi_answer_f1, normalize, run, score, table, token_f1
from tests.bench.conftest import LOCOMO, REPO, BenchReport

CACHE = Path(os.environ.get("ENGRAM_BENCH_CACHE", REPO / ".engram" / "bench"))
LIMIT = int(os.environ["ENGRAM_BENCH_QA_CONVERSATIONS"]) if os.environ.get("ENGRAM_BENCH_QA_CONVERSATIONS") else None


@pytest.mark.parametrize(("prediction", "gold", "f1"), [
    ("7 May 2023", "7 May 2023", 1.0),
    ("The week before 9 June 2023", "the week before 9 June, 2023", 1.0),  # articles, commas, case
    ("painting", "Painted", 1.0),  # Porter stems
    ("Adoption agencies lately", "adoption agencies", 0.8),
    ("Lisbon", "Porto", 0.0),
])
def test_token_f1_is_the_locomo_papers(prediction: str, gold: str, f1: float) -> None:
    assert token_f1(prediction, gold) == pytest.approx(f1)


def test_a_multi_hop_answer_scores_each_gold_part_by_its_best_predicted_part() -> None:
    assert multi_answer_f1("pottery, camping, hiking", "pottery, camping, painting, swimming") == pytest.approx(0.5)
    assert normalize("The cat, and a dog!") == "cat dog"


def test_an_adversarial_question_is_right_only_when_the_answer_abstains() -> None:
    question = Question("What did Dana's cat eat?", "adversarial", (), "")
    assert score("I don't know: that is not mentioned in memory.", question) == 1.0
    assert score("tuna", question) == 0.0
    assert abstains("No information available.") and not abstains("Lisbon")


@pytest.mark.bench
@pytest.mark.skipif(not LOCOMO.exists(), reason="the LoCoMo development split is not on this machine")
def test_engram_answers_locomo_questions_with_short_values_and_abstains_on_the_unanswerable(
        bench_out: Path, bench_report: BenchReport) -> None:
    outcome = run(LOCOMO, bench_out, cache_dir=CACHE, limit_conversations=LIMIT)
    document = outcome.document
    print(table(document))
    bench_report.context.update(document)
    engram, bm25 = document["systems"]["engram"], document["systems"]["bm25-turn"]
    bench_report.add("token F1 categories 1-4", engram["overall"]["f1"], "f1", baseline="bm25-turn",
                     baseline_value=bm25["overall"]["f1"])
    for category, value in engram["by_category"].items():
        bench_report.add(f"token F1 {category}", value, "f1", baseline="bm25-turn",
                         baseline_value=bm25["by_category"][category])
    bench_report.add("category 5 answered \"I don't know\"", engram["overall"]["abstain_rate_cat5"], "share")
    bench_report.add("tokens per question (Anthropic answer prompt)", engram["overall"]["tokens_per_question"],
                     "tokens")
    assert document["questions"] > 0 and set(document["systems"]) == {"engram", "bm25-turn"}
    assert engram["overall"]["f1"] > bm25["overall"]["f1"]
