"""The index outbox: keyword-index operations written with the rows they index."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from engram.model.search import DocKind


class OutboxStore(Protocol):
    """Keyword-index writes, recorded in the same transaction as the rows they index."""

    def pending_index_ops(self, world_id: str | None, limit: int) -> list[tuple[int, str, DocKind, str, str]]:
        """(outbox id, world id, kind, doc id, op 'upsert'|'delete'), oldest first."""
        ...
    def mark_index_ops_done(self, outbox_ids: Sequence[int]) -> None: ...
    def indexed_worlds(self) -> list[str]:
        """Every world with a row the keyword index holds a document of (a rebuild spans worlds)."""
        ...
    def indexed_refs(self, world_id: str) -> list[tuple[DocKind, str]]:
        """(kind, id) of every row of the world the keyword index may hold a document of."""
        ...
