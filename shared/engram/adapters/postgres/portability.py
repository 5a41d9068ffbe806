"""PostgreSQL repository: export (a world's or a user's rows, in key order, from one snapshot) and import (every
row in one transaction, rows whose key the world holds skipped, an outbox entry for each row indexed)."""

from __future__ import annotations

import json
from collections.abc import Generator, Sequence
from typing import Any

import psycopg
from pgvector import Vector
from psycopg import sql
from psycopg.rows import dict_row

from engram.adapters.postgres.base import PostgresBase, Row, to_vector
from engram.errors import Conflict, InvalidInput
from engram.model.portability import RecordKind

IMPORT_BATCH = 1000  # rows per INSERT statement

# What a user export reads of each per-user table (named parameters: w the world, u the user). A user's rows,
# and the entities and relationships those rows reference; conversation state and world settings stay out.
_USER_EVENTS = "SELECT event_id FROM chat_events WHERE world_id = %(w)s AND user_id = %(u)s"
_USER_FACTS = "SELECT memory_id FROM semantic_memories WHERE world_id = %(w)s AND user_id = %(u)s"
_USER_MEMORIES = (f"{_USER_FACTS} UNION ALL SELECT memory_id FROM episodic_memories WHERE world_id = %(w)s AND "
                  "user_id = %(u)s UNION ALL SELECT memory_id FROM procedural_memories WHERE world_id = %(w)s AND "
                  "user_id = %(u)s")
_USER_RELATIONSHIPS = (f"(source_memory_ids && ARRAY({_USER_FACTS}) OR evidence_event_ids && ARRAY({_USER_EVENTS}))")
_USER_ENTITIES = (
    f"entity_id IN (SELECT entity_id FROM entity_mentions WHERE world_id = %(w)s AND event_id IN ({_USER_EVENTS}) "
    " UNION SELECT subject_entity_id FROM semantic_memories WHERE world_id = %(w)s AND user_id = %(u)s "
    " UNION SELECT object_entity_id FROM semantic_memories WHERE world_id = %(w)s AND user_id = %(u)s "
    " UNION SELECT unnest(entity_ids) FROM episodic_memories WHERE world_id = %(w)s AND user_id = %(u)s "
    " UNION SELECT entity_id FROM entity_aliases WHERE world_id = %(w)s AND user_id = %(u)s "
    " UNION SELECT scope_id FROM memory_summaries WHERE world_id = %(w)s AND user_id = %(u)s AND scope_kind = 'entity' "
    f" UNION SELECT source_entity_id FROM entity_relationships WHERE world_id = %(w)s AND {_USER_RELATIONSHIPS} "
    f" UNION SELECT target_entity_id FROM entity_relationships WHERE world_id = %(w)s AND {_USER_RELATIONSHIPS} "
    " UNION SELECT entity_id FROM canonical_entities WHERE world_id = %(w)s AND external_ref = 'user:' || %(u)s)"
)
_OWN = "user_id = %(u)s"
USER_FILTERS: dict[str, str] = {
    "canonical_entities": _USER_ENTITIES,
    "entity_aliases": _OWN,  # the user's own aliases; the world's global ones are nobody's and stay out
    "chat_events": _OWN,
    "entity_mentions": f"event_id IN ({_USER_EVENTS})",
    "entity_relationships": _USER_RELATIONSHIPS,
    "episodic_memories": _OWN, "semantic_memories": _OWN, "procedural_memories": _OWN, "memory_summaries": _OWN,
    "memory_conflicts": f"memory_id IN ({_USER_MEMORIES}) AND conflicting_memory_id IN ({_USER_MEMORIES})",
    "signals": _OWN, "world_queries": _OWN,
}
# An edge keeps only the user's own evidence, an entity only the user's event as its origin: other users' event and
# fact ids never leave with them, nor their confidence (the edge is as sure as the user's surest fact behind it, as
# `edges.seen_edges` shows it).
USER_COLUMNS: dict[str, dict[str, str]] = {
    "canonical_entities": {
        "origin_event_id": f"CASE WHEN origin_event_id IN ({_USER_EVENTS}) THEN origin_event_id END",
    },
    "entity_relationships": {
        "confidence": ("coalesce((SELECT max(m.confidence) FROM semantic_memories m WHERE m.world_id = %(w)s "
                       "AND m.user_id = %(u)s AND m.memory_id = ANY (entity_relationships.source_memory_ids)), "
                       "entity_relationships.confidence)"),
        "source_memory_ids": f"ARRAY(SELECT x FROM unnest(source_memory_ids) x WHERE x IN ({_USER_FACTS}))",
        "evidence_event_ids": f"ARRAY(SELECT x FROM unnest(evidence_event_ids) x WHERE x IN ({_USER_EVENTS}))",
    },
}
# What a row's vector is made of, for rows imported without one (the event's two are made in the domain).
VECTOR_TEXT: dict[str, str] = {
    "episodic_memories": "t.content",
    "memory_summaries": "t.content",
    "procedural_memories": "t.pattern",
    "signals": "t.content",
    "semantic_memories": "coalesce((SELECT s.name FROM canonical_entities s WHERE s.world_id = t.world_id "
                         "AND s.entity_id = t.subject_entity_id), t.subject_entity_id) || ' ' || "
                         "replace(t.predicate, '_', ' ') || ' ' || t.object_value",
}


