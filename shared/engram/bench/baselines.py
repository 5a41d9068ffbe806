"""The baselines engram is measured against, computed in the same run over the same turns: plain BM25
(tantivy, English stemming, as Lucene ranks) and plain dense retrieval (cosine over the embedder's
vectors). Neither knows anything engram knows: each sees the turn texts and the question only."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import tantivy

from engram.rules.keyword_query import plain_terms


class BM25Baseline:
    """BM25 over one in-memory tantivy index of the documents' texts; the question's plain words, OR-ed."""

    def __init__(self, docs: Sequence[tuple[str, str]]) -> None:
        builder = tantivy.SchemaBuilder()
        builder.add_text_field("doc_id", stored=True, tokenizer_name="raw")
        builder.add_text_field("text", stored=False, tokenizer_name="en_stem")
        self.index = tantivy.Index(builder.build())
        writer = self.index.writer(heap_size=50_000_000, num_threads=1)
        for doc_id, text in docs:
            writer.add_document(tantivy.Document(doc_id=doc_id, text=text))
        writer.commit()
        writer.wait_merging_threads()
        self.index.reload()

    def rank(self, question: str, k: int) -> list[str]:
        terms = plain_terms(question)
        if not terms:
            return []
        searcher = self.index.searcher()
        result = searcher.search(self.index.parse_query(terms, ["text"]), limit=k)
        return [searcher.doc(address)["doc_id"][0] for _score, address in result.hits]


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
