"""Fused search latency with 100,000 memories in one world (the goal: p95 under 30 ms), next to the bare
pgvector top-k query over the same rows in the same run. The world is bulk-loaded (COPY of random unit
vectors made in numpy, HNSW built after the load) in well under the bench's three minutes. The distribution
of every timed query is drawn beside the JSON (`latency.png`), as the command does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engram.bench.latency import run
from engram.bench.plots import latency_plots
from tests.bench.conftest import LOCOMO, BenchReport

MEMORIES = 100_000


@pytest.mark.bench
def test_fused_search_latency_at_100k_memories_next_to_a_bare_top_k(bench_out: Path,
                                                                     bench_report: BenchReport) -> None:
    texts = queries = None
    if LOCOMO.exists():  # real sentences and questions; the vectors stay random
        samples = json.loads(LOCOMO.read_text())
        texts = [t["text"] for s in samples for k, v in s["conversation"].items()
                 if k.startswith("session_") and isinstance(v, list) for t in v]
        queries = [q["question"] for s in samples for q in s["qa"]][:200]
    result = run(MEMORIES, texts=texts, queries=queries)
    bench_report.context.update(result.document())
    print(f"(plot: {', '.join(str(p) for p in latency_plots(result.document(), bench_out))})")
    bench_report.add("fused search p50", result.fused_ms["p50"], "ms", baseline="bare pgvector top-10",
                     baseline_value=result.bare_ms["p50"])
    bench_report.add("fused search p95 (goal < 30)", result.fused_ms["p95"], "ms", baseline="bare pgvector top-10",
                     baseline_value=result.bare_ms["p95"])
    for group, ms in result.by_question.items():  # the questions naming an entity set the p95
        bench_report.add(f"fused search p95, {group}", ms["p95"], "ms")
    if result.minilm_query_ms is not None:
        bench_report.add("MiniLM query embedding (once per query)", result.minilm_query_ms, "ms")
    bench_report.add("bulk load (COPY)", result.load_s, "s")
    bench_report.add("HNSW build after the load", result.index_s, "s")
    assert result.fused_ms["p50"] > 0 and result.bare_ms["p50"] > 0
