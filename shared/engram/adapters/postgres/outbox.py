"""PostgreSQL repository: the keyword-index outbox (written with the rows it indexes)."""

from __future__ import annotations

from collections.abc import Sequence

from engram.adapters.postgres.base import PostgresBase
from engram.model.search import DocKind


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
