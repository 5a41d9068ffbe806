"""An in-memory QueryStore: world queries and their contexts between steps, dict-backed."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from engram.model.context import QueryContext
from engram.model.memories import MemoryConflict
from engram.model.queries import EntityDefinition, WorldQuery
from tests.fakes.tables import Tables, copy


class InMemoryQueryStore:
    t: Tables

    def save_query(self, query: WorldQuery) -> None:
        self.t.queries[(query.world_id, query.query_id)] = copy(query)

    def get_query(self, world_id: str, query_id: str) -> WorldQuery | None:
        query = self.t.queries.get((world_id, query_id))
        return copy(query) if query else None

    def list_queries(self, world_id: str, user_id: str | None, limit: int) -> list[WorldQuery]:
        queries = [q for q in self.t.of_world(self.t.queries, world_id) if user_id in (None, q.user_id)]
        return [copy(q) for q in sorted(queries, key=lambda q: q.created_at, reverse=True)[:limit]]

    def save_context(self, context: QueryContext) -> None:
        if (context.world_id, context.query_id) in self.t.queries:  # kept only while its query is
            self.t.contexts[(context.world_id, context.query_id)] = copy(context)

    def load_context(self, world_id: str, query_id: str) -> QueryContext | None:
        context = self.t.contexts.get((world_id, query_id))
        return copy(context) if context else None

    def entity_definitions(self, world_id: str, limit: int) -> list[EntityDefinition]:
        counts = Counter(e.entity_type for e in self.t.of_world(self.t.entities, world_id))
        return [EntityDefinition(definition=d, entities=n)
                for d, n in sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:limit]]

    def conflicts_touching(self, world_id: str, user_id: str, memory_ids: Sequence[str], entity_ids: Sequence[str],
                           limit: int) -> list[MemoryConflict]:
        found = []
        for c in self.t.of_world(self.t.conflicts, world_id):
            a, b = self.t.facts.get((world_id, c.memory_id)), self.t.facts.get((world_id, c.conflicting_memory_id))
            if a is None or b is None or a.user_id != user_id or b.user_id != user_id:
                continue
            if {c.memory_id, c.conflicting_memory_id} & set(memory_ids) or \
                    {a.subject_entity_id, b.subject_entity_id} & set(entity_ids):
                found.append(c)
        found.sort(key=lambda c: (c.status != "open", -c.created_at.timestamp()))
        return [copy(c) for c in found[:limit]]
