"""The keyword brain on one machine: tantivy indexes on disk (BM25, ranks as Lucene does), one per world.

A world's index holds that world's documents only, so every statistic BM25 scores with (how many documents
carry a word, how long they are on average, how many there are) is the world's own, whatever the query form:
nothing another world holds can move a score. Worlds are directories named by a hash of their id, opened
when first used and kept open up to a bound.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import threading
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, get_args

import tantivy

from engram.errors import TransientStoreError
from engram.model.search import DocKind, IndexDocument, KeywordHit
from engram.observability import logger
from engram.rules.keyword_query import bm25_idf, has_syntax, negations_as_minus, plain_terms, split_prefixes

_SEP = "\x1f"
_DEFAULT_FIELDS = ["text", "speaker"]
_WRITER_HEAP = 50_000_000  # bytes; tantivy's least is 15 MB a thread
_WRITE_STRIPES = 64  # write locks, a world's by its hash: two worlds sharing one only wait for each other
WORLDS = "worlds"  # the directory of the per-world indexes, under the index root
OPEN_WORLDS = 128  # world indexes kept open at once (the least recently used is closed beyond)
EVERY_KIND = frozenset(get_args(DocKind))  # a document written here has one of them (`upsert` takes IndexDocuments)


def _schema() -> tantivy.Schema:
    b = tantivy.SchemaBuilder()
    b.add_text_field("key", stored=True, tokenizer_name="raw")  # kind␟doc_id: the document's identity
    b.add_text_field("world_id", stored=True, tokenizer_name="raw")
    b.add_text_field("doc_id", stored=True, tokenizer_name="raw")
    b.add_text_field("kind", stored=True, tokenizer_name="raw")
    b.add_text_field("user_id", stored=True, tokenizer_name="raw")  # "" for world-level documents
    b.add_text_field("conversation", stored=True, tokenizer_name="raw")
    b.add_text_field("speaker", stored=True, tokenizer_name="default")
    b.add_text_field("text", stored=True, tokenizer_name="en_stem")
    return b.build()


def world_directory(world_id: str) -> str:
    """A world's index directory name: a hash, so any world id is a safe name and no two worlds share one."""
    return hashlib.sha256(world_id.encode()).hexdigest()


def _count(searcher: Any, query: tantivy.Query) -> int:
    return int(searcher.search(query, limit=1, count=True).count or 0)


def _key(kind: str, doc_id: str) -> str:
    """A document's identity in its world's index: an event and a fact may share an id, never a key."""
    return f"{kind}{_SEP}{doc_id}"


