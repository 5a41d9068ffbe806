"""The relationship store: the edges facts draw between entities, read as a user sees them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from engram.model.entities import (
    EntitySighting,
    Relationship,
)


class RelationshipStore(Protocol):
    def upsert_relationship(self, rel: Relationship) -> Relationship: ...
    def relationships(self, world_id: str, entity_id: str, depth: int, *,
                      user_id: str | None = None) -> list[Relationship]:
        """Edges within `depth` hops of the entity, either direction. Every read of the graph takes `user_id`:
        given, only the edges that user sees (their own facts' and the world's), each with only that user's
        evidence and confidence; None, every edge as stored (world-level callers)."""
        ...
    def relations_of(self, world_id: str, entity_ids: Sequence[str], *,
                     user_id: str | None = None) -> list[EntitySighting]:
        """Entities standing in an `<x>_of` relationship to one of these (Sam boss_of dana: dana's boss), on the
        edges `user_id` sees when given."""
        ...
    def neighbours(self, world_id: str, entity_ids: Sequence[str], *,
                   user_id: str | None = None) -> list[Relationship]:
        """Relationships touching any of the entities, either direction (those `user_id` sees when given)."""
        ...
    def drop_relationship_source(self, world_id: str, memory_id: str) -> int:
        """Forget a fact behind its edges; edges left with no fact behind them go. Returns edges removed."""
        ...
