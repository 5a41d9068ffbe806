"""The keyword brain on one machine: a tantivy index on disk (BM25, ranks as Lucene does)."""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import tantivy

from engram.model.search import DocKind, IndexDocument, KeywordHit
from engram.rules.keyword_query import bm25_idf, has_syntax, negations_as_minus, plain_terms, split_prefixes

_SEP = "\x1f"
_DEFAULT_FIELDS = ["text", "speaker"]


def _schema() -> tantivy.Schema:
    b = tantivy.SchemaBuilder()
    b.add_text_field("key", stored=True, tokenizer_name="raw")  # world_id␟doc_id: the document's identity
    b.add_text_field("world_id", stored=True, tokenizer_name="raw")
    b.add_text_field("doc_id", stored=True, tokenizer_name="raw")
    b.add_text_field("kind", stored=True, tokenizer_name="raw")
    b.add_text_field("user_id", stored=True, tokenizer_name="raw")  # "" for world-level documents
    b.add_text_field("conversation", stored=True, tokenizer_name="raw")
    b.add_text_field("speaker", stored=True, tokenizer_name="default")
    b.add_text_field("text", stored=True, tokenizer_name="en_stem")
    return b.build()


class TantivyIndex:
    """KeywordIndex port. One writer per index (tantivy's rule), guarded by a lock; every write is
    committed and the reader reloaded so the next search sees it."""

    def __init__(self, path: Path) -> None:
        path.mkdir(parents=True, exist_ok=True)
        self.schema = _schema()
        self.index = tantivy.Index(self.schema, path=str(path), reuse=True)
        self._lock = threading.Lock()
        self._writer: Any = None

    def _write(self) -> Any:
        if self._writer is None:
            self._writer = self.index.writer(heap_size=50_000_000, num_threads=1)
        return self._writer

    def _commit(self) -> None:
        self._writer.commit()
        self.index.reload()

    def upsert(self, docs: Sequence[IndexDocument]) -> None:
        if not docs:
            return
        with self._lock:
            writer = self._write()
            for doc in docs:
                key = f"{doc.world_id}{_SEP}{doc.doc_id}"
                writer.delete_documents("key", key)
                writer.add_document(tantivy.Document(
                    key=key, world_id=doc.world_id, doc_id=doc.doc_id, kind=doc.kind,
                    user_id=doc.user_id or "", conversation=doc.conversation_id or "",
                    speaker=doc.speaker or "", text=doc.text,
                ))
            self._commit()

    def delete(self, world_id: str, doc_ids: Sequence[str]) -> None:
        if not doc_ids:
            return
        with self._lock:
            writer = self._write()
            for doc_id in doc_ids:
                writer.delete_documents("key", f"{world_id}{_SEP}{doc_id}")
            self._commit()

    def delete_world_user(self, world_id: str, user_id: str) -> int:
        query = tantivy.Query.boolean_query([
            (tantivy.Occur.Must, self._term("world_id", world_id)),
            (tantivy.Occur.Must, self._term("user_id", user_id)),
        ])
        with self._lock:
            count = getattr(self.index.searcher().search(query, limit=1, count=True), "count", 0) or 0
            writer = self._write()
            writer.delete_documents_by_query(query)
            self._commit()
        return int(count)

    def search(self, world_id: str, query: str, *, user_id: str | None = None,
               kinds: Sequence[DocKind] | None = None, limit: int = 10) -> list[KeywordHit]:
        # Filters, not terms: they narrow what is searched and add nothing to a score (a rare kind's
        # term would otherwise lift every document of that kind).
        scope = [(tantivy.Occur.Must, self._filter(self._term("world_id", world_id)))]
        if user_id is not None:  # the user's own documents and the world's shared ones
            scope.append((tantivy.Occur.Must, self._filter(self._any("user_id", [user_id, ""]))))
        if kinds:
            scope.append((tantivy.Occur.Must, self._filter(self._any("kind", list(kinds)))))
        searcher = self.index.searcher()
        words = plain_terms(query).split() if query.strip() and not has_syntax(query) else []
        parsed = self._world_weighted(searcher, words, scope) if words else self._parse(query)
        full = tantivy.Query.boolean_query([(tantivy.Occur.Must, parsed), *scope])
        result = searcher.search(full, limit=limit)
        snippets = tantivy.SnippetGenerator.create(searcher, parsed, self.schema, "text")
        snippets.set_max_num_chars(160)
        hits = []
        for score, address in result.hits:
            doc = searcher.doc(address)
            html = snippets.snippet_from_doc(doc).to_html()
            hits.append(KeywordHit(doc_id=doc["doc_id"][0], kind=doc["kind"][0], score=float(score),
                                   highlights=[html] if "<b>" in html else []))
        return hits

    def _world_weighted(self, searcher: Any, words: list[str], scope: list[tuple[Any, tantivy.Query]]) -> tantivy.Query:
        """Plain words, any of which may match, each weighted by how rare it is in the searched world rather
        than in the whole index: BM25's idf from the world's own document frequencies. One index holds many
        worlds; a name every turn of one world carries is not rare because other worlds lack it."""
        def count(q: tantivy.Query) -> int:
            return int(searcher.search(q, limit=1, count=True).count or 0)

        total = max(int(searcher.num_docs), 1)
        in_world = count(tantivy.Query.boolean_query(scope))
        clauses = []
        for word in dict.fromkeys(words):
            for field in _DEFAULT_FIELDS:
                try:
                    term = self.index.parse_query(word, [field])
                except ValueError:  # a leftover character the parser refuses: the word cannot match anyway
                    continue
                everywhere = count(term)
                here = count(tantivy.Query.boolean_query([(tantivy.Occur.Must, term), *scope])) if everywhere else 0
                if here:
                    boost = bm25_idf(in_world, here) / bm25_idf(total, everywhere)
                    clauses.append((tantivy.Occur.Should, tantivy.Query.boost_query(term, boost)))
        return tantivy.Query.boolean_query(clauses) if clauses else tantivy.Query.empty_query()

    def _parse(self, query: str) -> tantivy.Query:
        """The user's query; malformed syntax degrades to its plain terms instead of failing."""
        rest, prefixes = split_prefixes(query)
        parsed: tantivy.Query | None = None
        if rest:
            parsed, errors = self.index.parse_query_lenient(negations_as_minus(rest), _DEFAULT_FIELDS)
            if errors:
                parsed = self._terms_query(plain_terms(rest))
        # Prefix terms match the stemmed vocabulary: "hik*" finds "hiking" and "hikes".
        ors = [tantivy.Query.regex_query(self.schema, "text", re.escape(p[:4]) + ".*") if len(p) > 4 else
               tantivy.Query.regex_query(self.schema, "text", re.escape(p) + ".*") for p in prefixes]
        if parsed is None and not ors:
            return tantivy.Query.empty_query()
        if not ors:
            assert parsed is not None
            return parsed
        group = [(tantivy.Occur.Should, q) for q in ors]
        return tantivy.Query.boolean_query(group if parsed is None else [(tantivy.Occur.Must, parsed), *group])

    def _terms_query(self, terms: str) -> tantivy.Query | None:
        """Plain terms; when the parser still refuses them (a stray range, only excluded words, stray bytes),
        each word alone, dropping those it refuses: a hostile query finds what its words can, never fails."""
        try:
            return self.index.parse_query(terms, _DEFAULT_FIELDS) if terms else None
        except ValueError:
            clauses = []
            for word in dict.fromkeys(terms.split()):
                try:
                    clauses.append((tantivy.Occur.Should, self.index.parse_query(word, _DEFAULT_FIELDS)))
                except ValueError:
                    continue
            return tantivy.Query.boolean_query(clauses) if clauses else None

    def ping(self) -> None:
        self.index.searcher()

    def close(self) -> None:
        with self._lock:
            if self._writer is not None:
                self._writer.wait_merging_threads()
                self._writer = None

    @staticmethod
    def _filter(query: tantivy.Query) -> tantivy.Query:
        return tantivy.Query.const_score_query(query, 0.0)

    def _term(self, field: str, value: str) -> tantivy.Query:
        return tantivy.Query.term_query(self.schema, field, value)

    def _any(self, field: str, values: list[str]) -> tantivy.Query:
        return tantivy.Query.boolean_query([(tantivy.Occur.Should, self._term(field, v)) for v in values])
