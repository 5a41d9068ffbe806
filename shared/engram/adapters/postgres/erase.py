"""Erasing a user in one transaction: the rows of their events, memories, signals and queries; what was made only of
their words (entities, aliases, edges, summaries, episodes, patterns, inflections); and what other users' rows held of
theirs (restatements, contradictions, answers that cited them, vectors read after their turns)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Sequence
from typing import Any

from psycopg import Cursor

from engram.adapters.postgres.base import PostgresBase, Row
from engram.adapters.postgres.evidence import lock_user
from engram.model.events import ErasedRows
from engram.model.search import DocKind

# Tables whose rows belong to one user through a `user_id` column. A test checks that every table of the schema
# with a `user_id` column is listed here or in CLEARED_ELSEWHERE, so no new table is forgotten.
USER_TABLES = ("chat_events", "episodic_memories", "semantic_memories", "procedural_memories", "memory_summaries",
               "signals", "world_queries", "entity_aliases")
CLEARED_ELSEWHERE = {"keyword_documents": "the keyword index port erases it (delete_world_user)"}
KEPT = {"erased_users": "the tombstone: who was erased and when; it holds nothing they said"}
# The key of each table erased from, and the keyword-index document kind of its rows.
_KEY = {"chat_events": "event_id", "episodic_memories": "memory_id", "semantic_memories": "memory_id",
        "procedural_memories": "memory_id", "memory_summaries": "summary_id", "canonical_entities": "entity_id",
        "signals": "signal_id", "world_queries": "query_id", "entity_aliases": "entity_id",
        "memory_conflicts": "conflict_id", "query_contexts": "query_id", "entity_relationships": "relationship_id",
        "inflections": "inflection_id", "interventions": "intervention_id", "signal_cursors": "conversation_id",
        "insight_states": "conversation_id"}
_DOC_KIND: dict[str, DocKind] = {"chat_events": "event", "episodic_memories": "episodic", "semantic_memories": "semantic",
             "procedural_memories": "procedural", "memory_summaries": "summary", "canonical_entities": "entity"}
WITHDRAWN = "withdrawn: its answer drew on the memory of a user who was erased"
_WITHOUT = "ARRAY(SELECT x FROM unnest({column}) x WHERE x <> ALL(%({ids})s::text[]))"


class EraseRepo(PostgresBase):
    def erase_user(self, world_id: str, user_id: str) -> ErasedRows:
        """Erase a user's rows and everything made only of them, and take theirs out of other users' rows, in one
        transaction; returns the counts and what the domain rebuilds after it."""
        with self.tx(world_id) as cur:
            return _Erasure(cur, world_id, user_id).run()

    def erasures(self, world_id: str) -> int:
        """How many erasures the world has had: a step that sees it change between a read and a write knows an
        erasure came in between."""
        with self.tx(world_id) as cur:
            cur.execute("SELECT coalesce(sum(erasures), 0) AS n FROM erased_users WHERE world_id = %s", (world_id,))
            return int(cur.fetchone()["n"])  # type: ignore[index]


class _Erasure:
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
        restored = self.restore_overturned(memories)
        restated, to_enrich = self.drop_restatements(events, memories)

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
        to_enrich += [x for r in episodes for x in r["event_ids"] if x not in set(events)]
        sources = [*events, *memories, *(r["id"] for r in episodes)]
        gone = self.gone(conversations)
        self.delete("memory_summaries", "source_ids && %(s)s::text[] OR (scope_kind = 'user' AND scope_id = %(u)s) "
                    "OR (scope_kind = 'conversation' AND scope_id = ANY(%(gone)s::text[]))", {"s": sources, "gone": gone})
        self.delete("procedural_memories", "source_ids && %(s)s::text[]", {"s": sources})
        self.strip_relationships(events, memories)
        self.strip_conversations(events, signals, gone)
        entities = self.erase_entities(events, candidates)
        self.withdraw_answers([*sources, *signals, *entities, *(doc_id for _kind, doc_id in self.documents)])
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

    # ------------------------------------------------------------ other users' facts
    def restore_overturned(self, memories: Sequence[str]) -> list[str]:
        """Other users' facts that one of the user's facts won a conflict against, and nothing else overturned:
        active again (the domain puts their edges back)."""
        restored = [r["id"] for r in self.rows(
            "WITH losers AS (SELECT DISTINCT s.memory_id FROM memory_conflicts c JOIN semantic_memories s "
            " ON s.world_id = c.world_id AND s.memory_id IN (c.memory_id, c.conflicting_memory_id) "
            " WHERE c.world_id = %(w)s AND c.winner_memory_id = ANY(%(m)s::text[]) "
            " AND s.memory_id <> ALL(%(m)s::text[]) AND s.status = 'superseded' "
            " AND NOT EXISTS (SELECT 1 FROM memory_conflicts o WHERE o.world_id = c.world_id "
            "  AND s.memory_id IN (o.memory_id, o.conflicting_memory_id) AND o.winner_memory_id <> s.memory_id "
            "  AND o.winner_memory_id <> ALL(%(m)s::text[]))) "
            "UPDATE semantic_memories f SET status = 'active', valid_to = NULL FROM losers l "
            "WHERE f.world_id = %(w)s AND f.memory_id = l.memory_id RETURNING f.memory_id AS id",
            {"m": list(memories)})] if memories else []
        self.rebuilt["semantic_memories"] += len(restored)
        return restored

    def drop_restatements(self, events: Sequence[str], memories: Sequence[str]) -> tuple[list[str], list[str]]:
        """Other users' facts lose the user's events among their sources (their restatements): the count and the
        last validation follow from the sources left (the domain derives the confidence again). Returns those
        facts, and the other users' events among the sources of the user's own facts (restatements that
        reinforced the user's fact instead of making one of their own: enriched again, they make it)."""
        touched = self.rows(
            "WITH touched AS (SELECT memory_id, cardinality(source_event_ids) AS had, "
            f" {_WITHOUT.format(column='source_event_ids', ids='e')} AS kept FROM semantic_memories "
            " WHERE world_id = %(w)s AND user_id <> %(u)s AND source_event_ids && %(e)s::text[]) "
            "UPDATE semantic_memories f SET source_event_ids = t.kept, "
            " reinforcement_count = greatest(0, f.reinforcement_count - (t.had - cardinality(t.kept))), "
            " last_validated_at = coalesce((SELECT max(ev.occurred_at) FROM chat_events ev "
            "  WHERE ev.world_id = f.world_id AND ev.event_id = ANY(t.kept)), f.last_validated_at) "
            "FROM touched t WHERE f.world_id = %(w)s AND f.memory_id = t.memory_id "
            "RETURNING f.memory_id AS id, cardinality(t.kept) AS remaining", {"e": list(events)})
        empty = [r["id"] for r in touched if not r["remaining"]]
        if empty:
            self.delete("semantic_memories", "memory_id = ANY(%(x)s::text[])", {"x": empty})
        restated = [r["id"] for r in touched if r["remaining"]]
        self.rebuilt["semantic_memories"] += len(restated)
        theirs = [r["id"] for r in self.rows(
            "SELECT DISTINCT x AS id FROM semantic_memories, unnest(source_event_ids) x WHERE world_id = %(w)s "
            "AND memory_id = ANY(%(m)s::text[]) AND x <> ALL(%(e)s::text[])",
            {"m": list(memories), "e": list(events)})]
        return restated, theirs

    # ------------------------------------------------------------ edges and conversations
    def strip_relationships(self, events: Sequence[str], memories: Sequence[str]) -> None:
        """Edges keep only the evidence of others, as sure as the facts left behind them; an edge that stood for
        the user's facts alone goes."""
        touched = self.rows(
            "WITH touched AS (SELECT relationship_id, source_memory_ids AS had, "
            f" {_WITHOUT.format(column='source_memory_ids', ids='m')} AS sources, "
            f" {_WITHOUT.format(column='evidence_event_ids', ids='e')} AS evidence FROM entity_relationships "
            " WHERE world_id = %(w)s AND (source_memory_ids && %(m)s::text[] OR evidence_event_ids && %(e)s::text[])) "
            "UPDATE entity_relationships r SET source_memory_ids = t.sources, evidence_event_ids = t.evidence, "
            " confidence = coalesce((SELECT max(f.confidence) FROM semantic_memories f WHERE f.world_id = r.world_id "
            "  AND f.memory_id = ANY(t.sources) AND f.status = 'active'), r.confidence), updated_at = now() "
            "FROM touched t WHERE r.world_id = %(w)s AND r.relationship_id = t.relationship_id "
            "RETURNING r.relationship_id AS id, t.sources = '{}' AND (t.had <> '{}' OR t.evidence = '{}') AS orphan",
            {"e": list(events), "m": list(memories)})
        orphans = [r["id"] for r in touched if r["orphan"]]
        if orphans:
            self.delete("entity_relationships", "relationship_id = ANY(%(x)s::text[])", {"x": orphans})
        self.rebuilt["entity_relationships"] += len(touched) - len(orphans)

    def strip_conversations(self, events: Sequence[str], signals: Sequence[str], gone: Sequence[str]) -> None:
        """A conversation none of whose events remain loses its state; a shared one loses the inflections read
        from the user's turns, their signals from its interventions and their turns from its signal cursor."""
        for table in ("signal_cursors", "insight_states", "inflections", "interventions"):
            self.delete(table, "conversation_id = ANY(%(gone)s::text[])", {"gone": list(gone)})
        self.delete("inflections", "event_ids && %(e)s::text[] OR signal_ids && %(s)s::text[]",
                    {"e": list(events), "s": list(signals)})
        kept = self.rows(
            f"UPDATE interventions SET signal_ids = {_WITHOUT.format(column='signal_ids', ids='s')} "
            "WHERE world_id = %(w)s AND signal_ids && %(s)s::text[] RETURNING intervention_id AS id, "
            "cardinality(signal_ids) AS remaining", {"s": list(signals)})
        self.delete("interventions", "intervention_id = ANY(%(x)s::text[])", {"x": [r["id"] for r in kept
                                                                                  if not r["remaining"]]})
        self.rebuilt["interventions"] += sum(1 for r in kept if r["remaining"])
        # A cursor's waiting turns lose the user's (and their characters); a mark on an erased turn moves back to
        # the turn before it (the same place among the turns left), or the cursor starts over when none is left.
        cursors = self.rows(
            "UPDATE signal_cursors c SET "
            f" pending_event_ids = {_WITHOUT.format(column='c.pending_event_ids', ids='e')}, "
            " chars_since = (SELECT coalesce(sum(length(ev.content)), 0) FROM chat_events ev "
            "  WHERE ev.world_id = c.world_id AND ev.event_id = ANY(c.pending_event_ids)), "
            " (last_event_id, last_occurred_at) = (SELECT coalesce(p.event_id, c.last_event_id), "
            "  coalesce(p.occurred_at, c.last_occurred_at) FROM (SELECT NULL) one LEFT JOIN LATERAL (SELECT "
            "  ev.event_id, ev.occurred_at FROM chat_events ev WHERE ev.world_id = c.world_id "
            "  AND ev.conversation_id = c.conversation_id AND (ev.occurred_at, ev.event_id) "
            "  <= (c.last_occurred_at, c.last_event_id) ORDER BY ev.occurred_at DESC, ev.event_id DESC LIMIT 1) p "
            "  ON c.last_event_id = ANY(%(e)s::text[])), version = c.version + 1, updated_at = now() "
            "WHERE c.world_id = %(w)s AND (c.pending_event_ids && %(e)s::text[] OR c.last_event_id = ANY(%(e)s::text[])) "
            "RETURNING c.conversation_id AS id, c.last_event_id = ANY(%(e)s::text[]) AS lost",
            {"e": list(events)})
        lost = [r["id"] for r in cursors if r["lost"]]
        self.delete("signal_cursors", "conversation_id = ANY(%(x)s::text[])", {"x": lost})
        self.rebuilt["signal_cursors"] += len(cursors) - len(lost)

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
        self.rows(f"UPDATE entity_aliases SET origin_event_ids = {_WITHOUT.format(column='origin_event_ids', ids='e')} "
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

    # ------------------------------------------------------------ answers and the index
    def withdraw_answers(self, ids: Collection[str]) -> None:
        """Other users' finished queries whose answer, trace or research cites one of the erased rows keep their
        question and lose what was made of the erased memory; their working context goes."""
        withdrawn = [r["id"] for r in self.rows(
            "UPDATE world_queries q SET answer = NULL, trace = '[]'::jsonb, research = NULL, status = 'failed', "
            " error = %(why)s WHERE q.world_id = %(w)s AND q.user_id <> %(u)s AND q.status IN ('completed', 'failed') "
            " AND EXISTS (SELECT 1 FROM jsonb_path_query(jsonb_build_array(q.answer, q.trace, q.research), "
            "  'strict $.**') j JOIN unnest(%(ids)s::text[]) x ON x = j #>> '{}' WHERE jsonb_typeof(j) = 'string') "
            "RETURNING q.query_id AS id", {"ids": sorted(set(ids)), "why": WITHDRAWN})] if ids else []
        self.rebuilt["world_queries"] += len(withdrawn)
        self.delete("query_contexts", "query_id = ANY(%(q)s::text[])", {"q": withdrawn})

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
