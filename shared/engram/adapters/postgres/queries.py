"""PostgreSQL repository: world queries and the query context kept between loop steps."""

from __future__ import annotations

from collections.abc import Sequence

from psycopg.types.json import Jsonb

from engram.adapters.postgres.base import PostgresBase
from engram.adapters.postgres.evidence import erased_after, existing
from engram.model.context import QueryContext
from engram.model.memories import MemoryConflict
from engram.model.queries import EntityDefinition, WorldQuery

_COLUMNS = ("world_id, query_id, user_id, question, conversation_id, config, status, info_requests_used, answer, "
            "trace, model, model_calls, input_tokens, output_tokens, signals, error, created_at, completed_at, mode, "
            "research")
_JSON_COLUMNS = {"config", "answer", "trace", "signals", "research"}
_CONFLICT = ("c.world_id, c.conflict_id, c.memory_id, c.conflicting_memory_id, c.status, c.strategy, c.reason, "
             "c.created_at, c.resolved_at, c.kind, c.winner_memory_id, c.resolved_by, c.note")


class QueryRepo(PostgresBase):
    def save_query(self, query: WorldQuery) -> None:
        """Insert or update a query; nothing for one asked before its user was erased (still running then)."""
        q = query.model_dump(mode="json")
        values = [q[c.strip()] for c in _COLUMNS.split(",")]
        for i, name in enumerate(_COLUMNS.split(",")):
            if name.strip() in _JSON_COLUMNS and values[i] is not None:
                values[i] = Jsonb(values[i])
        with self.tx(query.world_id) as cur:
            if erased_after(cur, query.world_id, query.user_id, query.created_at):
                return
            cur.execute(
                f"INSERT INTO world_queries ({_COLUMNS}) VALUES ({', '.join(['%s'] * len(values))}) "
                "ON CONFLICT (world_id, query_id) DO UPDATE SET status = EXCLUDED.status, "
                "info_requests_used = EXCLUDED.info_requests_used, answer = EXCLUDED.answer, trace = EXCLUDED.trace, "
                "model = EXCLUDED.model, model_calls = EXCLUDED.model_calls, input_tokens = EXCLUDED.input_tokens, "
                "output_tokens = EXCLUDED.output_tokens, signals = EXCLUDED.signals, error = EXCLUDED.error, "
                "completed_at = EXCLUDED.completed_at, research = EXCLUDED.research",
                values,
            )

    def get_query(self, world_id: str, query_id: str) -> WorldQuery | None:
        with self.tx(world_id) as cur:
            cur.execute(f"SELECT {_COLUMNS} FROM world_queries WHERE world_id = %s AND query_id = %s",
                        (world_id, query_id))
            row = cur.fetchone()
        return WorldQuery.model_validate(row) if row else None

    def list_queries(self, world_id: str, user_id: str | None, limit: int) -> list[WorldQuery]:
        with self.tx(world_id) as cur:
            cur.execute(f"SELECT {_COLUMNS} FROM world_queries WHERE world_id = %s AND (%s::text IS NULL OR "
                        "user_id = %s) ORDER BY created_at DESC LIMIT %s", (world_id, user_id, user_id, limit))
            return [WorldQuery.model_validate(r) for r in cur.fetchall()]

    def save_context(self, context: QueryContext) -> None:
        """The loop's context, kept only while its query is (an erasure of the asking user took it meanwhile)."""
        with self.tx(context.world_id) as cur:
            if not existing(cur, context.world_id, "world_queries", "query_id", [context.query_id]):
                return
            cur.execute(
                "INSERT INTO query_contexts (world_id, query_id, context) VALUES (%s, %s, %s) "
                "ON CONFLICT (world_id, query_id) DO UPDATE SET context = EXCLUDED.context, updated_at = now()",
                (context.world_id, context.query_id, Jsonb(context.model_dump(mode="json"))),
            )

    def load_context(self, world_id: str, query_id: str) -> QueryContext | None:
        with self.tx(world_id) as cur:
            cur.execute("SELECT context FROM query_contexts WHERE world_id = %s AND query_id = %s",
                        (world_id, query_id))
            row = cur.fetchone()
        return QueryContext.model_validate(row["context"]) if row else None

    def entity_definitions(self, world_id: str, limit: int) -> list[EntityDefinition]:
        with self.tx(world_id) as cur:
            cur.execute(
                "SELECT e.entity_type AS definition, count(*)::int AS entities, min(o.description) AS description "
                "FROM canonical_entities e LEFT JOIN domain_ontology o ON o.world_id = e.world_id "
                "AND o.kind = 'entity_type' AND lower(o.concept) = lower(e.entity_type) WHERE e.world_id = %s "
                "GROUP BY e.entity_type ORDER BY count(*) DESC, e.entity_type LIMIT %s", (world_id, limit))
            return [EntityDefinition.model_validate(r) for r in cur.fetchall()]

    def conflicts_touching(self, world_id: str, user_id: str, memory_ids: Sequence[str], entity_ids: Sequence[str],
                           limit: int) -> list[MemoryConflict]:
        """Conflicts between two of `user_id`'s facts where either fact is one of `memory_ids` or is about one
        of `entity_ids`; open ones first, then the latest."""
        with self.tx(world_id) as cur:
            cur.execute(
                f"SELECT {_CONFLICT} FROM memory_conflicts c "
                "JOIN semantic_memories a ON a.world_id = c.world_id AND a.memory_id = c.memory_id "
                "JOIN semantic_memories b ON b.world_id = c.world_id AND b.memory_id = c.conflicting_memory_id "
                "WHERE c.world_id = %(w)s AND a.user_id = %(u)s AND b.user_id = %(u)s AND ("
                "c.memory_id = ANY(%(m)s) OR c.conflicting_memory_id = ANY(%(m)s) "
                "OR a.subject_entity_id = ANY(%(e)s) OR b.subject_entity_id = ANY(%(e)s)) "
                "ORDER BY c.status = 'open' DESC, c.created_at DESC LIMIT %(n)s",
                {"w": world_id, "u": user_id, "m": list(memory_ids), "e": list(entity_ids), "n": limit})
            return [MemoryConflict.model_validate(r) for r in cur.fetchall()]