class TantivyIndex:
    """KeywordIndex port: a tantivy index per world. Writes to a world are serialized by its lock (tantivy
    allows one writer per index): each batch opens a writer, commits and reloads the reader, so the next
    search sees it. Searching a world that never had a document reads nothing and creates nothing."""

    def __init__(self, path: Path, *, open_worlds: int = OPEN_WORLDS) -> None:
        path.mkdir(parents=True, exist_ok=True)
        self.root = path
        self.schema = _schema()
        self._open_worlds = max(open_worlds, 1)
        self._open: OrderedDict[str, tantivy.Index] = OrderedDict()
        self._open_lock = threading.Lock()
        self._write_locks = [threading.RLock() for _ in range(_WRITE_STRIPES)]
        self._parser = tantivy.Index(self.schema)  # in memory: parses queries (the schema's, any world's)
        _split_shared_index(self)

    # ------------------------------------------------------------------ worlds
    def _directory(self, world_id: str) -> Path:
        return self.root / WORLDS / world_directory(world_id)

    def _write_lock(self, world_id: str) -> threading.RLock:
        return self._write_locks[int(world_directory(world_id)[:8], 16) % _WRITE_STRIPES]

    def _world(self, world_id: str, *, create: bool) -> tantivy.Index | None:
        """The world's open index; None when it has none and `create` is false. An index is only ever opened
        under the world's write lock, so a write in progress is never missed by a reader opened beside it."""
        with self._open_lock:
            if (index := self._open.get(world_id)) is not None:
                self._open.move_to_end(world_id)
                return index
        directory = self._directory(world_id)
        with self._write_lock(world_id):
            with self._open_lock:
                if (index := self._open.get(world_id)) is not None:
                    return index
            if not create and not (directory / "meta.json").exists():
                return None
            directory.mkdir(parents=True, exist_ok=True)
            index = tantivy.Index(self.schema, path=str(directory), reuse=True)
            with self._open_lock:
                self._open[world_id] = index
                while len(self._open) > self._open_worlds:
                    self._open.popitem(last=False)  # its searchers in use stay valid until dropped
            return index

    @contextmanager
    def _writer(self, world_id: str) -> Iterator[tuple[tantivy.Index, Any]]:
        """The world's index and a writer on it, committed and the reader reloaded on leaving."""
        with self._write_lock(world_id):
            index = self._world(world_id, create=True)
            assert index is not None
            writer = index.writer(heap_size=_WRITER_HEAP, num_threads=1)
            try:
                yield index, writer
                writer.commit()
            except BaseException:
                writer.rollback()
                raise
            finally:
                writer.wait_merging_threads()
            index.reload()

    # ------------------------------------------------------------------ the port
    def upsert(self, docs: Sequence[IndexDocument]) -> None:
        by_world: dict[str, list[IndexDocument]] = {}
        for doc in docs:
            by_world.setdefault(doc.world_id, []).append(doc)
        for world_id, world_docs in by_world.items():
            with self._writer(world_id) as (_, writer):
                for doc in world_docs:
                    key = _key(doc.kind, doc.doc_id)
                    writer.delete_documents("key", key)
                    writer.add_document(tantivy.Document(
                        key=key, world_id=doc.world_id, doc_id=doc.doc_id, kind=doc.kind,
                        user_id=doc.user_id or "", conversation=doc.conversation_id or "",
                        speaker=doc.speaker or "", text=doc.text,
                    ))

    def delete(self, world_id: str, refs: Sequence[tuple[DocKind, str]]) -> None:
        if not refs or self._world(world_id, create=False) is None:
            return
        with self._writer(world_id) as (_, writer):
            for kind, doc_id in refs:
                writer.delete_documents("key", _key(kind, doc_id))

    def delete_world_user(self, world_id: str, user_id: str) -> int:
        if self._world(world_id, create=False) is None:
            return 0
        query = self._term("user_id", user_id)
        with self._writer(world_id) as (index, writer):
            count = getattr(index.searcher().search(query, limit=1, count=True), "count", 0) or 0
            writer.delete_documents_by_query(query)
        return int(count)

    def clear(self, world_id: str) -> None:
        if self._world(world_id, create=False) is None:
            return
        with self._writer(world_id) as (_, writer):
            writer.delete_all_documents()

    def search(self, world_id: str, query: str, *, user_id: str | None = None,
               kinds: Sequence[DocKind] | None = None, limit: int = 10) -> list[KeywordHit]:
        index = self._world(world_id, create=False)
        if index is None:
            return []
        # Filters, not terms: they narrow what is searched and add nothing to a score (a rare kind's
        # term would otherwise lift every document of that kind). None for the world (a world's index holds its own
        # documents alone; each hit's world is checked below) nor for every kind: a filter every document passes still
        # costs an intersection with the matches, two thirds of a search whose words most documents hold.
        every_kind = not kinds or set(kinds) >= EVERY_KIND
        scope: list[tuple[Any, tantivy.Query]] = []
        if user_id is not None:  # the user's own documents and the world's shared ones
            scope.append((tantivy.Occur.Must, self._filter(self._any("user_id", [user_id, ""]))))
        if not every_kind:
            scope.append((tantivy.Occur.Must, self._filter(self._any("kind", list(kinds or ())))))
        index.reload()  # what another process committed too (engram reindex beside a server): 15 µs if nothing
        searcher = index.searcher()
        words = plain_terms(query).split() if query.strip() and not has_syntax(query) else []
        # Without a user the scope is the world's documents of the kinds asked, and each has one kind: every document
        # when every kind is asked (no count), else the kinds' counts added up.
        in_scope = None
        if user_id is None and words:
            in_scope = int(searcher.num_docs) if every_kind else \
                sum(_count(searcher, self._term("kind", k)) for k in dict.fromkeys(kinds or ()))
        parsed = self._scope_weighted(searcher, words, scope, in_scope) if words else self._parse(query)
        full = tantivy.Query.boolean_query([(tantivy.Occur.Must, parsed), *scope]) if scope else parsed
        result = searcher.search(full, limit=limit)
        snippets = tantivy.SnippetGenerator.create(searcher, parsed, self.schema, "text")
        snippets.set_max_num_chars(160)
        hits = []
        for score, address in result.hits:
            doc = searcher.doc(address)
            if doc["world_id"][0] != world_id:  # cannot happen (a directory per world); never returned if it did
                continue
            html = snippets.snippet_from_doc(doc).to_html()
            hits.append(KeywordHit(doc_id=doc["doc_id"][0], kind=doc["kind"][0], score=float(score),
                                   highlights=[html] if "<b>" in html else []))
        return hits

    def _scope_weighted(self, searcher: Any, words: list[str], scope: list[tuple[Any, tantivy.Query]],
                        in_scope: int | None = None) -> tantivy.Query:
        """Plain words, any of which may match, each weighted by how rare it is among the documents searched
        (the user's own and the world's shared ones, of the kinds asked) rather than in the world's whole
        index: BM25's idf from the scope's document frequencies. Without a filter the weight is exactly 1. `in_scope`:
        the scope's document count when the caller knows it."""
        def count(q: tantivy.Query) -> int:
            return _count(searcher, q)

        total = max(int(searcher.num_docs), 1)
        in_world = count(tantivy.Query.boolean_query(scope)) if in_scope is None else in_scope
        clauses = []
        for word in dict.fromkeys(words):
            for field in _DEFAULT_FIELDS:
                try:
                    term = self._parser.parse_query(word, [field])
                except ValueError:  # a leftover character the parser refuses: the word cannot match anyway
                    continue
                if in_world == total:
                    # A scope holding every document (no user, every kind) weighs every word 1: nothing to count. A word
                    # no document holds may stay: it matches nothing, adds nothing to a score, highlights nothing.
                    clauses.append((tantivy.Occur.Should, tantivy.Query.boost_query(term, 1.0)))
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
            parsed, errors = self._parser.parse_query_lenient(negations_as_minus(rest), _DEFAULT_FIELDS)
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
            return self._parser.parse_query(terms, _DEFAULT_FIELDS) if terms else None
        except ValueError:
            clauses = []
            for word in dict.fromkeys(terms.split()):
                try:
                    clauses.append((tantivy.Occur.Should, self._parser.parse_query(word, _DEFAULT_FIELDS)))
                except ValueError:
                    continue
            return tantivy.Query.boolean_query(clauses) if clauses else None

    def ping(self) -> None:
        if not self.root.is_dir():
            raise TransientStoreError(f"the keyword index directory {self.root} is gone")

    def close(self) -> None:
        with self._open_lock:
            self._open.clear()

    @staticmethod
    def _filter(query: tantivy.Query) -> tantivy.Query:
        return tantivy.Query.const_score_query(query, 0.0)

    def _term(self, field: str, value: str) -> tantivy.Query:
        return tantivy.Query.term_query(self.schema, field, value)

    def _any(self, field: str, values: list[str]) -> tantivy.Query:
        return tantivy.Query.boolean_query([(tantivy.Occur.Should, self._term(field, v)) for v in values])


