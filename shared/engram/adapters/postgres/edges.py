"""The relationship graph as one user sees it: the one source every query reading `entity_relationships` uses.

An edge stands for facts (`source_memory_ids`) stated in events (`evidence_event_ids`). It is a user's when one of
those facts is the user's; it is the world's when no user's fact and no user's event stands behind it (an edge
imported or loaded with no provenance of a user). A user sees their own edges and the world's, each as they
know it: with their own facts and events as its evidence and as sure as their surest fact, never with another
user's evidence or confidence. With no user (world-level callers) every edge is read as stored.
"""

from __future__ import annotations

_COLUMNS = ("world_id, relationship_id, source_entity_id, relation, target_entity_id, confidence, "
            "evidence_event_ids, created_at, source_memory_ids")


def seen_edges() -> str:
    """A subquery (use it where a table goes) of the world's edges as user `%(u)s` sees them, every edge when
    `%(u)s` is NULL; named parameters `w` (the world) and `u` (the user or NULL). Each edge costs two index
    lookups for a user (its facts and its events by primary key), none without one."""
    return (
        "(SELECT r.world_id, r.relationship_id, r.source_entity_id, r.relation, r.target_entity_id, "
        " coalesce(f.confidence, r.confidence) AS confidence, "
        " ARRAY(SELECT x FROM unnest(r.evidence_event_ids) x WHERE x <> ALL (ev.others)) AS evidence_event_ids, "
        " r.created_at, "
        " ARRAY(SELECT x FROM unnest(r.source_memory_ids) x WHERE x <> ALL (f.others)) AS source_memory_ids "
        " FROM entity_relationships r "
        " CROSS JOIN LATERAL (SELECT count(*) FILTER (WHERE m.user_id = %(u)s) AS own, count(*) AS known, "
        "  max(m.confidence) FILTER (WHERE m.user_id = %(u)s) AS confidence, "
        "  coalesce(array_agg(m.memory_id) FILTER (WHERE m.user_id <> %(u)s), '{}') AS others "
        "  FROM semantic_memories m WHERE %(u)s::text IS NOT NULL AND m.world_id = r.world_id "
        "  AND m.memory_id = ANY (r.source_memory_ids)) f "
        " CROSS JOIN LATERAL (SELECT count(*) FILTER (WHERE e.user_id = %(u)s) AS own, count(*) AS known, "
        "  coalesce(array_agg(e.event_id) FILTER (WHERE e.user_id <> %(u)s), '{}') AS others "
        "  FROM chat_events e WHERE %(u)s::text IS NOT NULL AND e.world_id = r.world_id "
        "  AND e.event_id = ANY (r.evidence_event_ids)) ev "
        " WHERE r.world_id = %(w)s "
        " AND (%(u)s::text IS NULL OR f.own > 0 OR (f.known = 0 AND (ev.own > 0 OR ev.known = 0))))"
    )


def visible_edges() -> str:
    """A subquery of the world's edges user `%(u)s` sees (every edge when NULL), read as stored: for walks,
    which need only where an edge leads. The same edges as `seen_edges`, for one index lookup per edge (its
    facts), a second only for an edge no fact stands behind (its events)."""
    return (
        "(SELECT r.* FROM entity_relationships r WHERE r.world_id = %(w)s AND (%(u)s::text IS NULL OR coalesce("
        " (SELECT bool_or(m.user_id = %(u)s) FROM semantic_memories m WHERE m.world_id = r.world_id "
        "  AND m.memory_id = ANY (r.source_memory_ids)), "
        " (SELECT coalesce(bool_or(e.user_id = %(u)s), TRUE) FROM chat_events e WHERE e.world_id = r.world_id "
        "  AND e.event_id = ANY (r.evidence_event_ids)))))"
    )


def edge_columns(alias: str) -> str:
    """The Relationship columns of an edge read from `seen_edges()` under `alias`."""
    return ", ".join(f"{alias}.{c.strip()}" for c in _COLUMNS.split(","))
