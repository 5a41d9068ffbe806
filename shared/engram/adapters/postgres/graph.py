"""PostgreSQL repository: graph traversal in recursive queries over entity_relationships (either direction).
Walks carry their path to avoid cycles and stop at a maximum length; every step stays in the world, and, for a
user, on the edges that user sees (`edges.seen_edges`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engram.adapters.postgres.base import PostgresBase
from engram.adapters.postgres.edges import edge_columns, seen_edges, visible_edges
from engram.model.entities import Relationship

_SEEN, _VISIBLE = seen_edges(), visible_edges()
# Every edge seen from either end, (a, b) both ways: for whole-world statistics.
_EDGES = (f"SELECT relationship_id, source_entity_id AS a, target_entity_id AS b FROM {_VISIBLE} r "
          f"UNION ALL SELECT relationship_id, target_entity_id, source_entity_id FROM {_VISIBLE} r")
# One step of a walk from w.entity_id, either direction, through the source and target indexes.
_STEP = (f"JOIN LATERAL (SELECT relationship_id, target_entity_id AS b FROM {_VISIBLE} r "
          "WHERE r.source_entity_id = w.entity_id UNION ALL "
          f"SELECT relationship_id, source_entity_id FROM {_VISIBLE} r "
          "WHERE r.target_entity_id = w.entity_id) e ON TRUE")


def walk_sql(start: str, outside: str, *, user: str = "%(u)s", depth: str = "%(d)s", limit: str = "%(k)s") -> str:
    """The walk from the entities `start` selects (as `(entity_id, 0)` rows) within `depth` hops on the edges
    `user` sees (every edge when NULL): (entity_id, fewest hops) of those `outside` holds for, nearest first by
    (hops, id in code point order), at most `limit`. One statement for every walk (`connected_entities`, the
    search's names), so that their orders agree (`retrieval.graph.weights_near` relies on it)."""
    return (f"WITH RECURSIVE walk(entity_id, hops) AS ({start} "
            f"UNION SELECT e.b, w.hops + 1 FROM walk w {_STEP.replace('%(u)s', user)} WHERE w.hops < {depth}) "
            f"SELECT entity_id, min(hops) AS hops FROM walk WHERE {outside} GROUP BY entity_id "
            f"ORDER BY hops, entity_id COLLATE \"C\" LIMIT {limit}")


class GraphRepo(PostgresBase):
    def connected_entities(self, world_id: str, seeds: Sequence[str], depth: int, limit: int, *,
                           user_id: str | None = None) -> list[tuple[str, int]]:
        """Entities reachable from the seeds within `depth` hops (on `user_id`'s edges when given): (entity id,
        fewest hops), nearest first, the seeds excluded. The walk keeps (entity, hops) pairs once each, so it is
        bounded by entities x depth."""
        if not seeds or depth < 1:
            return []
        [rows] = self.read_once(world_id, [(  # one round trip: the search's graph brain waits for it
            walk_sql("SELECT s, 0 FROM unnest(%(s)s::text[]) AS s", "NOT entity_id = ANY(%(s)s)"),
            {"w": world_id, "u": user_id, "s": list(seeds), "d": depth, "k": limit})])
        return [(r["entity_id"], int(r["hops"])) for r in rows]

    def shortest_path(self, world_id: str, from_entity_id: str, to_entity_id: str, max_length: int, *,
                      user_id: str | None = None) -> list[Relationship] | None:
        """The relationships of a shortest chain between two entities (on `user_id`'s edges when given), at most
        `max_length` edges; None when they are not connected that closely, [] for one entity. A recursive query
        is evaluated level by level, so the first chain to reach the target is a shortest one and the walk stops
        there."""
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
                {"w": world_id, "u": user_id, "f": from_entity_id, "t": to_entity_id, "m": max_length})
            row = cur.fetchone()
            if row is None:
                return None
            cur.execute(f"SELECT {edge_columns('r')} FROM {_SEEN} r WHERE r.relationship_id = ANY(%(r)s)",
                        {"w": world_id, "u": user_id, "r": row["rels"]})
            by_id = {r["relationship_id"]: Relationship.model_validate(r) for r in cur.fetchall()}
        return [by_id[r] for r in row["rels"] if r in by_id]

    def shared_connections(self, world_id: str, entity_id: str, limit: int, *,
                           user_id: str | None = None) -> list[tuple[str, int, list[str]]]:
        """Entities related to this one through common neighbours, not directly (on `user_id`'s edges when
        given): (entity id, how many neighbours they share, which), most shared first."""
        with self.tx(world_id) as cur:
            cur.execute(
                f"WITH mine AS (SELECT DISTINCT e.b AS entity_id FROM (SELECT %(e)s::text AS entity_id) w {_STEP}) "
                "SELECT e.b AS entity_id, count(DISTINCT w.entity_id) AS shared, array_agg(DISTINCT w.entity_id) AS via "
                f"FROM mine w {_STEP} WHERE e.b <> %(e)s AND e.b NOT IN (SELECT entity_id FROM mine) "
                "GROUP BY e.b ORDER BY shared DESC, e.b LIMIT %(k)s",
                {"w": world_id, "u": user_id, "e": entity_id, "k": limit})
            return [(r["entity_id"], int(r["shared"]), list(r["via"])) for r in cur.fetchall()]

    def relationship_stats(self, world_id: str, entity_id: str | None = None, *,
                           user_id: str | None = None) -> dict[str, Any]:
        """Counts of the world's relationships (or one entity's; `user_id`'s when given): in total, by relation,
        the average confidence, and the most connected entities with their degree."""
        with self.tx(world_id) as cur:
            scope = "%(e)s::text IS NULL OR source_entity_id = %(e)s OR target_entity_id = %(e)s"
            params = {"w": world_id, "u": user_id, "e": entity_id}
            cur.execute(f"SELECT relation, count(*) AS n, avg(confidence) AS confidence FROM {_SEEN} r "
                        f"WHERE {scope} GROUP BY relation ORDER BY n DESC, relation", params)
            by_relation = {r["relation"]: {"count": int(r["n"]), "average_confidence": round(float(r["confidence"]), 3)}
                           for r in cur.fetchall()}
            cur.execute(f"WITH edges AS ({_EDGES}) SELECT a AS entity_id, count(*) AS degree FROM edges "
                        "WHERE %(e)s::text IS NULL OR a = %(e)s OR b = %(e)s GROUP BY a "
                        "ORDER BY degree DESC, a LIMIT 10", params)
            hubs = [(r["entity_id"], int(r["degree"])) for r in cur.fetchall()]
        return {"relationships": sum(v["count"] for v in by_relation.values()), "by_relation": by_relation,
                "most_connected": hubs}
