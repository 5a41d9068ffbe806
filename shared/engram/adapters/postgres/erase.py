"""Erasing a user in one transaction: the rows of their events, memories, signals and queries; what was made only of
their words (entities, aliases, edges, summaries, episodes, patterns, inflections); and what other users' rows held of
theirs (restatements, contradictions, answers that cited them, vectors read after their turns)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from psycopg import Cursor

from engram.adapters.postgres.base import PostgresBase, Row
from engram.adapters.postgres.erase_others import (
    WITHOUT,
    drop_restatements,
    restore_overturned,
    strip_conversations,
    strip_relationships,
    withdraw_answers,
)
from engram.adapters.postgres.evidence import lock_user
from engram.model.events import ErasedRows
from engram.model.search import DocKind

# Tables whose rows belong to one user through a `user_id` column. A test checks that every table of the schema
# with a `user_id` column is listed here or in CLEARED_ELSEWHERE, so no new table is forgotten.
USER_TABLES = ("chat_events", "episodic_memories", "semantic_memories", "procedural_memories", "memory_summaries",
               "signals", "world_queries", "entity_aliases", "memory_audit")
CLEARED_ELSEWHERE = {"keyword_documents": "the keyword index port erases it (delete_world_user)"}
KEPT = {"erased_users": "the tombstone: who was erased and when; it holds nothing they said"}
# The key of each table erased from, and the keyword-index document kind of its rows.
_KEY = {"chat_events": "event_id", "episodic_memories": "memory_id", "semantic_memories": "memory_id",
        "procedural_memories": "memory_id", "memory_summaries": "summary_id", "canonical_entities": "entity_id",
        "signals": "signal_id", "world_queries": "query_id", "entity_aliases": "entity_id",
        "memory_conflicts": "conflict_id", "query_contexts": "query_id", "entity_relationships": "relationship_id",
        "inflections": "inflection_id", "interventions": "intervention_id", "signal_cursors": "conversation_id",
        "insight_states": "conversation_id", "memory_audit": "audit_id"}
_DOC_KIND: dict[str, DocKind] = {"chat_events": "event", "episodic_memories": "episodic", "semantic_memories": "semantic",
             "procedural_memories": "procedural", "memory_summaries": "summary", "canonical_entities": "entity"}


class EraseRepo(PostgresBase):
    def erase_user(self, world_id: str, user_id: str) -> ErasedRows:
        """Erase a user's rows and everything made only of them, and take theirs out of other users' rows, in one
        transaction; returns the counts and what the domain rebuilds after it."""
        with self.tx(world_id) as cur:
            return ErasureStep(cur, world_id, user_id).run()

    def erasures(self, world_id: str) -> int:
        """How many erasures the world has had: a step that sees it change between a read and a write knows an
        erasure came in between."""
        with self.tx(world_id) as cur:
            cur.execute("SELECT coalesce(sum(erasures), 0) AS n FROM erased_users WHERE world_id = %s", (world_id,))
            return int(cur.fetchone()["n"])  # type: ignore[index]


class ErasureStep:
    """One erasure, step by step. The user's events go first, locked in key order: an enrichment write that
    derives from one of them holds it until it commits, so every later statement here (each reads anew) sees
    what such a write left, and removes it."""

    def __init__(self, cur: Cursor[Row], world_id: str, user_id: str) -> None:
        self.cur, self.w, self.u = cur, world_id, user_id
        self.deleted: Counter[str] = Counter()
        self.rebuilt: Counter[str] = Counter()
        self.documents: dict[tuple[DocKind, str], None] = {}  # keyword-index documents to delete, in order
        self.changed_entities: set[str] = set()  # entities kept whose index document changes

    def rows(self, sql: str, params: dict[str, Any] | None = None) -> list[Row]:
        self.cur.execute(sql, {"w": self.w, "u": self.u, **(params or {})})
        return self.cur.fetchall() if self.cur.description else []

    def delete(self, table: str, where: str, params: dict[str, Any] | None = None, also: str = "") -> list[Row]:
        """Delete rows of the world; returns their keys (as `id`, with `also` columns), counted by table, their
        index documents noted."""
        found = self.rows(f"DELETE FROM {table} WHERE world_id = %(w)s AND ({where}) "
                          f"RETURNING {_KEY[table]} AS id{', ' + also if also else ''}", params)
        self.deleted[table] += len(found)
        if table in _DOC_KIND:
            self.documents.update({(_DOC_KIND[table], r["id"]): None for r in found})
        return found

    def run(self) -> ErasedRows:
        # The tombstone first, under the user's lock: a running query of theirs finishes before, or finds it.
        lock_user(self.cur, self.w, self.u, alone=True)
        erased_at = self.rows(
            "INSERT INTO erased_users (world_id, user_id) VALUES (%(w)s, %(u)s) ON CONFLICT (world_id, user_id) "
            "DO UPDATE SET erased_at = now(), erasures = erased_users.erasures + 1 RETURNING erased_at AS at")[0]["at"]
        events, conversations, to_embed = self.events()
        memories = [r["id"] for r in self.rows(
            "SELECT memory_id AS id FROM episodic_memories WHERE world_id = %(w)s AND user_id = %(u)s UNION ALL "
            "SELECT memory_id FROM semantic_memories WHERE world_id = %(w)s AND user_id = %(u)s UNION ALL "
            "SELECT memory_id FROM procedural_memories WHERE world_id = %(w)s AND user_id = %(u)s")]
        signals = [r["id"] for r in self.rows("SELECT signal_id AS id FROM signals WHERE world_id = %(w)s "
                                              "AND (user_id = %(u)s OR event_id = ANY(%(e)s::text[]))", {"e": events})]
        candidates = self.touched_entities(events, memories)
        restored = restore_overturned(self, memories)
        restated, to_enrich = drop_restatements(self, events, memories)

        # The user's own rows.
        self.delete("memory_conflicts", "memory_id = ANY(%(m)s::text[]) OR conflicting_memory_id = ANY(%(m)s::text[])",
                    {"m": memories})
        self.delete("query_contexts", "query_id IN (SELECT query_id FROM world_queries WHERE world_id = %(w)s "
                                      "AND user_id = %(u)s)")
        self.rows("DELETE FROM entity_mentions WHERE world_id = %(w)s AND event_id = ANY(%(e)s::text[])", {"e": events})
        self.deleted["entity_mentions"] += self.cur.rowcount
        for table in USER_TABLES[1:]:
            found = self.delete(table, "user_id = %(u)s")
            if table == "entity_aliases":  # the user's own names for entities: their documents list them
                self.changed_entities.update(r["id"] for r in found)
        self.delete("signals", "signal_id = ANY(%(s)s::text[])", {"s": signals})

        # Other users' rows made with the user's words.
        episodes = self.delete("episodic_memories", "event_ids && %(e)s::text[]", {"e": events}, also="event_ids")
        to_enrich += [x for r in episodes for x in r["event_ids"]]  # the user's own are taken out below
        sources = [*events, *memories, *(r["id"] for r in episodes)]
        gone = self.gone(conversations)
        self.delete("memory_summaries", "source_ids && %(s)s::text[] OR (scope_kind = 'user' AND scope_id = %(u)s) "
                    "OR (scope_kind = 'conversation' AND scope_id = ANY(%(gone)s::text[]))", {"s": sources, "gone": gone})
        self.delete("procedural_memories", "source_ids && %(s)s::text[]", {"s": sources})
        strip_relationships(self, events, memories)
        strip_conversations(self, events, signals, gone)
        entities = self.erase_entities(events, candidates)
        withdraw_answers(self, [*sources, *signals, *entities, *(doc_id for _kind, doc_id in self.documents)])
        self.refresh_outbox(restored)
        if to_embed:  # read after an erased turn: made again in the domain, from the turn before them now
            self.rows("UPDATE chat_events SET context_embedding = NULL WHERE world_id = %(w)s "
                      "AND event_id = ANY(%(x)s::text[])", {"x": to_embed})
            self.rebuilt["chat_events"] += self.cur.rowcount
        return ErasedRows(deleted={t: n for t, n in self.deleted.items() if n},
                          rebuilt={t: n for t, n in self.rebuilt.items() if n}, documents=list(self.documents),
                          facts_restated=restated, facts_restored=restored, events_to_embed=to_embed,
                          events_to_enrich=sorted(set(to_enrich) - set(events)), erased_at=erased_at)

    # ------------------------------------------------------------ the user's events
    def events(self) -> tuple[list[str], list[str], list[str]]:
        """Lock (in key order) and delete the user's events. Returns their ids, their conversations, and the other
        users' events that came right after one of them (their vector in context was read after the erased turn)."""
        self.rows("SELECT event_id FROM chat_events WHERE world_id = %(w)s AND user_id = %(u)s "
                  "ORDER BY event_id FOR UPDATE")
        after = [r["id"] for r in self.rows(
            "SELECT DISTINCT n.event_id AS id FROM chat_events e CROSS JOIN LATERAL (SELECT x.event_id, x.user_id "
            " FROM chat_events x WHERE x.world_id = e.world_id AND x.conversation_id = e.conversation_id "
            " AND (x.occurred_at, x.event_id) > (e.occurred_at, e.event_id) "
            " ORDER BY x.occurred_at, x.event_id LIMIT 1) n "
            "WHERE e.world_id = %(w)s AND e.user_id = %(u)s AND n.user_id <> %(u)s ORDER BY 1")]
        gone = self.delete("chat_events", "user_id = %(u)s", also="conversation_id")
        return [r["id"] for r in gone], sorted({r["conversation_id"] for r in gone}), after

    def gone(self, conversations: Sequence[str]) -> list[str]:
        """The conversations none of whose events remain."""
        return [r["c"] for r in self.rows(
            "SELECT c FROM unnest(%(c)s::text[]) c WHERE NOT EXISTS (SELECT 1 FROM chat_events e "
            "WHERE e.world_id = %(w)s AND e.conversation_id = c)", {"c": list(conversations)})]

    def touched_entities(self, events: Sequence[str], memories: Sequence[str]) -> list[str]:
        """The entities the user's words touched: created from, named in, stated about, learned an alias for,
        linked by their facts, and the user's own. Read before any of it goes."""
        return [r["id"] for r in self.rows(
            "SELECT entity_id AS id FROM canonical_entities WHERE world_id = %(w)s "
            " AND (origin_event_id = ANY(%(e)s::text[]) OR external_ref = 'user:' || %(u)s) "
            "UNION SELECT entity_id FROM entity_mentions WHERE world_id = %(w)s AND event_id = ANY(%(e)s::text[]) "
            " AND entity_id IS NOT NULL "
            "UNION SELECT unnest(ARRAY[subject_entity_id, object_entity_id]) FROM semantic_memories "
            " WHERE world_id = %(w)s AND memory_id = ANY(%(m)s::text[]) "
            "UNION SELECT entity_id FROM entity_aliases WHERE world_id = %(w)s "
            " AND (user_id = %(u)s OR origin_event_ids && %(e)s::text[]) "
            "UNION SELECT unnest(entity_ids) FROM episodic_memories WHERE world_id = %(w)s "
            " AND (memory_id = ANY(%(m)s::text[]) OR event_ids && %(e)s::text[]) "
            "UNION SELECT unnest(ARRAY[source_entity_id, target_entity_id]) FROM entity_relationships "
            " WHERE world_id = %(w)s AND (evidence_event_ids && %(e)s::text[] OR source_memory_ids && %(m)s::text[])",
            {"e": list(events), "m": list(memories)}) if r["id"] is not None]

    # ------------------------------------------------------------ entities
    def erase_entities(self, events: Sequence[str], candidates: Sequence[str]) -> list[str]:
        """Aliases only the user's words taught go; of the entities the user touched, those nothing of anyone else
        refers to any more go (their aliases with them), the others stay as the others know them. Returns the
        entities deleted."""
        e = {"e": list(events)}
        for r in self.rows("DELETE FROM entity_aliases WHERE world_id = %(w)s AND origin_event_ids <> '{}' "
                           "AND origin_event_ids <@ %(e)s::text[] RETURNING entity_id", e):
            self.deleted["entity_aliases"] += 1
            self.changed_entities.add(r["entity_id"])
        self.rows(f"UPDATE entity_aliases SET origin_event_ids = {WITHOUT.format(column='origin_event_ids', ids='e')} "
                  "WHERE world_id = %(w)s AND origin_event_ids && %(e)s::text[]", e)
        if not candidates:
            return []
        c = {"c": sorted(candidates), **e}
        # Locked before they are weighed: a write naming one of them (it locks it too) either ends first, and is
        # seen below, or waits and finds it gone.
        self.rows("SELECT entity_id FROM canonical_entities WHERE world_id = %(w)s AND entity_id = ANY(%(c)s::text[]) "
                  "ORDER BY entity_id FOR UPDATE", c)
        deleted = [r["id"] for r in self.delete(
            "canonical_entities",
            "entity_id = ANY(%(c)s::text[]) AND (external_ref IS NULL OR external_ref = 'user:' || %(u)s) "
            "AND (origin_event_id IS NULL OR origin_event_id = ANY(%(e)s::text[])) "
            "AND NOT EXISTS (SELECT 1 FROM entity_mentions x WHERE x.world_id = canonical_entities.world_id "
            " AND x.entity_id = canonical_entities.entity_id) "
            "AND NOT EXISTS (SELECT 1 FROM semantic_memories x WHERE x.world_id = canonical_entities.world_id "
            " AND canonical_entities.entity_id IN (x.subject_entity_id, x.object_entity_id)) "
            "AND NOT EXISTS (SELECT 1 FROM entity_relationships x WHERE x.world_id = canonical_entities.world_id "
            " AND canonical_entities.entity_id IN (x.source_entity_id, x.target_entity_id)) "
            "AND NOT EXISTS (SELECT 1 FROM episodic_memories x WHERE x.world_id = canonical_entities.world_id "
            " AND canonical_entities.entity_id = ANY(x.entity_ids)) "
            "AND NOT EXISTS (SELECT 1 FROM entity_aliases x WHERE x.world_id = canonical_entities.world_id "
            " AND x.entity_id = canonical_entities.entity_id AND (x.user_id <> '' OR x.origin_event_ids <> '{}')) "
            "AND NOT EXISTS (SELECT 1 FROM memory_summaries x WHERE x.world_id = canonical_entities.world_id "
            " AND x.scope_kind = 'entity' AND x.scope_id = canonical_entities.entity_id)", c)]
        # Kept: made from the user's words but others' now; the user's own entity is a person others speak of.
        self.rows("UPDATE canonical_entities SET origin_event_id = NULL WHERE world_id = %(w)s "
                  "AND entity_id = ANY(%(c)s::text[]) AND origin_event_id = ANY(%(e)s::text[])", c)
        for r in self.rows("UPDATE canonical_entities SET external_ref = NULL, description = NULL "
                           "WHERE world_id = %(w)s AND external_ref = 'user:' || %(u)s RETURNING entity_id"):
            self.changed_entities.add(r["entity_id"])
            self.rebuilt["canonical_entities"] += 1
        self.changed_entities -= set(deleted)
        return deleted

    # ------------------------------------------------------------ the index

    def refresh_outbox(self, restored: Sequence[str]) -> None:
        """The index outbox forgets the erased documents and learns of the ones that changed."""
        kinds, ids = [k for k, _ in self.documents], [d for _, d in self.documents]
        self.rows("DELETE FROM index_outbox WHERE world_id = %(w)s AND (kind, doc_id) IN "
                  "(SELECT * FROM unnest(%(k)s::text[], %(d)s::text[]))", {"k": kinds, "d": ids})
        self.deleted["index_outbox"] += self.cur.rowcount
        changed = [("semantic", m) for m in restored] + [("entity", x) for x in sorted(self.changed_entities)]
        if changed:
            self.rows("INSERT INTO index_outbox (world_id, kind, doc_id, op) SELECT %(w)s, k, d, 'upsert' "
                      "FROM unnest(%(k)s::text[], %(d)s::text[]) AS u(k, d)",
                      {"k": [k for k, _ in changed], "d": [d for _, d in changed]})
