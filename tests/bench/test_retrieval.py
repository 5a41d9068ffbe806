"""Retrieval quality on LoCoMo (the development split), as `engram bench retrieval` measures it: engram's
fused search over worlds ingested through the real pipeline with MiniLM, next to plain BM25 and plain
dense retrieval over the same turns, computed in the same run; the conversations it was never tuned on
reported apart. Ingested worlds are cached under ENGRAM_BENCH_CACHE (default `.engram/bench`) while the
data and the ingest code are unchanged: the first run ingests (minutes, with a progress bar), later ones
search only. The Recall@k curves and the Recall@10 bars are drawn beside the JSON, as the command does."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from engram.bench.locomo import CATEGORIES
from engram.bench.retrieval import HELD_OUT, run, table
from tests.bench.conftest import LOCOMO, REPO, BenchReport

CACHE = Path(os.environ.get("ENGRAM_BENCH_CACHE", REPO / ".engram" / "bench"))


@pytest.mark.bench
@pytest.mark.skipif(not LOCOMO.exists(), reason="the LoCoMo development split is not on this machine")
def test_fused_search_finds_the_evidence_turns_of_locomo_questions(bench_out: Path,
                                                                    bench_report: BenchReport) -> None:
    outcome = run(LOCOMO, bench_out, cache_dir=CACHE)
    document = outcome.document
    print(table(document))
    bench_report.context.update(document)  # the same JSON as the command's, plus the rows below
    systems = document["systems"]
    for split in ("all", "tuning", "held-out"):
        def part(system: str, split: str = split) -> dict:
            return systems[system] if split == "all" else systems[system]["by_split"][split]

        best = max(("bm25", "dense"), key=lambda s: part(s)["overall"]["recall@10"])
        bench_report.add(f"Recall@10 {split}", part("engram")["overall"]["recall@10"], "recall",
                         baseline=f"{best} (better baseline)", baseline_value=part(best)["overall"]["recall@10"])
        bench_report.add(f"NDCG@10 {split}", part("engram")["overall"]["ndcg@10"], "ndcg",
                         baseline=best, baseline_value=part(best)["overall"]["ndcg@10"])
        for category in CATEGORIES.values():
            bench_report.add(f"Recall@10 {split} {category}", part("engram")["by_category"][category]["recall@10"],
                             "recall", baseline=best, baseline_value=part(best)["by_category"][category]["recall@10"])
    bench_report.add("search latency p95 (LoCoMo worlds)", document["search_latency_ms"]["p95"], "ms")
    print(f"(plots: {', '.join(str(p) for p in outcome.plots)})")
    assert document["questions"] > 0
    assert set(document["systems"]) >= {"engram", "bm25", "dense"}
    assert {c for c, v in document["conversations"].items() if v["split"] == "held-out"} == set(HELD_OUT)
