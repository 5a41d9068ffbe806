"""PostgreSQL repository: canonical entities, aliases (pg_trgm), mentions and relationships."""

from __future__ import annotations

from collections.abc import Sequence

from psycopg.types.json import Jsonb

from engram.adapters.postgres.base import PostgresBase, normalize_name
from engram.model.common import new_id, utcnow
from engram.model.entities import CanonicalEntity, EntityAlias, Relationship, Resolution

_ENTITY = (
    "e.world_id, e.entity_id, e.name, e.entity_type, e.description, e.created_at, "
    "coalesce((SELECT array_agg(DISTINCT a.alias) FROM entity_aliases a WHERE a.world_id = e.world_id "
    "AND a.entity_id = e.entity_id), '{}') AS aliases"
)
_ALIAS = "world_id, entity_id, alias, nullif(user_id, '') AS user_id, confidence, source"
_REL = ("world_id, relationship_id, source_entity_id, relation, target_entity_id, confidence, "
        "evidence_event_ids, created_at")


class EntityRepo(PostgresBase):
    def get_entity(self, world_id: str, entity_id: str) -> CanonicalEntity | None:
        with self.tx(world_id) as cur:
            cur.execute(f"SELECT {_ENTITY} FROM canonical_entities e WHERE e.world_id = %s AND e.entity_id = %s",
                        (world_id, entity_id))
            row = cur.fetchone()
        return CanonicalEntity.model_validate(row) if row else None

    def get_entities(self, world_id: str, entity_ids: Sequence[str]) -> list[CanonicalEntity]:
        with self.tx(world_id) as cur:
            cur.execute(f"SELECT {_ENTITY} FROM canonical_entities e WHERE e.world_id = %s AND e.entity_id = ANY(%s)",
                        (world_id, list(entity_ids)))
            return [CanonicalEntity.model_validate(r) for r in cur.fetchall()]

    def find_entity_by_name(self, world_id: str, name: str) -> CanonicalEntity | None:
        with self.tx(world_id) as cur:
            cur.execute(f"SELECT {_ENTITY} FROM canonical_entities e WHERE e.world_id = %s AND e.normalized_name = %s "
                        "ORDER BY e.created_at LIMIT 1", (world_id, normalize_name(name)))
            row = cur.fetchone()
        return CanonicalEntity.model_validate(row) if row else None

    def find_alias(self, world_id: str, alias: str, user_id: str | None) -> list[EntityAlias]:
        with self.tx(world_id) as cur:
            cur.execute(
                f"SELECT {_ALIAS} FROM entity_aliases WHERE world_id = %s AND normalized_alias = %s "
                "AND user_id IN ('', coalesce(%s, '')) ORDER BY (user_id = '') ASC, confidence DESC",
                (world_id, normalize_name(alias), user_id),
            )
            return [EntityAlias.model_validate(r) for r in cur.fetchall()]

    def similar_aliases(self, world_id: str, text: str, min_similarity: float,
                        limit: int) -> list[tuple[EntityAlias, float]]:
        with self.tx(world_id) as cur:
            cur.execute(
                f"SELECT {_ALIAS}, similarity(normalized_alias, %s) AS sim FROM entity_aliases "
                "WHERE world_id = %s AND normalized_alias %% %s AND similarity(normalized_alias, %s) > %s "
                "ORDER BY sim DESC LIMIT %s",
                (normalize_name(text), world_id, normalize_name(text), normalize_name(text), min_similarity, limit),
            )
            rows = cur.fetchall()
        best: dict[str, tuple[EntityAlias, float]] = {}
        for r in rows:
            sim = float(r.pop("sim"))
            if r["entity_id"] not in best:
                best[r["entity_id"]] = (EntityAlias.model_validate(r), sim)
        return list(best.values())

    def create_entity(self, world_id: str, name: str, entity_type: str,
                      description: str | None = None) -> CanonicalEntity:
        """A new canonical entity with its name as a global alias."""
        entity = CanonicalEntity(world_id=world_id, entity_id=new_id("ent"), name=name, entity_type=entity_type,
                                 description=description, created_at=utcnow(), aliases=[name])
        with self.tx(world_id) as cur:
            cur.execute(
                "INSERT INTO canonical_entities (world_id, entity_id, name, normalized_name, entity_type, "
                "description, created_at) VALUES (%s, %s, %s, %s, %s, %s, %s)",
                (world_id, entity.entity_id, name, normalize_name(name), entity_type, description, entity.created_at),
            )
            cur.execute(
                "INSERT INTO entity_aliases (world_id, entity_id, alias, normalized_alias, user_id, confidence, source) "
                "VALUES (%s, %s, %s, %s, '', 1.0, 'created') ON CONFLICT DO NOTHING",
                (world_id, entity.entity_id, name, normalize_name(name)),
            )
            cur.execute("INSERT INTO index_outbox (world_id, kind, doc_id, op) VALUES (%s, 'entity', %s, 'upsert')",
                        (world_id, entity.entity_id))
        return entity

    def add_alias(self, alias: EntityAlias) -> None:
        with self.tx(alias.world_id) as cur:
            cur.execute(
                "INSERT INTO entity_aliases (world_id, entity_id, alias, normalized_alias, user_id, confidence, source) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s) ON CONFLICT (world_id, normalized_alias, entity_id, user_id) "
                "DO UPDATE SET confidence = greatest(entity_aliases.confidence, EXCLUDED.confidence)",
                (alias.world_id, alias.entity_id, alias.alias, normalize_name(alias.alias), alias.user_id or "",
                 alias.confidence, alias.source),
            )
            cur.execute("INSERT INTO index_outbox (world_id, kind, doc_id, op) VALUES (%s, 'entity', %s, 'upsert')",
                        (alias.world_id, alias.entity_id))

    def list_entities(self, world_id: str, name: str | None, limit: int) -> list[CanonicalEntity]:
        with self.tx(world_id) as cur:
            cur.execute(
                f"SELECT {_ENTITY} FROM canonical_entities e WHERE e.world_id = %s AND (%s::text IS NULL OR "
                "e.normalized_name LIKE '%%' || %s || '%%' OR EXISTS (SELECT 1 FROM entity_aliases a WHERE "
                "a.world_id = e.world_id AND a.entity_id = e.entity_id AND a.normalized_alias = %s)) "
                "ORDER BY e.name LIMIT %s",
                (world_id, name and normalize_name(name), name and normalize_name(name),
                 name and normalize_name(name), limit),
            )
            return [CanonicalEntity.model_validate(r) for r in cur.fetchall()]

    def record_resolutions(self, world_id: str, resolutions: Sequence[Resolution]) -> None:
        with self.tx(world_id) as cur:
            cur.executemany(
                "INSERT INTO entity_mentions (world_id, event_id, mention, kind, span_start, span_end, entity_id, "
                "method, confidence, candidates) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s) "
                "ON CONFLICT (world_id, event_id, span_start, span_end) DO UPDATE SET entity_id = EXCLUDED.entity_id, "
                "method = EXCLUDED.method, confidence = EXCLUDED.confidence, candidates = EXCLUDED.candidates",
                [(world_id, r.mention.event_id, r.mention.text, r.mention.kind, r.mention.start, r.mention.end,
                  r.entity_id, r.method, r.confidence, Jsonb([c.model_dump() for c in r.candidates]))
                 for r in resolutions],
            )

    def event_entity_ids(self, world_id: str, event_ids: Sequence[str]) -> dict[str, list[str]]:
        """The resolved entities mentioned in each event."""
        with self.tx(world_id) as cur:
            cur.execute("SELECT event_id, array_agg(DISTINCT entity_id) AS ids FROM entity_mentions "
                        "WHERE world_id = %s AND event_id = ANY(%s) AND entity_id IS NOT NULL GROUP BY event_id",
                        (world_id, list(event_ids)))
            return {r["event_id"]: list(r["ids"]) for r in cur.fetchall()}

    def recent_conversation_entities(self, world_id: str, conversation_id: str, entity_type: str,
                                     limit: int) -> list[str]:
        """Entities of a type mentioned lately in a conversation, most recent first (coreference candidates)."""
        with self.tx(world_id) as cur:
            cur.execute(
                "SELECT m.entity_id FROM entity_mentions m JOIN chat_events ev ON ev.world_id = m.world_id "
                "AND ev.event_id = m.event_id JOIN canonical_entities e ON e.world_id = m.world_id "
                "AND e.entity_id = m.entity_id WHERE m.world_id = %s AND ev.conversation_id = %s "
                "AND e.entity_type = %s AND m.kind = 'name' GROUP BY m.entity_id "
                "ORDER BY max(ev.occurred_at) DESC LIMIT %s",
                (world_id, conversation_id, entity_type, limit),
            )
            return [r["entity_id"] for r in cur.fetchall()]

    def upsert_relationship(self, rel: Relationship) -> Relationship:
        with self.tx(rel.world_id) as cur:
            cur.execute(
                f"INSERT INTO entity_relationships ({_REL}) VALUES (%s, %s, %s, %s, %s, %s, %s, %s) "
                "ON CONFLICT (world_id, source_entity_id, relation, target_entity_id) DO UPDATE SET "
                "confidence = greatest(entity_relationships.confidence, EXCLUDED.confidence), "
                "evidence_event_ids = (SELECT array_agg(DISTINCT x) FROM unnest(entity_relationships.evidence_event_ids "
                "|| EXCLUDED.evidence_event_ids) x), updated_at = now() RETURNING " + _REL,
                (rel.world_id, rel.relationship_id, rel.source_entity_id, rel.relation, rel.target_entity_id,
                 rel.confidence, rel.evidence_event_ids, rel.created_at),
            )
            row = cur.fetchone()
        return Relationship.model_validate(row)

    def relationships(self, world_id: str, entity_id: str, depth: int) -> list[Relationship]:
        """Relationships reachable from an entity within `depth` hops, either direction."""
        with self.tx(world_id) as cur:
            cur.execute(
                "WITH RECURSIVE walk(entity_id, hops) AS (SELECT %s::text, 0 UNION "
                " SELECT CASE WHEN r.source_entity_id = w.entity_id THEN r.target_entity_id "
                "  ELSE r.source_entity_id END, w.hops + 1 FROM walk w JOIN entity_relationships r "
                "  ON r.world_id = %s AND (r.source_entity_id = w.entity_id OR r.target_entity_id = w.entity_id) "
                "  WHERE w.hops < %s) "
                f"SELECT DISTINCT {_REL} FROM entity_relationships WHERE world_id = %s AND "
                "(source_entity_id IN (SELECT entity_id FROM walk WHERE hops < %s) "
                " OR target_entity_id IN (SELECT entity_id FROM walk WHERE hops < %s))",
                (entity_id, world_id, depth, world_id, depth, depth),
            )
            return [Relationship.model_validate(r) for r in cur.fetchall()]
