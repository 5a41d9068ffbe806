"""PostgreSQL repository: relationships between entities (the edges facts draw), read as a user sees them."""

from __future__ import annotations

from collections.abc import Sequence

from engram.adapters.postgres.base import PostgresBase
from engram.adapters.postgres.edges import edge_columns, seen_edges, visible_edges
from engram.adapters.postgres.evidence import existing, live_events
from engram.model.entities import (
    EntitySighting,
    Relationship,
)

_REL = ("world_id, relationship_id, source_entity_id, relation, target_entity_id, confidence, "
        "evidence_event_ids, created_at, source_memory_ids")


class RelationshipRepo(PostgresBase):
    def upsert_relationship(self, rel: Relationship) -> Relationship:
        """The edge, merged with the one already between its entities. Nothing is written when its evidence, its
        facts or its entities were erased meanwhile (the edge returned is then the one asked for)."""
        with self.tx(rel.world_id) as cur:
            w = rel.world_id
            if (not live_events(cur, w, rel.evidence_event_ids) >= set(rel.evidence_event_ids)
                    or not existing(cur, w, "semantic_memories", "memory_id", rel.source_memory_ids)
                    >= set(rel.source_memory_ids)
                    or len(existing(cur, w, "canonical_entities", "entity_id",
                                    [rel.source_entity_id, rel.target_entity_id]))
                    < len({rel.source_entity_id, rel.target_entity_id})):
                return rel
            cur.execute(
                f"INSERT INTO entity_relationships ({_REL}) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s) "
                "ON CONFLICT (world_id, source_entity_id, relation, target_entity_id) DO UPDATE SET "
                "confidence = greatest(entity_relationships.confidence, EXCLUDED.confidence), "
                "evidence_event_ids = (SELECT array_agg(DISTINCT x) FROM unnest(entity_relationships.evidence_event_ids "
                "|| EXCLUDED.evidence_event_ids) x), "
                "source_memory_ids = (SELECT coalesce(array_agg(DISTINCT x), '{}') FROM "
                "unnest(entity_relationships.source_memory_ids || EXCLUDED.source_memory_ids) x), "
                "updated_at = now() RETURNING " + _REL,
                (rel.world_id, rel.relationship_id, rel.source_entity_id, rel.relation, rel.target_entity_id,
                 rel.confidence, rel.evidence_event_ids, rel.created_at, rel.source_memory_ids),
            )
            row = cur.fetchone()
        return Relationship.model_validate(row)

    def relationships(self, world_id: str, entity_id: str, depth: int, *,
                      user_id: str | None = None) -> list[Relationship]:
        """Relationships reachable from an entity within `depth` hops, either direction: the edges `user_id`
        sees when given (`edges.seen_edges`), every edge of the world otherwise."""
        with self.tx(world_id) as cur:
            cur.execute(
                "WITH RECURSIVE walk(entity_id, hops) AS (SELECT %(e)s::text, 0 UNION "
                " SELECT CASE WHEN r.source_entity_id = w.entity_id THEN r.target_entity_id "
                "  ELSE r.source_entity_id END, w.hops + 1 "
                f" FROM walk w JOIN {visible_edges()} r "
                "  ON r.source_entity_id = w.entity_id OR r.target_entity_id = w.entity_id WHERE w.hops < %(d)s) "
                f"SELECT DISTINCT {edge_columns('r')} FROM {seen_edges()} r WHERE "
                "r.source_entity_id IN (SELECT entity_id FROM walk WHERE hops < %(d)s) "
                "OR r.target_entity_id IN (SELECT entity_id FROM walk WHERE hops < %(d)s)",
                {"w": world_id, "u": user_id, "e": entity_id, "d": depth},
            )
            return [Relationship.model_validate(r) for r in cur.fetchall()]

    def relations_of(self, world_id: str, entity_ids: Sequence[str], *,
                     user_id: str | None = None) -> list[EntitySighting]:
        with self.tx(world_id) as cur:
            cur.execute(
                "SELECT r.source_entity_id AS entity_id, e.name, e.entity_type, left(r.relation, -3) AS relation, "
                f"r.target_entity_id AS related_entity_id FROM {seen_edges()} r JOIN canonical_entities e "
                "ON e.world_id = r.world_id AND e.entity_id = r.source_entity_id "
                "WHERE r.target_entity_id = ANY(%(e)s) AND r.relation LIKE '%%\\_of' ORDER BY r.confidence DESC",
                {"w": world_id, "u": user_id, "e": list(entity_ids)})
            return [EntitySighting.model_validate(r) for r in cur.fetchall()]

    def neighbours(self, world_id: str, entity_ids: Sequence[str], *,
                   user_id: str | None = None) -> list[Relationship]:
        with self.tx(world_id) as cur:
            cur.execute(f"SELECT {edge_columns('r')} FROM {seen_edges()} r "
                        "WHERE r.source_entity_id = ANY(%(e)s) OR r.target_entity_id = ANY(%(e)s)",
                        {"w": world_id, "u": user_id, "e": list(entity_ids)})
            return [Relationship.model_validate(r) for r in cur.fetchall()]

    def drop_relationship_source(self, world_id: str, memory_id: str) -> int:
        with self.tx(world_id) as cur:
            cur.execute("UPDATE entity_relationships SET source_memory_ids = array_remove(source_memory_ids, %s), "
                        "updated_at = now() WHERE world_id = %s AND %s = ANY(source_memory_ids) "
                        "RETURNING relationship_id, cardinality(source_memory_ids) AS left", (memory_id, world_id, memory_id))
            orphans = [r["relationship_id"] for r in cur.fetchall() if r["left"] == 0]
            if orphans:
                cur.execute("DELETE FROM entity_relationships WHERE world_id = %s AND relationship_id = ANY(%s)",
                            (world_id, orphans))
            return len(orphans)
