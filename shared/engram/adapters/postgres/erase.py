"""Erasing a user: every row the user's events, memories, signals and queries left, in one transaction."""

from __future__ import annotations

from engram.adapters.postgres.base import PostgresBase

# Tables whose rows belong to one user through a `user_id` column. A test checks that every table of
# the schema with a `user_id` column is listed here or in CLEARED_ELSEWHERE, so no new table is forgotten.
USER_TABLES = ("chat_events", "episodic_memories", "semantic_memories", "procedural_memories", "memory_summaries",
               "signals", "world_queries", "entity_aliases")
CLEARED_ELSEWHERE = {"keyword_documents": "the keyword index port erases it (delete_world_user)"}


class EraseRepo(PostgresBase):
    def erase_user(self, world_id: str, user_id: str) -> tuple[dict[str, int], list[str]]:
        """Delete the user's rows and everything derived only from them; returns the rows deleted by table
        and the ids of the entities that went with them (the keyword index must forget those too)."""
        counts: dict[str, int] = {}
        with self.tx(world_id) as cur:
            w, u = world_id, user_id
            cur.execute("SELECT event_id, conversation_id FROM chat_events WHERE world_id = %s AND user_id = %s",
                        (w, u))
            rows = cur.fetchall()
            events = [r["event_id"] for r in rows]
            conversations = sorted({r["conversation_id"] for r in rows})
            cur.execute("SELECT 'episodic' AS kind, memory_id FROM episodic_memories WHERE world_id = %s AND user_id = %s "
                        "UNION ALL SELECT 'semantic', memory_id FROM semantic_memories WHERE world_id = %s AND user_id = %s "
                        "UNION ALL SELECT 'procedural', memory_id FROM procedural_memories WHERE world_id = %s "
                        "AND user_id = %s", (w, u, w, u, w, u))
            memory_docs = [(r["kind"], r["memory_id"]) for r in cur.fetchall()]
            memories = [memory_id for _, memory_id in memory_docs]
            cur.execute("SELECT query_id FROM world_queries WHERE world_id = %s AND user_id = %s", (w, u))
            queries = [r["query_id"] for r in cur.fetchall()]

            def delete(table: str, sql: str, params: tuple[object, ...]) -> None:
                cur.execute(f"DELETE FROM {table} WHERE world_id = %s AND {sql}", (w, *params))
                counts[table] = counts.get(table, 0) + cur.rowcount

            delete("memory_conflicts", "(memory_id = ANY(%s) OR conflicting_memory_id = ANY(%s))", (memories, memories))
            delete("query_contexts", "query_id = ANY(%s)", (queries,))
            delete("entity_mentions", "event_id = ANY(%s)", (events,))
            for table in USER_TABLES:
                delete(table, "user_id = %s", (u,))
            # Edges keep only the evidence of others; an edge only this user's facts supported goes.
            cur.execute(
                "UPDATE entity_relationships SET source_memory_ids = ARRAY(SELECT x FROM unnest(source_memory_ids) x "
                "WHERE x <> ALL(%s)), evidence_event_ids = ARRAY(SELECT x FROM unnest(evidence_event_ids) x "
                "WHERE x <> ALL(%s)) WHERE world_id = %s AND (source_memory_ids && %s OR evidence_event_ids && %s)",
                (memories, events, w, memories, events))
            delete("entity_relationships", "source_memory_ids = '{}' AND evidence_event_ids = '{}'", ())
            # What a conversation accumulated goes when none of its events remain.
            cur.execute("SELECT c FROM unnest(%s::text[]) c WHERE NOT EXISTS (SELECT 1 FROM chat_events e "
                        "WHERE e.world_id = %s AND e.conversation_id = c)", (conversations, w))
            gone = [r["c"] for r in cur.fetchall()]
            for table in ("signal_cursors", "insight_states", "inflections", "interventions"):
                delete(table, "conversation_id = ANY(%s)", (gone,))
            delete("memory_summaries", "scope_kind = 'conversation' AND scope_id = ANY(%s)", (gone,))
            # The user's own entity goes when nothing of anyone else still points at it.
            cur.execute(
                "DELETE FROM canonical_entities ce WHERE ce.world_id = %s AND ce.external_ref = %s "
                "AND NOT EXISTS (SELECT 1 FROM entity_relationships r WHERE r.world_id = ce.world_id "
                "AND ce.entity_id IN (r.source_entity_id, r.target_entity_id)) "
                "AND NOT EXISTS (SELECT 1 FROM semantic_memories m WHERE m.world_id = ce.world_id "
                "AND ce.entity_id IN (m.subject_entity_id, m.object_entity_id)) "
                "AND NOT EXISTS (SELECT 1 FROM entity_mentions em WHERE em.world_id = ce.world_id "
                "AND em.entity_id = ce.entity_id) RETURNING entity_id",
                (w, f"user:{u}"))
            entities = [r["entity_id"] for r in cur.fetchall()]
            counts["canonical_entities"] = len(entities)
            delete("entity_aliases", "entity_id = ANY(%s)", (entities,))
            # By kind and id: another user's fact or entity may carry the id of one of this user's events.
            docs = [("event", e) for e in events] + memory_docs + [("entity", e) for e in entities]
            delete("index_outbox", "(kind, doc_id) IN (SELECT * FROM unnest(%s::text[], %s::text[]))",
                   ([kind for kind, _ in docs], [doc_id for _, doc_id in docs]))
        return {table: n for table, n in counts.items() if n}, entities
