"""Plain BM25 over one in-memory tantivy index (English stemming, as Lucene ranks): the keyword baseline the
retrieval benchmark measures engram against (`engram.bench.baselines`)."""

from __future__ import annotations

from collections.abc import Sequence

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