class PortabilityRepo(PostgresBase):
    def schema_version(self) -> int:
        with self.tx(None) as cur:
            cur.execute("SELECT coalesce(max(version), 0) AS v FROM schema_migrations")
            return int(cur.fetchone()["v"])  # type: ignore[index]

    def export_rows(self, world_id: str, user_id: str | None, kinds: Sequence[RecordKind],
                    start: tuple[RecordKind, list[Any]] | None, *,
                    vectors: bool) -> Generator[tuple[RecordKind, Row], None, None]:
        """Rows of each kind in key order, after `start` (a kind and the key of the last row already read),
        from one read-only snapshot; the caller closes the iterator when it has read enough."""
        names = [k.name for k in kinds]
        first = names.index(start[0].name) if start is not None else 0
        with self.tx(None) as cur:
            # A snapshot needs its isolation set before the transaction's first statement: the world is set after.
            cur.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            cur.execute("SELECT set_config('engram.world_id', %s, true)", (world_id,))
            for position, kind in enumerate(kinds[first:]):
                after = start[1] if start is not None and position == 0 else None
                query, params = _select(kind, world_id, user_id, after, vectors=vectors)
                vector_columns = kind.vectors if vectors else ()
                with cur.connection.cursor(name=f"export_{kind.name}", row_factory=dict_row) as rows:
                    rows.itersize = 1000
                    rows.execute(query, params)
                    for row in rows:
                        for column in vector_columns:  # a server-side cursor reads vectors in binary
                            if isinstance(row[column], Vector):
                                row[column] = row[column].to_numpy()
                        yield kind, row

    def import_rows(self, world_id: str, batches: Sequence[tuple[RecordKind, Sequence[dict[str, Any]]]]
                    ) -> tuple[dict[str, list[Any]], list[int]]:
        """Insert every kind's rows into the world in one transaction; a row whose key (or another unique
        key) the world holds is skipped. Returns the keys inserted by kind, and the outbox entries written
        for those with an index document."""
        inserted: dict[str, list[Any]] = {}
        outbox: list[int] = []
        try:
            with self.tx(world_id) as cur:
                for kind, rows in batches:
                    keys: list[Any] = []
                    for begin in range(0, len(rows), IMPORT_BATCH):
                        part = rows[begin:begin + IMPORT_BATCH]
                        columns = ["world_id", *kind.columns, *(v for v in kind.vectors if v in part[0])]
                        names = sql.SQL(", ").join(map(sql.Identifier, columns))
                        cur.execute(sql.SQL(
                            "INSERT INTO {table} ({names}) SELECT {names} FROM jsonb_populate_recordset("
                            "NULL::{table}, %s::jsonb) ON CONFLICT DO NOTHING RETURNING {key}").format(
                                table=sql.Identifier(kind.table), names=names,
                                key=sql.SQL(", ").join(map(sql.Identifier, kind.key))),
                            (json.dumps([{**r, "world_id": world_id} for r in part], separators=(",", ":")),))
                        found = cur.fetchall()
                        keys += [r[kind.key[0]] if len(kind.key) == 1 else tuple(r[c] for c in kind.key) for r in found]
                    inserted[kind.name] = keys
                    if kind.doc_kind is not None and keys:
                        cur.execute("INSERT INTO index_outbox (world_id, kind, doc_id, op) SELECT %s, %s, "
                                    "unnest(%s::text[]), 'upsert' RETURNING outbox_id", (world_id, kind.doc_kind, keys))
                        outbox += [r["outbox_id"] for r in cur.fetchall()]
        except psycopg.errors.ForeignKeyViolation as exc:
            raise Conflict("the document's rows refer to rows neither it nor the world holds; nothing was written",
                           {"database": str(exc.diag.message_detail or exc)}) from exc
        except (psycopg.errors.IntegrityError, psycopg.errors.DataError) as exc:
            raise InvalidInput("a record holds a value the database refuses; nothing was written",
                               {"database": str(exc.diag.message_primary or exc),
                                "detail": exc.diag.message_detail}) from exc
        return inserted, outbox

    def rows_without_vectors(self, world_id: str, kind: RecordKind, ids: Sequence[str]) -> list[str]:
        with self.tx(world_id) as cur:
            cur.execute(sql.SQL("SELECT {key} AS id FROM {table} WHERE world_id = %s AND {key} = ANY(%s) "
                                "AND embedding IS NULL ORDER BY {key}").format(
                key=sql.Identifier(kind.key[0]), table=sql.Identifier(kind.table)), (world_id, list(ids)))
            return [r["id"] for r in cur.fetchall()]

    def vector_texts(self, world_id: str, kind: RecordKind, ids: Sequence[str]) -> dict[str, str]:
        with self.tx(world_id) as cur:
            cur.execute(sql.SQL("SELECT t.{key} AS id, " + VECTOR_TEXT[kind.table] + " AS text FROM {table} t "
                                "WHERE t.world_id = %s AND t.{key} = ANY(%s)").format(
                key=sql.Identifier(kind.key[0]), table=sql.Identifier(kind.table)), (world_id, list(ids)))
            return {r["id"]: r["text"] for r in cur.fetchall()}

    def set_vectors(self, world_id: str, kind: RecordKind, vectors: dict[str, Sequence[float]]) -> None:
        with self.tx(world_id) as cur:
            cur.executemany(sql.SQL("UPDATE {table} SET embedding = %s WHERE world_id = %s AND {key} = %s").format(
                table=sql.Identifier(kind.table), key=sql.Identifier(kind.key[0])),
                [(to_vector(v), world_id, i) for i, v in vectors.items()])


