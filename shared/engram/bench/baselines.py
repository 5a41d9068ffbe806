"""The baselines engram is measured against, computed in the same run over the same turns: plain BM25
(tantivy, English stemming, as Lucene ranks) and plain dense retrieval (cosine over the embedder's
vectors). Neither knows anything engram knows: each sees the turn texts and the question only."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from engram.adapters.tantivy_baseline import BM25Baseline

__all__ = ["BM25Baseline", "DenseBaseline", "reciprocal_rank_fusion"]


class DenseBaseline:
    """Exact cosine similarity (dot product of unit vectors) over every document."""

    def __init__(self, doc_ids: Sequence[str], vectors: np.ndarray) -> None:
        self.doc_ids = list(doc_ids)
        self.vectors = vectors

    def rank(self, question_vector: np.ndarray, k: int) -> list[str]:
        sims = self.vectors @ question_vector
        top = np.argsort(-sims, kind="stable")[:k]
        return [self.doc_ids[i] for i in top]


def reciprocal_rank_fusion(rankings: Sequence[Sequence[str]], k: int = 60) -> list[str]:
    """Plain RRF of ranked lists (every list weighted 1): the textbook hybrid, for reference."""
    fused: dict[str, float] = {}
    for ranking in rankings:
        for rank, doc_id in enumerate(ranking, start=1):
            fused[doc_id] = fused.get(doc_id, 0.0) + 1.0 / (k + rank)
    return sorted(fused, key=lambda d: fused[d], reverse=True)
