"""PostgreSQL repository: the documents the keyword index holds (and the search shows), by kind and id,
and the entity vectors made of them."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from engram.adapters.postgres.base import PostgresBase, to_vector
from engram.model.search import DocKind, IndexDocument

_SPEAKER = "coalesce(nullif(metadata->>'speaker', ''), CASE WHEN role = 'user' THEN user_id ELSE role END)"
_FACT_TEXT = ("coalesce(s.name, m.subject_entity_id) || ' ' || replace(m.predicate, '_', ' ') || ' ' || "
              "m.object_value")


class SearchRepo(PostgresBase):
    def documents(self, world_id: str, refs: Sequence[tuple[DocKind, str]]) -> list[IndexDocument]:
        """The indexable text and metadata of rows, by (kind, id), in the order asked; missing rows skipped."""
        wanted: dict[str, list[str]] = defaultdict(list)
        for kind, doc_id in refs:
            wanted[kind].append(doc_id)
        found: dict[tuple[str, str], IndexDocument] = {}
        with self.tx(world_id) as cur:
            for wanted_kind, ids in wanted.items():
                cur.execute(DOCUMENT_SQL[wanted_kind], (world_id, ids))
                for r in cur.fetchall():
                    found[(wanted_kind, r["doc_id"])] = IndexDocument.model_validate(
                        {"world_id": world_id, "kind": wanted_kind, **r})
        return [found[(k, i)] for k, i in refs if (k, i) in found]

    def set_entity_embeddings(self, world_id: str, embeddings: dict[str, Sequence[float]]) -> None:
        with self.tx(world_id) as cur:
            cur.executemany("UPDATE canonical_entities SET embedding = %s WHERE world_id = %s AND entity_id = %s",
                            [(to_vector(v), world_id, k) for k, v in embeddings.items()])


# A summary's or pattern's events: the events among its sources, then the sources of the facts among them.
_SOURCE_EVENTS = (
    "ARRAY(SELECT x FROM (SELECT s.x, s.n FROM unnest({table}.source_ids) WITH ORDINALITY AS s(x, n) "
    " WHERE EXISTS (SELECT 1 FROM chat_events ev WHERE ev.world_id = {table}.world_id AND ev.event_id = s.x) "
    " UNION ALL SELECT f.x, 1000000 + s.n FROM unnest({table}.source_ids) WITH ORDINALITY AS s(id, n) "
    " JOIN semantic_memories sm ON sm.world_id = {table}.world_id AND sm.memory_id = s.id "
    " CROSS JOIN LATERAL unnest(sm.source_event_ids) AS f(x)) q GROUP BY x ORDER BY min(n))"
)
# A fact happened when it became true, in the conversation of the event that first stated it (`m`, without a filter).
FACT_DOCUMENT = (
    f"SELECT m.memory_id AS doc_id, {_FACT_TEXT} AS text, m.user_id, coalesce(m.valid_from, m.created_at) "
    "AS occurred_at, (SELECT ev.conversation_id FROM chat_events ev WHERE ev.world_id = m.world_id "
    "AND ev.event_id = m.source_event_ids[1]) AS conversation_id, "
    "m.confidence AS importance, array_remove(ARRAY[m.subject_entity_id, m.object_entity_id], NULL) AS entity_ids, "
    "m.source_event_ids AS event_ids, m.confidence, m.reinforcement_count AS reinforcements, "
    "m.last_validated_at AS validated_at FROM semantic_memories m LEFT JOIN canonical_entities s ON s.world_id = m.world_id "
    "AND s.entity_id = m.subject_entity_id "
)
DOCUMENT_SQL: dict[str, str] = {
    "event": (
        # An event reads as who said what ("Dana: I moved to Lisbon"), as its vector does.
        f"SELECT event_id AS doc_id, {_SPEAKER} || ': ' || content AS text, user_id, conversation_id, "
        f"{_SPEAKER} AS speaker, "
        # The entities an event involves: those it names, and its speaker (what "I" stands for).
        "occurred_at, importance, coalesce((SELECT array_agg(DISTINCT x.id) FROM (SELECT m.entity_id FROM entity_mentions m "
        " WHERE m.world_id = e.world_id AND m.event_id = e.event_id AND m.entity_id IS NOT NULL UNION ALL "
        " SELECT c.entity_id FROM canonical_entities c WHERE c.world_id = e.world_id "
        " AND c.external_ref = 'user:' || e.user_id) AS x(id)), '{}') AS entity_ids, "
        "ARRAY[event_id] AS event_ids FROM chat_events e WHERE world_id = %s AND event_id = ANY(%s)"
    ),
    "episodic": (
        "SELECT memory_id AS doc_id, content AS text, user_id, conversation_id, occurred_at, importance, entity_ids, "
        "event_ids FROM episodic_memories WHERE world_id = %s AND memory_id = ANY(%s) AND status = 'active'"
    ),
    "semantic": FACT_DOCUMENT + "WHERE m.world_id = %s AND m.memory_id = ANY(%s) AND m.status = 'active'",
    "summary": (
        "SELECT summary_id AS doc_id, content AS text, user_id, CASE WHEN scope_kind = 'conversation' "
        "THEN scope_id END AS conversation_id, created_at AS occurred_at, confidence AS importance, confidence, "
        "created_at AS validated_at, "
        f"{_SOURCE_EVENTS.format(table='memory_summaries')} AS event_ids FROM memory_summaries WHERE world_id = %s AND summary_id = ANY(%s)"
    ),
    "procedural": (
        "SELECT memory_id AS doc_id, pattern AS text, user_id, created_at AS occurred_at, confidence AS importance, "
        f"{_SOURCE_EVENTS.format(table='procedural_memories')} AS event_ids FROM procedural_memories WHERE world_id = %s AND memory_id = ANY(%s) AND status = 'active'"
    ),
    "entity": (
        "SELECT e.entity_id AS doc_id, e.name || coalesce(' (' || (SELECT string_agg(DISTINCT a.alias, ', ') "
        "FROM entity_aliases a WHERE a.world_id = e.world_id AND a.entity_id = e.entity_id AND a.alias <> e.name) "
        "|| ')', '') || coalesce(': ' || e.description, '') AS text, ARRAY[e.entity_id] AS entity_ids, "
        "e.created_at AS occurred_at FROM canonical_entities e WHERE e.world_id = %s AND e.entity_id = ANY(%s)"
    ),
}
