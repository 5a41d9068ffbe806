"""The query store: world queries and their contexts between steps."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from engram.model.context import QueryContext
from engram.model.memories import MemoryConflict
from engram.model.queries import EntityDefinition, WorldQuery


class QueryStore(Protocol):
    def save_query(self, query: WorldQuery) -> None: ...
    def get_query(self, world_id: str, query_id: str) -> WorldQuery | None: ...
    def list_queries(self, world_id: str, user_id: str | None, limit: int) -> list[WorldQuery]: ...
    def save_context(self, context: QueryContext) -> None: ...
    def load_context(self, world_id: str, query_id: str) -> QueryContext | None: ...
    def entity_definitions(self, world_id: str, limit: int) -> list[EntityDefinition]:
        """The world's entity definitions (types) with how many entities each has, and the domain ontology's
        description where it has one; most entities first."""
        ...
    def conflicts_touching(self, world_id: str, user_id: str, memory_ids: Sequence[str], entity_ids: Sequence[str],
                           limit: int) -> list[MemoryConflict]:
        """Conflicts between two of the user's facts where either is one of `memory_ids` or about one of
        `entity_ids` (research names them in its synthesis); open ones first."""
        ...
