"""Plain BM25 over one in-memory tantivy index (English stemming, as Lucene ranks): the keyword baseline the
retrieval benchmark measures engram against (`engram.bench.baselines`)."""

from __future__ import annotations

import re
from collections.abc import Sequence

import tantivy

from engram.rules.keyword_query import plain_terms

_WORD = re.compile(r"[^\W_]+")  # a run of letters or digits: what the en_stem tokenizer splits text into
_KEYWORDS = frozenset({"AND", "OR", "NOT", "IN", "TO"})  # words the parser reads as operators


class BM25Baseline:
    """BM25 over one in-memory tantivy index of the documents' texts; the question's plain words, OR-ed.
    Any question runs: one the parser refuses (`Deborah`s`) is searched by its words rebuilt (`_term`)."""

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
        try:
            query = self.index.parse_query(terms, ["text"]) if terms else None
        except ValueError:  # a character or keyword the parser reads as syntax: the words alone, rebuilt
            safe = " ".join(t for t in map(_term, terms.split()) if t)
            query = self.index.parse_query(safe, ["text"]) if safe else None
        if query is None:
            return []
        searcher = self.index.searcher()
        result = searcher.search(query, limit=k)
        return [searcher.doc(address)["doc_id"][0] for _score, address in result.hits]


def _term(word: str) -> str:
    """One word of the question as the parser reads a plain word, in letters and digits only: no character or
    keyword it takes for syntax (a backtick, `<`, IN, TO) is left to fail it. A word the tokenizer splits
    ("U.S.", "Deborah`s") is the phrase of its pieces, as the parser makes of it."""
    pieces = _WORD.findall(word)
    if len(pieces) == 1:
        return pieces[0].lower() if pieces[0] in _KEYWORDS else pieces[0]  # the tokenizer lowercases it anyway
    return f'"{" ".join(pieces)}"' if pieces else ""
