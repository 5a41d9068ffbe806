"""The keyword brain on PostgreSQL full-text search: the `small` profile's index, with no OpenSearch to pay for.

One table (`keyword_documents`, migration 0005; keyed by world, kind and id since 0020) whose generated
tsvector weighs the fields (text A, speaker B, kind C, conversation D); the query syntax is compiled to
tsquery text by `rules.tsquery`. Ranking is `ts_rank` (term frequency and field weight, no inverse document
frequency): a score depends on its document and the query alone, nothing of any other row, so another
world's documents cannot move it. The bench (`make bench`, keyword_fts) measures it beside tantivy's BM25
on LoCoMo.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import psycopg

from engram.adapters.postgres.base import PostgresBase
from engram.model.search import DocKind, IndexDocument, KeywordHit
from engram.rules.keyword_query import plain_terms
from engram.rules.tsquery import CompiledQuery, compile_query

CONFIG = "english"  # the text-search configuration of the generated column in 0005: they must agree
RANK_WEIGHTS = "{0.1, 0.2, 0.4, 1.0}"  # D conversation, C kind, B speaker, A text (PostgreSQL's defaults)
# No length normalization: on LoCoMo, dividing by 1 + log(length) cost recall@10 0.565 -> 0.521, and
# ts_rank_cd (cover density) was no better.
RANK_NORMALIZATION = 0
HEADLINE = "StartSel=<b>, StopSel=</b>, MaxWords=30, MinWords=12, MaxFragments=1, HighlightAll=false"

_UPSERT = """
INSERT INTO keyword_documents (world_id, doc_id, kind, user_id, conversation_id, speaker, text)
SELECT * FROM unnest(%s::text[], %s::text[], %s::text[], %s::text[], %s::text[], %s::text[], %s::text[])
ON CONFLICT (world_id, kind, doc_id) DO UPDATE SET user_id = excluded.user_id,
    conversation_id = excluded.conversation_id, speaker = excluded.speaker, text = excluded.text, updated_at = now()
"""
_SEARCH = f"""
WITH q AS (SELECT to_tsquery('{CONFIG}', %(match)s) AS match, to_tsquery('{CONFIG}', %(positive)s) AS positive),
top AS (
    SELECT d.doc_id, d.kind, d.text,
           ts_rank('{RANK_WEIGHTS}', d.document, q.positive, {RANK_NORMALIZATION}) AS score
    FROM q, engram_keyword_matches(q.match, %(users)s::text[], %(kinds)s::text[]) d
    ORDER BY score DESC, d.doc_id
    LIMIT %(limit)s
)
SELECT top.doc_id, top.kind, top.score, ts_headline('{CONFIG}', top.text, q.positive, '{HEADLINE}') AS headline
FROM top, q
ORDER BY top.score DESC, top.doc_id
"""


class PostgresFtsIndex:
    """KeywordIndex port over the store's own connection pool (one pool per process: with reserved
    concurrency bounding the functions, that bounds the connections to Aurora). Every search pins the
    world in SQL, outside anything the query text can reach: `engram_keyword_matches` (migration 0008) reads
    the world from the transaction's setting, and keeps the GIN index usable under row-level security."""

    def __init__(self, db: PostgresBase) -> None:
        self.db = db

    def upsert(self, docs: Sequence[IndexDocument]) -> None:
        if not docs:
            return
        latest = {(d.world_id, d.kind, d.doc_id): d for d in docs}.values()  # one row per key, or the insert fails
        by_world: dict[str, list[list[str]]] = {}
        for d in latest:  # one transaction per world: row-level security admits only the world it sets
            columns = by_world.setdefault(d.world_id, [[], [], [], [], [], [], []])
            for column, value in zip(columns, (d.world_id, d.doc_id, d.kind, d.user_id or "", d.conversation_id or "",
                                               d.speaker or "", d.text), strict=True):
                column.append(value)
        for world_id, columns in by_world.items():
            with self.db.tx(world_id) as cur:
                cur.execute(_UPSERT, columns)

    def delete(self, world_id: str, refs: Sequence[tuple[DocKind, str]]) -> None:
        if not refs:
            return
        with self.db.tx(world_id) as cur:
            cur.execute("DELETE FROM keyword_documents WHERE world_id = %s AND (kind, doc_id) IN "
                        "(SELECT * FROM unnest(%s::text[], %s::text[]))",
                        (world_id, [kind for kind, _ in refs], [doc_id for _, doc_id in refs]))

    def delete_world_user(self, world_id: str, user_id: str) -> int:
        with self.db.tx(world_id) as cur:
            cur.execute("DELETE FROM keyword_documents WHERE world_id = %s AND user_id = %s", (world_id, user_id))
            return int(cur.rowcount)

    def clear(self, world_id: str) -> None:
        with self.db.tx(world_id) as cur:
            cur.execute("DELETE FROM keyword_documents WHERE world_id = %s", (world_id,))

    def search(self, world_id: str, query: str, *, user_id: str | None = None,
               kinds: Sequence[DocKind] | None = None, limit: int = 10) -> list[KeywordHit]:
        query = query.replace("\x00", " ")  # PostgreSQL text cannot hold NUL, so no document holds one either
        compiled = compile_query(query)
        if compiled is None:
            return []
        try:
            rows = self._search(world_id, compiled, user_id, kinds, limit)
        except psycopg.errors.SyntaxError:  # a tsquery the compiler should never emit: search the plain words
            fallback = compile_query(plain_terms(query))
            rows = self._search(world_id, fallback, user_id, kinds, limit) if fallback else []
        return [KeywordHit(doc_id=r["doc_id"], kind=r["kind"], score=float(r["score"]),
                           highlights=[r["headline"]] if "<b>" in r["headline"] else []) for r in rows]

    def _search(self, world_id: str, compiled: CompiledQuery, user_id: str | None, kinds: Sequence[DocKind] | None,
                limit: int) -> list[dict[str, Any]]:
        params = {"match": compiled.match, "positive": compiled.positive, "world_id": world_id, "limit": limit,
                  "users": None if user_id is None else [user_id, ""],  # the user's own and the world's shared
                  "kinds": list(kinds) if kinds else None}
        with self.db.tx(world_id) as cur:
            cur.execute(_SEARCH, params)
            return list(cur.fetchall())

    def ping(self) -> None:
        with self.db.tx(None) as cur:
            cur.execute("SELECT 1 FROM keyword_documents LIMIT 1")
