"""PostgreSQL repository: consolidation. Memory summaries and procedural memories, the scopes with new
material, what a scope is made of, the facts forgetting reads and archives, and consolidation runs."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from psycopg.types.json import Jsonb

from engram.adapters.postgres.base import PostgresBase, to_vector
from engram.adapters.postgres.events import EVENT_COLUMNS
from engram.adapters.postgres.evidence import live_events, sources_present
from engram.adapters.postgres.memories import _PROCEDURAL, _SEMANTIC, _update_fact
from engram.model.events import StoredEvent
from engram.model.memories import MemorySummary, ProceduralMemory, SemanticMemory

_SUMMARY_COLUMNS = (
    "world_id, summary_id, user_id, scope_kind, scope_id, content, key_facts, source_ids, confidence, created_at"
)
_OUTBOX = "INSERT INTO index_outbox (world_id, kind, doc_id, op) VALUES (%s, %s, %s, %s)"
_WORLD = "(%(w)s::text IS NULL OR {t}.world_id = %(w)s)"

# A conversation's or user's events are all enriched (failed ones aside): a scope waits for its facts, and an
# event still being enriched is never left behind the summary's watermark.
_SETTLED = "count(*) FILTER (WHERE e.enrichment_status IN ('pending', 'enriching')) = 0"
# The scopes with material newer than their summary: (world_id, scope_kind, scope_id, user_id, last_change).
# An entity is summarized per user (facts are a user's own) once the user holds `min_facts` active facts about
# it, and never as the user's own entity (the user scope covers that).
_STALE_SCOPES = f"""
SELECT * FROM (
  SELECT e.world_id, 'conversation' AS scope_kind, e.conversation_id AS scope_id, min(e.user_id) AS user_id,
         max(e.received_at) AS last_change
  FROM chat_events e LEFT JOIN memory_summaries s ON s.world_id = e.world_id AND s.scope_kind = 'conversation'
   AND s.scope_id = e.conversation_id
  WHERE {_WORLD.format(t='e')} AND e.enrichment_status <> 'failed'
  GROUP BY e.world_id, e.conversation_id, s.created_at
  HAVING {_SETTLED} AND (s.created_at IS NULL OR max(e.received_at) > s.created_at)
  UNION ALL
  SELECT e.world_id, 'user', e.user_id, e.user_id, max(e.received_at)
  FROM chat_events e LEFT JOIN memory_summaries s ON s.world_id = e.world_id AND s.scope_kind = 'user'
   AND s.scope_id = e.user_id
  WHERE {_WORLD.format(t='e')} AND e.enrichment_status <> 'failed'
  GROUP BY e.world_id, e.user_id, s.created_at
  HAVING {_SETTLED} AND (s.created_at IS NULL OR max(e.received_at) > s.created_at)
  UNION ALL
  SELECT m.world_id, 'entity', m.subject_entity_id, m.user_id, max(m.created_at)
  FROM semantic_memories m
  JOIN canonical_entities ce ON ce.world_id = m.world_id AND ce.entity_id = m.subject_entity_id
  LEFT JOIN memory_summaries s ON s.world_id = m.world_id AND s.scope_kind = 'entity'
   AND s.scope_id = m.subject_entity_id AND s.user_id = m.user_id
  WHERE {_WORLD.format(t='m')} AND m.status = 'active' AND ce.external_ref IS DISTINCT FROM 'user:' || m.user_id
  GROUP BY m.world_id, m.subject_entity_id, m.user_id, s.created_at
  HAVING count(*) >= %(min_facts)s AND (s.created_at IS NULL OR max(m.created_at) > s.created_at)
) stale ORDER BY last_change, world_id, scope_kind, scope_id LIMIT %(limit)s
"""
# What a scope is made of: its facts (active, with the subject's name) and its events.
_SCOPE_FACTS = {
    "conversation": "source_event_ids && ARRAY(SELECT event_id FROM chat_events WHERE world_id = %(w)s "
                    "AND conversation_id = %(s)s)",
    "entity": "user_id = %(u)s AND (subject_entity_id = %(s)s OR object_entity_id = %(s)s)",
    "user": "user_id = %(u)s",
}
_SCOPE_EVENTS = {
    "conversation": "conversation_id = %(s)s",
    "entity": "user_id = %(u)s AND event_id IN (SELECT event_id FROM entity_mentions WHERE world_id = %(w)s "
              "AND entity_id = %(s)s)",
    "user": "user_id = %(u)s",
}


class SummaryRepo(PostgresBase):
    def save_summary(self, summary: MemorySummary, embedding: Sequence[float] | None,
                     confirmed: Sequence[SemanticMemory] = ()) -> bool:
        """One summary per scope (and user): a later consolidation replaces it and keeps its id. Written in one
        transaction with the facts it confirmed; the keyword index is told only when the summary changed (so
        running again on the same material changes nothing). Returns whether the summary changed. Nothing is
        written when a source was erased meanwhile: the summary would quote it (the scope stays stale, and the
        next run summarizes what is left)."""
        s = summary
        with self.tx(s.world_id) as cur:
            # Every event this write rests on is locked first, the confirmed facts' too: the order an erasure takes.
            live_events(cur, s.world_id, [*s.source_ids, *(x for f in confirmed for x in f.source_event_ids)])
            if not sources_present(cur, s.world_id, s.source_ids):
                return False
            cur.execute(
                f"SELECT {_SUMMARY_COLUMNS} FROM memory_summaries WHERE world_id = %s AND scope_kind = %s "
                "AND scope_id = %s AND coalesce(user_id, '') = coalesce(%s, '') FOR UPDATE",
                (s.world_id, s.scope_kind, s.scope_id, s.user_id),
            )
            row = cur.fetchone()
            old = MemorySummary.model_validate(row) if row else None
            changed = old is None or (old.content, old.key_facts, old.source_ids, round(old.confidence, 4)) != (
                s.content, s.key_facts, s.source_ids, round(s.confidence, 4))
            if old is None:
                cur.execute(
                    f"INSERT INTO memory_summaries ({_SUMMARY_COLUMNS}, embedding) "
                    "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                    (s.world_id, s.summary_id, s.user_id, s.scope_kind, s.scope_id, s.content, Jsonb(s.key_facts),
                     list(s.source_ids), s.confidence, s.created_at, to_vector(embedding)),
                )
            elif changed:
                cur.execute(
                    "UPDATE memory_summaries SET content = %s, key_facts = %s, source_ids = %s, confidence = %s, "
                    "created_at = %s, embedding = %s WHERE world_id = %s AND summary_id = %s",
                    (s.content, Jsonb(s.key_facts), list(s.source_ids), s.confidence, s.created_at,
                     to_vector(embedding), s.world_id, old.summary_id),
                )
            else:  # the same summary: only the watermark moves, so the scope is not planned again
                cur.execute("UPDATE memory_summaries SET created_at = greatest(created_at, %s) "
                            "WHERE world_id = %s AND summary_id = %s", (s.created_at, s.world_id, old.summary_id))
            if changed:
                cur.execute(_OUTBOX, (s.world_id, "summary", old.summary_id if old else s.summary_id, "upsert"))
            for fact in confirmed:
                _update_fact(cur, s.world_id, fact)
            return changed

    def get_summary(self, world_id: str, scope_kind: str, scope_id: str,
                    user_id: str | None = None) -> MemorySummary | None:
        """A scope's summary (an entity's: `user_id`'s)."""
        with self.tx(world_id) as cur:
            cur.execute(
                f"SELECT {_SUMMARY_COLUMNS} FROM memory_summaries WHERE world_id = %s AND scope_kind = %s "
                "AND scope_id = %s AND (%s::text IS NULL OR user_id = %s) ORDER BY created_at DESC LIMIT 1",
                (world_id, scope_kind, scope_id, user_id, user_id),
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

    def stale_scopes(self, world_id: str | None, limit: int, *,
                     min_facts: int) -> list[tuple[str, str, str, str | None, datetime]]:
        """(world_id, scope_kind, scope_id, user_id, last_change) of the conversations, users and entities with
        material newer than their summary, the longest waiting first. `world_id` None spans every world: only
        the scheduled plan does that."""
        with self.world_or_all_tx(world_id) as cur:
            cur.execute(_STALE_SCOPES, {"w": world_id, "limit": limit, "min_facts": min_facts})
            return [(r["world_id"], r["scope_kind"], r["scope_id"], r["user_id"], r["last_change"])
                    for r in cur.fetchall()]

    def worlds_to_maintain(self, world_id: str | None, limit: int) -> list[str]:
        """The worlds with active facts (which decay) or open conflicts, the longest since a finished run first."""
        with self.world_or_all_tx(world_id) as cur:
            cur.execute(
                "SELECT w.world_id FROM (SELECT DISTINCT world_id FROM semantic_memories WHERE status = 'active' "
                f" AND {_WORLD.format(t='semantic_memories')} UNION SELECT DISTINCT world_id FROM memory_conflicts "
                f" WHERE status = 'open' AND {_WORLD.format(t='memory_conflicts')}) w "
                "LEFT JOIN LATERAL (SELECT max(finished_at) AS at FROM consolidation_runs r "
                " WHERE r.world_id = w.world_id) last ON TRUE ORDER BY last.at NULLS FIRST, w.world_id LIMIT %(limit)s",
                {"w": world_id, "limit": limit},
            )
            return [r["world_id"] for r in cur.fetchall()]

    def scope_facts(self, world_id: str, scope_kind: str, scope_id: str, user_id: str | None,
                    limit: int) -> list[tuple[SemanticMemory, str]]:
        """A scope's active facts with their subject's name, the most confident first."""
        with self.tx(world_id) as cur:
            cur.execute(
                f"SELECT {_SEMANTIC}, coalesce((SELECT ce.name FROM canonical_entities ce WHERE ce.world_id = "
                "semantic_memories.world_id AND ce.entity_id = semantic_memories.subject_entity_id), "
                "subject_entity_id) AS subject_name FROM semantic_memories WHERE world_id = %(w)s "
                f"AND status = 'active' AND {_SCOPE_FACTS[scope_kind]} "
                "ORDER BY confidence DESC, created_at, memory_id LIMIT %(k)s",
                {"w": world_id, "s": scope_id, "u": user_id, "k": limit},
            )
            rows = cur.fetchall()
        return [(SemanticMemory.model_validate({k: v for k, v in r.items() if k != "subject_name"}), r["subject_name"])
                for r in rows]

    def scope_events(self, world_id: str, scope_kind: str, scope_id: str, user_id: str | None,
                     limit: int) -> list[StoredEvent]:
        """A scope's most important events (then the latest)."""
        with self.tx(world_id) as cur:
            cur.execute(
                f"SELECT {EVENT_COLUMNS} FROM chat_events WHERE world_id = %(w)s AND {_SCOPE_EVENTS[scope_kind]} "
                "ORDER BY importance DESC, occurred_at DESC, event_id LIMIT %(k)s",
                {"w": world_id, "s": scope_id, "u": user_id, "k": limit},
            )
            return [StoredEvent.model_validate(r) for r in cur.fetchall()]

    def user_entity_sightings(self, world_id: str, user_id: str, conversations: int) -> list[tuple[str, str, str]]:
        """(conversation_id, entity_id, first event_id) of the entities the user named in each of their latest
        `conversations`, their own entity aside: what procedural patterns are read from."""
        with self.tx(world_id) as cur:
            cur.execute(
                "WITH recent AS (SELECT conversation_id FROM chat_events WHERE world_id = %(w)s AND user_id = %(u)s "
                " GROUP BY conversation_id ORDER BY max(occurred_at) DESC LIMIT %(k)s) "
                "SELECT e.conversation_id, m.entity_id, (array_agg(e.event_id ORDER BY e.occurred_at, e.event_id))[1] "
                " AS event_id FROM entity_mentions m JOIN chat_events e ON e.world_id = m.world_id "
                " AND e.event_id = m.event_id JOIN canonical_entities ce ON ce.world_id = m.world_id "
                " AND ce.entity_id = m.entity_id WHERE m.world_id = %(w)s AND e.user_id = %(u)s "
                " AND e.conversation_id IN (SELECT conversation_id FROM recent) "
                " AND ce.external_ref IS DISTINCT FROM 'user:' || e.user_id "
                "GROUP BY e.conversation_id, m.entity_id ORDER BY e.conversation_id, m.entity_id",
                {"w": world_id, "u": user_id, "k": conversations},
            )
            return [(r["conversation_id"], r["entity_id"], r["event_id"]) for r in cur.fetchall()]

    def user_fact_sightings(self, world_id: str, user_id: str,
                            conversations: int) -> list[tuple[str, str, str, str | None]]:
        """(memory_id, conversation_id, event_id, episode memory_id or None) for every event of the user's latest
        `conversations` that stated one of their active facts: where recurring attributes are read from."""
        with self.tx(world_id) as cur:
            cur.execute(
                "WITH recent AS (SELECT conversation_id FROM chat_events WHERE world_id = %(w)s AND user_id = %(u)s "
                " GROUP BY conversation_id ORDER BY max(occurred_at) DESC LIMIT %(k)s) "
                "SELECT m.memory_id, e.conversation_id, e.event_id, (SELECT ep.memory_id FROM episodic_memories ep "
                "  WHERE ep.world_id = e.world_id AND ep.conversation_id = e.conversation_id "
                "  AND e.event_id = ANY(ep.event_ids) ORDER BY ep.memory_id LIMIT 1) AS episode_id "
                "FROM semantic_memories m CROSS JOIN LATERAL unnest(m.source_event_ids) AS s(event_id) "
                "JOIN chat_events e ON e.world_id = m.world_id AND e.event_id = s.event_id "
                "WHERE m.world_id = %(w)s AND m.user_id = %(u)s AND m.status = 'active' AND e.user_id = %(u)s "
                " AND e.conversation_id IN (SELECT conversation_id FROM recent) "
                "ORDER BY m.memory_id, e.occurred_at, e.event_id",
                {"w": world_id, "u": user_id, "k": conversations},
            )
            return [(r["memory_id"], r["conversation_id"], r["event_id"], r["episode_id"]) for r in cur.fetchall()]

    def save_procedure(self, memory: ProceduralMemory, embedding: Sequence[float] | None) -> bool:
        """Insert a pattern, or update its support; the index is told only of a change. Returns whether it
        changed. Nothing is written when a source was erased meanwhile (the next run reads what is left)."""
        m = memory
        with self.tx(m.world_id) as cur:
            if not sources_present(cur, m.world_id, m.source_ids):
                return False
            cur.execute(
                f"INSERT INTO procedural_memories ({_PROCEDURAL}, embedding) VALUES "
                "(%s, %s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (world_id, memory_id) DO UPDATE SET "
                "pattern = EXCLUDED.pattern, support_count = EXCLUDED.support_count, source_ids = EXCLUDED.source_ids, "
                "confidence = EXCLUDED.confidence, embedding = EXCLUDED.embedding, status = 'active' "
                "WHERE (procedural_memories.pattern, procedural_memories.support_count, procedural_memories.source_ids, "
                "procedural_memories.confidence, procedural_memories.status) IS DISTINCT FROM "
                "(EXCLUDED.pattern, EXCLUDED.support_count, EXCLUDED.source_ids, EXCLUDED.confidence, 'active')",
                (m.world_id, m.memory_id, m.user_id, m.pattern, m.support_count, list(m.source_ids), m.confidence,
                 m.created_at, to_vector(embedding)),
            )
            if cur.rowcount:
                cur.execute(_OUTBOX, (m.world_id, "procedural", m.memory_id, "upsert"))
            return bool(cur.rowcount)

    def facts_least_validated(self, world_id: str, limit: int) -> list[SemanticMemory]:
        """A world's active facts, the longest since their last validation first: forgetting's candidates."""
        with self.tx(world_id) as cur:
            cur.execute(f"SELECT {_SEMANTIC} FROM semantic_memories WHERE world_id = %s AND status = 'active' "
                        "ORDER BY last_validated_at, memory_id LIMIT %s", (world_id, limit))
            return [SemanticMemory.model_validate(r) for r in cur.fetchall()]

    def archive_facts(self, world_id: str, memory_ids: Sequence[str]) -> list[str]:
        """Archive active facts: kept, out of retrieval (the keyword index drops them in the same transaction).
        Returns the ids archived."""
        with self.tx(world_id) as cur:
            cur.execute("UPDATE semantic_memories SET status = 'archived' WHERE world_id = %s AND memory_id = ANY(%s) "
                        "AND status = 'active' RETURNING memory_id", (world_id, list(memory_ids)))
            archived = [r["memory_id"] for r in cur.fetchall()]
            cur.executemany(_OUTBOX, [(world_id, "semantic", m, "delete") for m in archived])
            return archived

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
