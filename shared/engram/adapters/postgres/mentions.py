"""PostgreSQL repository: entity mentions (what each event names, and how it was resolved)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from psycopg.types.json import Jsonb

from engram.adapters.postgres.base import PostgresBase, normalize_name
from engram.adapters.postgres.entities import upsert_alias
from engram.adapters.postgres.evidence import existing, live_events
from engram.model.entities import (
    EntityAlias,
    EntitySighting,
    RecordedMention,
    Resolution,
    unresolved_method,
)

_MENTION = (
    "m.mention_id, m.world_id, m.event_id, ev.user_id, ev.conversation_id, m.mention AS text, m.kind, "
    "m.span_start AS start, m.span_end AS \"end\", m.entity_id, m.method, m.confidence, m.candidates, m.created_at "
    "FROM entity_mentions m JOIN chat_events ev ON ev.world_id = m.world_id AND ev.event_id = m.event_id"
)


class MentionRepo(PostgresBase):
    def record_resolutions(self, world_id: str, resolutions: Sequence[Resolution],
                           aliases: Sequence[EntityAlias] = ()) -> None:
        """Mentions of events still stored (an erased one's are left out, with the aliases they taught); a mention
        whose entity was erased meanwhile is recorded unresolved (not_found, or no_candidates)."""
        with self.tx(world_id) as cur:
            live = live_events(cur, world_id, [r.mention.event_id for r in resolutions])
            resolutions = [r for r in resolutions if r.mention.event_id in live]
            if not resolutions:
                return
            entities = existing(cur, world_id, "canonical_entities", "entity_id",
                                [r.entity_id for r in resolutions if r.entity_id is not None])
            resolutions = [r if r.entity_id is None or r.entity_id in entities else
                           r.model_copy(update={"entity_id": None, "method": unresolved_method(r.mention.kind),
                                                "confidence": 0.0, "candidates": []}) for r in resolutions]
            for alias in aliases:
                upsert_alias(cur, alias)
            cur.executemany(
                "INSERT INTO entity_mentions (world_id, event_id, mention, kind, span_start, span_end, entity_id, "
                "method, confidence, candidates) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s) "
                "ON CONFLICT (world_id, event_id, span_start, span_end) DO UPDATE SET entity_id = EXCLUDED.entity_id, "
                "method = EXCLUDED.method, confidence = EXCLUDED.confidence, candidates = EXCLUDED.candidates",
                [(world_id, r.mention.event_id, r.mention.text, r.mention.kind, r.mention.start, r.mention.end,
                  r.entity_id, r.method, r.confidence, Jsonb([c.model_dump() for c in r.candidates]))
                 for r in resolutions],
            )

    def known_aliases_in(self, world_id: str, phrases: Sequence[str], user_id: str | None) -> list[str]:
        if not phrases:
            return []
        with self.tx(world_id) as cur:
            cur.execute("SELECT DISTINCT normalized_alias FROM entity_aliases WHERE world_id = %s "
                        "AND normalized_alias = ANY(%s) AND user_id IN ('', %s)",
                        (world_id, [normalize_name(p) for p in phrases], user_id or ""))
            return [r["normalized_alias"] for r in cur.fetchall()]

    def recorded_mentions(self, world_id: str, event_ids: Sequence[str]) -> list[RecordedMention]:
        with self.tx(world_id) as cur:
            cur.execute(f"SELECT {_MENTION} WHERE m.world_id = %s AND m.event_id = ANY(%s) "
                        "ORDER BY ev.occurred_at, m.event_id, m.span_start", (world_id, list(event_ids)))
            return [RecordedMention.model_validate(r) for r in cur.fetchall()]

    def get_mention(self, world_id: str, mention_id: str) -> RecordedMention | None:
        with self.tx(world_id) as cur:
            cur.execute(f"SELECT {_MENTION} WHERE m.world_id = %s AND m.mention_id = %s", (world_id, mention_id))
            row = cur.fetchone()
        return RecordedMention.model_validate(row) if row else None

    def pending_disambiguations(self, world_id: str, user_id: str | None, limit: int) -> list[RecordedMention]:
        with self.tx(world_id) as cur:
            cur.execute(f"SELECT {_MENTION} WHERE m.world_id = %s AND m.method = 'disambiguation_required' "
                        "AND (%s::text IS NULL OR ev.user_id = %s) ORDER BY m.created_at, m.mention_id LIMIT %s",
                        (world_id, user_id, user_id, limit))
            return [RecordedMention.model_validate(r) for r in cur.fetchall()]

    def set_mention_entities(self, world_id: str, updates: Sequence[tuple[str, str, str, float]]) -> None:
        if not updates:
            return
        with self.tx(world_id) as cur:
            entities = existing(cur, world_id, "canonical_entities", "entity_id", [u[1] for u in updates])
            updates = [u for u in updates if u[1] in entities]  # an entity erased meanwhile links nothing
            if not updates:
                return
            cur.executemany("UPDATE entity_mentions SET entity_id = %s, method = %s, confidence = %s "
                            "WHERE world_id = %s AND mention_id = %s",
                            [(entity_id, method, confidence, world_id, mention_id)
                             for mention_id, entity_id, method, confidence in updates])

    def conversation_sightings(self, world_id: str, conversation_id: str, until: datetime,
                               limit: int) -> list[EntitySighting]:
        with self.tx(world_id) as cur:
            cur.execute(
                "SELECT m.entity_id, e.name, e.entity_type, m.event_id, ev.occurred_at, m.span_start AS start "
                "FROM chat_events ev JOIN entity_mentions m ON m.world_id = ev.world_id AND m.event_id = ev.event_id "
                "JOIN canonical_entities e ON e.world_id = m.world_id AND e.entity_id = m.entity_id "
                "WHERE ev.world_id = %s AND ev.conversation_id = %s AND ev.occurred_at <= %s "
                "ORDER BY ev.occurred_at DESC, m.span_start DESC LIMIT %s",
                (world_id, conversation_id, until, limit))
            return [EntitySighting.model_validate(r) for r in cur.fetchall()]


    def event_entity_ids(self, world_id: str, event_ids: Sequence[str]) -> dict[str, list[str]]:
        """The resolved entities mentioned in each event."""
        with self.tx(world_id) as cur:
            cur.execute("SELECT event_id, array_agg(DISTINCT entity_id) AS ids FROM entity_mentions "
                        "WHERE world_id = %s AND event_id = ANY(%s) AND entity_id IS NOT NULL GROUP BY event_id",
                        (world_id, list(event_ids)))
            return {r["event_id"]: list(r["ids"]) for r in cur.fetchall()}
