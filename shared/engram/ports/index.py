"""The keyword index port (tantivy, OpenSearch, PostgreSQL full text): BM25-like scores, higher is better, on the
engine's scale."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from engram.model.search import DocKind, IndexDocument, KeywordHit


@runtime_checkable
class KeywordIndex(Protocol):
    """Documents are keyed by world, kind and id (an event and a fact may share an id). A search's scores
    depend on the searched world's documents only, for every query form: nothing another world holds can
    move them (the engines' statistics are kept per world)."""

    def upsert(self, docs: Sequence[IndexDocument]) -> None: ...
    def delete(self, world_id: str, refs: Sequence[tuple[DocKind, str]]) -> None:
        """Forget the documents (kind, doc id) of the world; a missing one is no error."""
        ...
    def search(
        self, world_id: str, query: str, *, user_id: str | None = None, kinds: Sequence[DocKind] | None = None,
        limit: int = 10,
    ) -> list[KeywordHit]:
        """BM25 search with query syntax (terms, "phrase", field:value, AND/OR/NOT, prefix*),
        always filtered to `world_id`; highlights hold snippets with <b>...</b> marks."""
        ...
    def delete_world_user(self, world_id: str, user_id: str) -> int: ...
    def clear(self, world_id: str) -> None:
        """Forget every document of the world (before it is rebuilt from the database)."""
        ...
    def ping(self) -> None: ...