def _select(kind: RecordKind, world_id: str, user_id: str | None, after: list[Any] | None, *,
            vectors: bool) -> tuple[sql.Composed, dict[str, Any]]:
    params: dict[str, Any] = {"w": world_id, "u": user_id}
    overrides = USER_COLUMNS.get(kind.table, {}) if user_id is not None else {}
    selected = [sql.SQL(overrides[c] + " AS {}").format(sql.Identifier(c)) if c in overrides else sql.Identifier(c)
                for c in [*kind.columns, *(kind.vectors if vectors else ())]]
    where: list[sql.Composable] = [sql.SQL("world_id = %(w)s")]
    if user_id is not None:
        where.append(sql.SQL("(" + USER_FILTERS[kind.table] + ")"))
    key = sql.SQL(", ").join(map(sql.Identifier, kind.key))
    if after is not None:
        params.update({f"k{i}": v for i, v in enumerate(after)})
        where.append(sql.SQL("({}) > ({})").format(key, sql.SQL(", ").join(
            sql.Placeholder(f"k{i}") for i in range(len(after)))))
    return sql.SQL("SELECT {cols} FROM {table} WHERE {where} ORDER BY {key}").format(
        cols=sql.SQL(", ").join(selected), table=sql.Identifier(kind.table),
        where=sql.SQL(" AND ").join(where), key=key), params
