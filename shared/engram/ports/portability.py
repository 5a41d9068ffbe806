"""The portability store: export and import of a world's rows."""

from __future__ import annotations

from collections.abc import Generator, Sequence
from typing import Any, Protocol

from engram.model.portability import RecordKind


class PortabilityStore(Protocol):
    """Export and import (engram.memory.portability): rows as records of the kinds in `engram.model.portability`."""

    def schema_version(self) -> int:
        """The latest migration applied to the database."""
        ...
    def export_rows(self, world_id: str, user_id: str | None, kinds: Sequence[RecordKind],
                    start: tuple[RecordKind, list[Any]] | None, *,
                    vectors: bool) -> Generator[tuple[RecordKind, dict[str, Any]], None, None]:
        """Rows of each kind in key order (a user's only, with `user_id`), after `start` (a kind and the key
        of the last row read), from one read-only snapshot; close the iterator when done with it."""
        ...
    def import_rows(self, world_id: str, batches: Sequence[tuple[RecordKind, Sequence[dict[str, Any]]]]
                    ) -> tuple[dict[str, list[Any]], list[int]]:
        """Insert rows in one transaction, skipping those whose key the world holds; the keys inserted by kind,
        and the ids of the outbox entries written with the rows that have an index document."""
        ...
    def rows_without_vectors(self, world_id: str, kind: RecordKind, ids: Sequence[str]) -> list[str]: ...
    def vector_texts(self, world_id: str, kind: RecordKind, ids: Sequence[str]) -> dict[str, str]:
        """What each row's vector is made of (memories, facts, summaries, patterns)."""
        ...
    def set_vectors(self, world_id: str, kind: RecordKind, vectors: dict[str, Sequence[float]]) -> None: ...
