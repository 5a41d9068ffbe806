"""Rebuilding the keyword index from PostgreSQL, the system of record: the index is derived data."""

from __future__ import annotations

from engram.observability import logger
from engram.ports import KeywordIndex, Store

REINDEX_BATCH = 500  # documents read and written at a time


def rebuild_index(store: Store, index: KeywordIndex, world_id: str | None = None, *,
                  batch: int = REINDEX_BATCH) -> dict[str, int]:
    """Every document of the world (of every world when none is named) written again from its rows, after
    the world's index is emptied, so that nothing the database no longer holds stays findable. Returns the
    documents written by world. While a world is rebuilt its keyword search finds only what is written so
    far; a write meanwhile is not lost (the index is emptied before the rows are read, and the outbox applies
    later writes after)."""
    written: dict[str, int] = {}
    for world in [world_id] if world_id is not None else store.indexed_worlds():
        index.clear(world)
        refs = store.indexed_refs(world)
        written[world] = 0
        for start in range(0, len(refs), batch):
            documents = store.documents(world, refs[start:start + batch])
            index.upsert(documents)
            written[world] += len(documents)
        logger.info("keyword index rebuilt", extra={"world_id": world, "documents": written[world]})
    return written