def _split_shared_index(index: TantivyIndex) -> None:
    """An index root that is itself a tantivy index holds every world in one (the layout before worlds had
    an index each, whose statistics spanned worlds): its documents, all fields stored, move into their worlds'
    indexes and it is removed. Its manifest goes first, so a crash midway leaves only files nobody reads, and
    moving again is harmless (a document replaces its copy)."""
    manifest = index.root / "meta.json"
    if not manifest.exists():
        return
    try:
        by_world = _shared_documents(index.root)
    except ValueError as exc:  # unreadable: derived data all the same, and `engram reindex` rebuilds it
        logger.warning("unreadable keyword index removed; run `engram reindex`", extra={"error": str(exc)})
        by_world = {}
    for docs in by_world.values():
        index.upsert(docs)
    manifest.unlink()
    for leftover in index.root.iterdir():
        if leftover.is_dir() and leftover.name != WORLDS:
            shutil.rmtree(leftover)
        elif leftover.is_file():
            leftover.unlink()
    logger.info("keyword index split by world", extra={"worlds": len(by_world),
                                                       "documents": sum(len(d) for d in by_world.values())})


def _shared_documents(root: Path) -> dict[str, list[IndexDocument]]:
    """The documents of an index shared by worlds, by world (every field the search uses is stored)."""
    searcher = tantivy.Index.open(str(root)).searcher()
    total = int(searcher.num_docs)
    by_world: dict[str, list[IndexDocument]] = {}
    for _score, address in searcher.search(tantivy.Query.all_query(), limit=total).hits if total else []:
        doc = searcher.doc(address)
        one = {field: (doc[field] or [""])[0] for field in
               ("world_id", "doc_id", "kind", "user_id", "conversation", "speaker", "text")}
        by_world.setdefault(one["world_id"], []).append(IndexDocument(
            world_id=one["world_id"], doc_id=one["doc_id"], kind=one["kind"], text=one["text"],
            user_id=one["user_id"] or None, conversation_id=one["conversation"] or None,
            speaker=one["speaker"] or None))
    return by_world
