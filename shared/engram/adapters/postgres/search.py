"""PostgreSQL repository: the semantic brain (pgvector HNSW) and the documents the keyword index holds."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from engram.adapters.postgres.base import PostgresBase, to_vector
from engram.model.search import DocKind, IndexDocument, SemanticHit

# kind -> (table, id column, extra filter); each searched with its own ORDER BY ... LIMIT so the HNSW index serves it
_VECTOR_TABLES: dict[str, tuple[str, str, str]] = {
    "event": ("chat_events", "event_id", "TRUE"),
    "episodic": ("episodic_memories", "memory_id", "status = 'active'"),
    "semantic": ("semantic_memories", "memory_id", "status = 'active'"),
    "summary": ("memory_summaries", "summary_id", "TRUE"),
    "procedural": ("procedural_memories", "memory_id", "status = 'active'"),
    "entity": ("canonical_entities", "entity_id", "TRUE"),
}
_FACT_TEXT = ("coalesce(s.name, m.subject_entity_id) || ' ' || replace(m.predicate, '_', ' ') || ' ' || "
              "m.object_value")


class SearchRepo(PostgresBase):
    def semantic_search(self, world_id: str, embedding: Sequence[float], *, user_id: str | None,
                        kinds: Sequence[DocKind], limit: int, min_similarity: float) -> list[SemanticHit]:
        """Nearest rows by cosine similarity (1 - distance), best first, within the world (and user)."""
        vector = to_vector(embedding)
        hits: list[SemanticHit] = []
        with self.tx(world_id) as cur:
            for kind in kinds:
                table, id_col, extra = _VECTOR_TABLES[kind]
                user_filter = "TRUE" if user_id is None or kind == "entity" else "(user_id = %s OR user_id IS NULL)"
                params: list[object] = [vector, world_id]
                if user_filter != "TRUE":
                    params.append(user_id)
                params += [vector, limit]
                cur.execute(
                    f"SELECT {id_col} AS id, 1 - (embedding <=> %s) AS sim FROM {table} WHERE world_id = %s "
                    f"AND embedding IS NOT NULL AND {extra} AND {user_filter} ORDER BY embedding <=> %s LIMIT %s",
                    params,
                )
                hits += [SemanticHit(doc_id=r["id"], kind=kind, score=float(r["sim"])) for r in cur.fetchall()
                         if float(r["sim"]) >= min_similarity]
        hits.sort(key=lambda h: h.score, reverse=True)
        return hits[:limit]

    def documents(self, world_id: str, refs: Sequence[tuple[DocKind, str]]) -> list[IndexDocument]:
        """The indexable text and metadata of rows, by (kind, id), in the order asked; missing rows skipped."""
        wanted: dict[str, list[str]] = defaultdict(list)
        for kind, doc_id in refs:
            wanted[kind].append(doc_id)
        found: dict[tuple[str, str], IndexDocument] = {}
        with self.tx(world_id) as cur:
            for wanted_kind, ids in wanted.items():
                cur.execute(_DOCUMENT_SQL[wanted_kind], (world_id, ids))
                for r in cur.fetchall():
                    found[(wanted_kind, r["doc_id"])] = IndexDocument.model_validate(
                        {"world_id": world_id, "kind": wanted_kind, **r})
        return [found[(k, i)] for k, i in refs if (k, i) in found]


_DOCUMENT_SQL: dict[str, str] = {
    "event": (
        "SELECT event_id AS doc_id, content AS text, user_id, conversation_id, "
        "coalesce(metadata->>'speaker', CASE WHEN role = 'user' THEN user_id ELSE role END) AS speaker, "
        "occurred_at, importance, coalesce((SELECT array_agg(DISTINCT m.entity_id) FROM entity_mentions m "
        " WHERE m.world_id = e.world_id AND m.event_id = e.event_id AND m.entity_id IS NOT NULL), '{}') AS entity_ids "
        "FROM chat_events e WHERE world_id = %s AND event_id = ANY(%s)"
    ),
    "episodic": (
        "SELECT memory_id AS doc_id, content AS text, user_id, conversation_id, occurred_at, importance, entity_ids "
        "FROM episodic_memories WHERE world_id = %s AND memory_id = ANY(%s) AND status = 'active'"
    ),
    "semantic": (
        f"SELECT m.memory_id AS doc_id, {_FACT_TEXT} AS text, m.user_id, m.created_at AS occurred_at, "
        "m.confidence AS importance, array_remove(ARRAY[m.subject_entity_id, m.object_entity_id], NULL) AS entity_ids "
        "FROM semantic_memories m LEFT JOIN canonical_entities s ON s.world_id = m.world_id "
        "AND s.entity_id = m.subject_entity_id WHERE m.world_id = %s AND m.memory_id = ANY(%s) AND m.status = 'active'"
    ),
    "summary": (
        "SELECT summary_id AS doc_id, content AS text, user_id, CASE WHEN scope_kind = 'conversation' "
        "THEN scope_id END AS conversation_id, created_at AS occurred_at, confidence AS importance "
        "FROM memory_summaries WHERE world_id = %s AND summary_id = ANY(%s)"
    ),
    "procedural": (
        "SELECT memory_id AS doc_id, pattern AS text, user_id, created_at AS occurred_at, confidence AS importance "
        "FROM procedural_memories WHERE world_id = %s AND memory_id = ANY(%s) AND status = 'active'"
    ),
    "entity": (
        "SELECT e.entity_id AS doc_id, e.name || coalesce(' (' || (SELECT string_agg(DISTINCT a.alias, ', ') "
        "FROM entity_aliases a WHERE a.world_id = e.world_id AND a.entity_id = e.entity_id AND a.alias <> e.name) "
        "|| ')', '') || coalesce(': ' || e.description, '') AS text, ARRAY[e.entity_id] AS entity_ids, "
        "e.created_at AS occurred_at FROM canonical_entities e WHERE e.world_id = %s AND e.entity_id = ANY(%s)"
    ),
}
