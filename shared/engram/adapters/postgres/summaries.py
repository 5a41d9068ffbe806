"""PostgreSQL repository: memory summaries and consolidation runs."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from psycopg.types.json import Jsonb

from engram.adapters.postgres.base import PostgresBase, to_vector
from engram.model.memories import MemorySummary

_SUMMARY_COLUMNS = (
    "world_id, summary_id, user_id, scope_kind, scope_id, content, key_facts, source_ids, confidence, created_at"
)


class SummaryRepo(PostgresBase):
    def upsert_summary(self, summary: MemorySummary, embedding: Sequence[float] | None) -> None:
        """One summary per scope: a later consolidation replaces the text, keeps the id, and queues
        the keyword index update in the same transaction."""
        with self.tx(summary.world_id) as cur:
            cur.execute(
                f"INSERT INTO memory_summaries ({_SUMMARY_COLUMNS}, embedding) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) "
                "ON CONFLICT (world_id, scope_kind, scope_id) DO UPDATE SET content = EXCLUDED.content, "
                "key_facts = EXCLUDED.key_facts, source_ids = EXCLUDED.source_ids, "
                "confidence = EXCLUDED.confidence, created_at = EXCLUDED.created_at, "
                "embedding = EXCLUDED.embedding, user_id = EXCLUDED.user_id "
                "RETURNING summary_id",
                (
                    summary.world_id, summary.summary_id, summary.user_id, summary.scope_kind, summary.scope_id,
                    summary.content, Jsonb(summary.key_facts), list(summary.source_ids), summary.confidence,
                    summary.created_at, to_vector(embedding),
                ),
            )
            row = cur.fetchone()
            summary_id = row["summary_id"] if row else summary.summary_id
            cur.execute(
                "INSERT INTO index_outbox (world_id, kind, doc_id, op) VALUES (%s, 'summary', %s, 'upsert')",
                (summary.world_id, summary_id),
            )

    def get_summary(self, world_id: str, scope_kind: str, scope_id: str) -> MemorySummary | None:
        with self.tx(world_id) as cur:
            cur.execute(
                f"SELECT {_SUMMARY_COLUMNS} FROM memory_summaries "
                "WHERE world_id = %s AND scope_kind = %s AND scope_id = %s",
                (world_id, scope_kind, scope_id),
            )
            row = cur.fetchone()
        return MemorySummary.model_validate(row) if row else None

    def list_summaries(self, world_id: str, user_id: str | None, limit: int) -> list[MemorySummary]:
        with self.tx(world_id) as cur:
            cur.execute(
                f"SELECT {_SUMMARY_COLUMNS} FROM memory_summaries WHERE world_id = %s "
                "AND (%s::text IS NULL OR user_id = %s) ORDER BY created_at DESC LIMIT %s",
                (world_id, user_id, user_id, limit),
            )
            return [MemorySummary.model_validate(r) for r in cur.fetchall()]

    def stale_conversations(self, world_id: str | None, limit: int) -> list[tuple[str, str, str]]:
        """(world_id, user_id, conversation_id) of conversations with events newer than their summary,
        oldest change first. `world_id` None spans every world: only the scheduler's plan does that."""
        with self.world_or_all_tx(world_id) as cur:
            cur.execute(
                "SELECT e.world_id, min(e.user_id) AS user_id, e.conversation_id, max(e.received_at) AS last_event "
                "FROM chat_events e LEFT JOIN memory_summaries s ON s.world_id = e.world_id "
                " AND s.scope_kind = 'conversation' AND s.scope_id = e.conversation_id "
                "WHERE (%s::text IS NULL OR e.world_id = %s) "
                "GROUP BY e.world_id, e.conversation_id, s.created_at "
                "HAVING s.created_at IS NULL OR max(e.received_at) > s.created_at "
                "ORDER BY last_event LIMIT %s",
                (world_id, world_id, limit),
            )
            return [(r["world_id"], r["user_id"], r["conversation_id"]) for r in cur.fetchall()]

    def conversation_facts(self, world_id: str, conversation_id: str, limit: int) -> list[dict[str, Any]]:
        """Active facts drawn from a conversation's events, with their subject's name, strongest first."""
        with self.tx(world_id) as cur:
            cur.execute(
                "SELECT m.memory_id, coalesce(ent.name, m.subject_entity_id) AS subject, m.predicate, "
                " m.object_value, m.confidence "
                "FROM semantic_memories m "
                "LEFT JOIN canonical_entities ent ON ent.world_id = m.world_id "
                " AND ent.entity_id = m.subject_entity_id "
                "WHERE m.world_id = %s AND m.status = 'active' AND m.source_event_ids && ARRAY("
                " SELECT event_id FROM chat_events WHERE world_id = %s AND conversation_id = %s) "
                "ORDER BY m.confidence DESC, m.created_at LIMIT %s",
                (world_id, world_id, conversation_id, limit),
            )
            return list(cur.fetchall())

    def start_run(self, world_id: str, run_id: str, started_at: datetime) -> None:
        with self.tx(world_id) as cur:
            cur.execute(
                "INSERT INTO consolidation_runs (world_id, run_id, started_at) VALUES (%s, %s, %s) "
                "ON CONFLICT (world_id, run_id) DO NOTHING",
                (world_id, run_id, started_at),
            )

    def finish_run(self, world_id: str, run_id: str, finished_at: datetime, stats: dict[str, Any]) -> None:
        with self.tx(world_id) as cur:
            cur.execute(
                "UPDATE consolidation_runs SET finished_at = %s, stats = %s WHERE world_id = %s AND run_id = %s",
                (finished_at, Jsonb(stats), world_id, run_id),
            )

