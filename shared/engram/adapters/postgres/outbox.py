"""PostgreSQL repository: the keyword-index outbox (written with the rows it indexes), and the rows a rebuild
of the index reads."""

from __future__ import annotations

from collections.abc import Sequence

from engram.adapters.postgres.base import PostgresBase
from engram.model.search import DocKind

# The tables whose rows the keyword index holds documents of, by kind, with their id column (`search.DOCUMENT_SQL`
# reads the documents, and skips rows that are out of search, such as archived facts).
INDEXED: dict[DocKind, tuple[str, str]] = {
    "event": ("chat_events", "event_id"), "episodic": ("episodic_memories", "memory_id"),
    "semantic": ("semantic_memories", "memory_id"), "summary": ("memory_summaries", "summary_id"),
    "procedural": ("procedural_memories", "memory_id"), "entity": ("canonical_entities", "entity_id"),
}


class OutboxRepo(PostgresBase):
    def pending_index_ops(self, world_id: str | None, limit: int) -> list[tuple[int, str, DocKind, str, str]]:
        # Without a world this is the drain of the whole outbox (the index step catches up on every world).
        with self.world_or_all_tx(world_id) as cur:
            cur.execute(
                "SELECT outbox_id, world_id, kind, doc_id, op FROM index_outbox WHERE done_at IS NULL "
                "AND (%s::text IS NULL OR world_id = %s) ORDER BY outbox_id LIMIT %s", (world_id, world_id, limit),
            )
            return [(r["outbox_id"], r["world_id"], r["kind"], r["doc_id"], r["op"]) for r in cur.fetchall()]

    def mark_index_ops_done(self, outbox_ids: Sequence[int]) -> None:
        with self.all_worlds_tx() as cur:  # ids the drain read, of whichever worlds they were
            cur.execute("UPDATE index_outbox SET done_at = now() WHERE outbox_id = ANY(%s)", (list(outbox_ids),))

    def indexed_worlds(self) -> list[str]:
        with self.all_worlds_tx() as cur:  # the rebuild of every world's index names none
            cur.execute(" UNION ".join(f"SELECT DISTINCT world_id FROM {table}" for table, _ in INDEXED.values())
                        + " ORDER BY 1")
            return [r["world_id"] for r in cur.fetchall()]

    def indexed_refs(self, world_id: str) -> list[tuple[DocKind, str]]:
        with self.tx(world_id) as cur:
            cur.execute(" UNION ALL ".join(f"SELECT %s::text AS kind, {column} AS doc_id FROM {table} WHERE world_id = %s"
                                           for table, column in INDEXED.values()),
                        [p for kind in INDEXED for p in (kind, world_id)])
            return [(r["kind"], r["doc_id"]) for r in cur.fetchall()]
