"""The keyword brain of the `small` profile (PostgreSQL full-text search) next to tantivy's BM25, the
embedded stand-in for OpenSearch, on LoCoMo in the same run: every turn a document (text with the image
caption, speaker), every question of categories 1-4 a query of its plain words, Recall@k and NDCG@10
over the evidence turns, and the query latency of each."""

from __future__ import annotations

import statistics
import time
from pathlib import Path

import pytest

from engram.adapters.postgres.base import PostgresBase
from engram.adapters.postgres_fts_index import PostgresFtsIndex
from engram.adapters.tantivy_index import TantivyIndex
from engram.bench.locomo import Conversation, load
from engram.bench.metrics import mean, scores
from engram.model.search import IndexDocument
from engram.ports import KeywordIndex
from engram.rules.keyword_query import plain_terms
from tests.bench.conftest import LOCOMO, BenchReport

pytestmark = pytest.mark.bench
DEPTH = 20


def _run(index: KeywordIndex, conversations: list[Conversation]) -> tuple[dict[str, float], float]:
    """Mean retrieval scores over every question, and the p50 query latency in ms."""
    rows, latencies = [], []
    for conv in conversations:
        index.upsert([IndexDocument(world_id=conv.sample_id, doc_id=t.dia_id, kind="event", text=t.content,
                                    speaker=t.speaker, user_id=t.speaker, conversation_id=conv.sample_id)
                      for t in conv.turns])
        for q in conv.questions:
            started = time.perf_counter()
            hits = index.search(conv.sample_id, plain_terms(q.question), limit=DEPTH)
            latencies.append((time.perf_counter() - started) * 1000)
            rows.append(scores([h.doc_id for h in hits], q.evidence))
    return mean(rows), statistics.median(latencies)


@pytest.mark.skipif(not LOCOMO.exists(), reason="the LoCoMo development split is not on this machine")
def test_postgres_full_text_search_beside_tantivy_bm25_on_locomo(
        bench_report: BenchReport, pg_url: str, tmp_path: Path) -> None:
    conversations = load(LOCOMO)
    db = PostgresBase(pg_url, max_size=2)
    try:
        fts, fts_ms = _run(PostgresFtsIndex(db), conversations)
    finally:
        db.close()
    tantivy_index = TantivyIndex(tmp_path / "tantivy")
    bm25, bm25_ms = _run(tantivy_index, conversations)
    tantivy_index.close()
    for measure in ("recall@5", "recall@10", "recall@20", "ndcg@10"):
        bench_report.add(f"postgres fts {measure}", fts[measure], "share", baseline=f"tantivy bm25 {measure}",
                         baseline_value=bm25[measure])
    bench_report.add("postgres fts query p50", fts_ms, "ms", baseline="tantivy query p50", baseline_value=bm25_ms)
    bench_report.context = {"questions": sum(len(c.questions) for c in conversations),
                            "documents": sum(len(c.turns) for c in conversations), "depth": DEPTH}
