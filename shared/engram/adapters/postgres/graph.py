"""PostgreSQL repository: graph traversal in recursive queries over entity_relationships (either direction).
Walks carry their path to avoid cycles and stop at a maximum length; every step stays in the world."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engram.adapters.postgres.base import PostgresBase
from engram.model.entities import Relationship

_REL = ("world_id, relationship_id, source_entity_id, relation, target_entity_id, confidence, "
        "evidence_event_ids, created_at")
# Every edge seen from either end, (a, b) both ways: for whole-world statistics.
_EDGES = ("SELECT relationship_id, source_entity_id AS a, target_entity_id AS b, confidence FROM entity_relationships "
          "WHERE world_id = %(w)s UNION ALL SELECT relationship_id, target_entity_id, source_entity_id, confidence "
          "FROM entity_relationships WHERE world_id = %(w)s")
# One step of a walk from w.entity_id, either direction, through the source and target indexes.
_STEP = ("JOIN LATERAL (SELECT relationship_id, target_entity_id AS b, confidence FROM entity_relationships "
         "WHERE world_id = %(w)s AND source_entity_id = w.entity_id UNION ALL "
         "SELECT relationship_id, source_entity_id, confidence FROM entity_relationships "
         "WHERE world_id = %(w)s AND target_entity_id = w.entity_id) e ON TRUE")


class GraphRepo(PostgresBase):
    def connected_entities(self, world_id: str, seeds: Sequence[str], depth: int, limit: int) -> list[tuple[str, int]]:
        """Entities reachable from the seeds within `depth` hops: (entity id, fewest hops), nearest first,
        the seeds excluded. The walk keeps (entity, hops) pairs once each, so it is bounded by entities x depth."""
        if not seeds or depth < 1:
            return []
        with self.tx(world_id) as cur:
            cur.execute(
                "WITH RECURSIVE walk(entity_id, hops) AS ("
                " SELECT s, 0 FROM unnest(%(s)s::text[]) AS s "
                f" UNION SELECT e.b, w.hops + 1 FROM walk w {_STEP} WHERE w.hops < %(d)s) "
                "SELECT entity_id, min(hops) AS hops FROM walk WHERE NOT entity_id = ANY(%(s)s) "
                "GROUP BY entity_id ORDER BY hops, entity_id LIMIT %(k)s",
                {"w": world_id, "s": list(seeds), "d": depth, "k": limit})
            return [(r["entity_id"], int(r["hops"])) for r in cur.fetchall()]

    def shortest_path(self, world_id: str, from_entity_id: str, to_entity_id: str,
                      max_length: int) -> list[Relationship] | None:
        """The relationships of a shortest chain between two entities, at most `max_length` edges; None when
        they are not connected that closely, [] for one entity. A recursive query is evaluated level by level,
        so the first chain to reach the target is a shortest one and the walk stops there."""
        if from_entity_id == to_entity_id:
            return []
        with self.tx(world_id) as cur:
            cur.execute(
                "WITH RECURSIVE walk(entity_id, path, rels) AS ("
                " SELECT %(f)s::text, ARRAY[%(f)s::text], ARRAY[]::text[] "
                " UNION ALL SELECT e.b, w.path || e.b, w.rels || e.relationship_id "
                f" FROM walk w {_STEP} "
                " WHERE cardinality(w.rels) < %(m)s AND NOT e.b = ANY(w.path) AND w.entity_id <> %(t)s) "
                "SELECT rels FROM walk WHERE entity_id = %(t)s LIMIT 1",
                {"w": world_id, "f": from_entity_id, "t": to_entity_id, "m": max_length})
            row = cur.fetchone()
            if row is None:
                return None
            cur.execute(f"SELECT {_REL} FROM entity_relationships WHERE world_id = %s AND relationship_id = ANY(%s)",
                        (world_id, row["rels"]))
            by_id = {r["relationship_id"]: Relationship.model_validate(r) for r in cur.fetchall()}
        return [by_id[r] for r in row["rels"] if r in by_id]

    def shared_connections(self, world_id: str, entity_id: str, limit: int) -> list[tuple[str, int, list[str]]]:
        """Entities related to this one through common neighbours, not directly: (entity id, how many
        neighbours they share, which), most shared first."""
        with self.tx(world_id) as cur:
            cur.execute(
                f"WITH mine AS (SELECT DISTINCT e.b AS entity_id FROM (SELECT %(e)s::text AS entity_id) w {_STEP}) "
                "SELECT e.b AS entity_id, count(DISTINCT w.entity_id) AS shared, array_agg(DISTINCT w.entity_id) AS via "
                f"FROM mine w {_STEP} WHERE e.b <> %(e)s AND e.b NOT IN (SELECT entity_id FROM mine) "
                "GROUP BY e.b ORDER BY shared DESC, e.b LIMIT %(k)s",
                {"w": world_id, "e": entity_id, "k": limit})
            return [(r["entity_id"], int(r["shared"]), list(r["via"])) for r in cur.fetchall()]

    def relationship_stats(self, world_id: str, entity_id: str | None = None) -> dict[str, Any]:
        """Counts of the world's relationships (or one entity's): in total, by relation, the average
        confidence, and the most connected entities with their degree."""
        with self.tx(world_id) as cur:
            scope = "world_id = %(w)s AND (%(e)s::text IS NULL OR source_entity_id = %(e)s OR target_entity_id = %(e)s)"
            params = {"w": world_id, "e": entity_id}
            cur.execute(f"SELECT relation, count(*) AS n, avg(confidence) AS confidence FROM entity_relationships "
                        f"WHERE {scope} GROUP BY relation ORDER BY n DESC, relation", params)
            by_relation = {r["relation"]: {"count": int(r["n"]), "average_confidence": round(float(r["confidence"]), 3)}
                           for r in cur.fetchall()}
            cur.execute(f"WITH edges AS ({_EDGES}) SELECT a AS entity_id, count(*) AS degree FROM edges "
                        "WHERE %(e)s::text IS NULL OR a = %(e)s OR b = %(e)s GROUP BY a "
                        "ORDER BY degree DESC, a LIMIT 10", params)
            hubs = [(r["entity_id"], int(r["degree"])) for r in cur.fetchall()]
        return {"relationships": sum(v["count"] for v in by_relation.values()), "by_relation": by_relation,
                "most_connected": hubs}
