"""What erasing a user takes out of other users' rows: the facts the erased user restated or overturned, the edges
and conversations their facts and turns fed, the answers that cited them. Steps of one erasure (`erase.ErasureStep`),
in its transaction."""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Sequence
from typing import Any, Protocol

from engram.adapters.postgres.base import Row


class ErasureStep(Protocol):
    """What these repairs use of one erasure in progress (`erase.ErasureStep`)."""

    rebuilt: Counter[str]  # rows repaired, by table

    def rows(self, sql: str, params: dict[str, Any] | None = None) -> list[Row]: ...

    def delete(self, table: str, where: str, params: dict[str, Any] | None = None, also: str = "") -> list[Row]: ...

WITHDRAWN = "withdrawn: its answer drew on the memory of a user who was erased"
# An array column without the ids of a named parameter: `WITHOUT.format(column=..., ids=...)`.
WITHOUT = "ARRAY(SELECT x FROM unnest({column}) x WHERE x <> ALL(%({ids})s::text[]))"


def restore_overturned(step: ErasureStep, memories: Sequence[str]) -> list[str]:
    """Other users' facts that one of the user's facts won a conflict against, and nothing else overturned:
    active again (the domain puts their edges back)."""
    restored = [r["id"] for r in step.rows(
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
    step.rebuilt["semantic_memories"] += len(restored)
    return restored


def drop_restatements(step: ErasureStep, events: Sequence[str], memories: Sequence[str]) -> tuple[list[str], list[str]]:
    """Other users' facts lose the user's events among their sources (their restatements): the count and the
    last validation follow from the sources left (the domain derives the confidence again). Returns those
    facts, and the other users' events among the sources of the user's own facts (restatements that
    reinforced the user's fact instead of making one of their own: enriched again, they make it)."""
    touched = step.rows(
        "WITH touched AS (SELECT memory_id, cardinality(source_event_ids) AS had, "
        f" {WITHOUT.format(column='source_event_ids', ids='e')} AS kept FROM semantic_memories "
        " WHERE world_id = %(w)s AND user_id <> %(u)s AND source_event_ids && %(e)s::text[]) "
        "UPDATE semantic_memories f SET source_event_ids = t.kept, "
        " reinforcement_count = greatest(0, f.reinforcement_count - (t.had - cardinality(t.kept))), "
        " last_validated_at = coalesce((SELECT max(ev.occurred_at) FROM chat_events ev "
        "  WHERE ev.world_id = f.world_id AND ev.event_id = ANY(t.kept)), f.last_validated_at) "
        "FROM touched t WHERE f.world_id = %(w)s AND f.memory_id = t.memory_id "
        "RETURNING f.memory_id AS id, cardinality(t.kept) AS remaining", {"e": list(events)})
    empty = [r["id"] for r in touched if not r["remaining"]]
    if empty:
        step.delete("semantic_memories", "memory_id = ANY(%(x)s::text[])", {"x": empty})
    restated = [r["id"] for r in touched if r["remaining"]]
    step.rebuilt["semantic_memories"] += len(restated)
    theirs = [r["id"] for r in step.rows(
        "SELECT DISTINCT x AS id FROM semantic_memories, unnest(source_event_ids) x WHERE world_id = %(w)s "
        "AND memory_id = ANY(%(m)s::text[]) AND x <> ALL(%(e)s::text[])",
        {"m": list(memories), "e": list(events)})]
    return restated, theirs


def strip_relationships(step: ErasureStep, events: Sequence[str], memories: Sequence[str]) -> None:
    """Edges keep only the evidence of others, as sure as the facts left behind them; an edge that stood for
    the user's facts alone goes."""
    touched = step.rows(
        "WITH touched AS (SELECT relationship_id, source_memory_ids AS had, "
        f" {WITHOUT.format(column='source_memory_ids', ids='m')} AS sources, "
        f" {WITHOUT.format(column='evidence_event_ids', ids='e')} AS evidence FROM entity_relationships "
        " WHERE world_id = %(w)s AND (source_memory_ids && %(m)s::text[] OR evidence_event_ids && %(e)s::text[])) "
        "UPDATE entity_relationships r SET source_memory_ids = t.sources, evidence_event_ids = t.evidence, "
        " confidence = coalesce((SELECT max(f.confidence) FROM semantic_memories f WHERE f.world_id = r.world_id "
        "  AND f.memory_id = ANY(t.sources) AND f.status = 'active'), r.confidence), updated_at = now() "
        "FROM touched t WHERE r.world_id = %(w)s AND r.relationship_id = t.relationship_id "
        "RETURNING r.relationship_id AS id, t.sources = '{}' AND (t.had <> '{}' OR t.evidence = '{}') AS orphan",
        {"e": list(events), "m": list(memories)})
    orphans = [r["id"] for r in touched if r["orphan"]]
    if orphans:
        step.delete("entity_relationships", "relationship_id = ANY(%(x)s::text[])", {"x": orphans})
    step.rebuilt["entity_relationships"] += len(touched) - len(orphans)


def strip_conversations(step: ErasureStep, events: Sequence[str], signals: Sequence[str], gone: Sequence[str]) -> None:
    """A conversation none of whose events remain loses its state; a shared one loses the inflections read
    from the user's turns, their signals from its interventions and their turns from its signal cursor."""
    for table in ("signal_cursors", "insight_states", "inflections", "interventions"):
        step.delete(table, "conversation_id = ANY(%(gone)s::text[])", {"gone": list(gone)})
    step.delete("inflections", "event_ids && %(e)s::text[] OR signal_ids && %(s)s::text[]",
                {"e": list(events), "s": list(signals)})
    kept = step.rows(
        f"UPDATE interventions SET signal_ids = {WITHOUT.format(column='signal_ids', ids='s')} "
        "WHERE world_id = %(w)s AND signal_ids && %(s)s::text[] RETURNING intervention_id AS id, "
        "cardinality(signal_ids) AS remaining", {"s": list(signals)})
    step.delete("interventions", "intervention_id = ANY(%(x)s::text[])", {"x": [r["id"] for r in kept
                                                                              if not r["remaining"]]})
    step.rebuilt["interventions"] += sum(1 for r in kept if r["remaining"])
    # A cursor's waiting turns lose the user's (and their characters); a mark on an erased turn moves back to
    # the turn before it (the same place among the turns left), or the cursor starts over when none is left.
    cursors = step.rows(
        "UPDATE signal_cursors c SET "
        f" pending_event_ids = {WITHOUT.format(column='c.pending_event_ids', ids='e')}, "
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
    step.delete("signal_cursors", "conversation_id = ANY(%(x)s::text[])", {"x": lost})
    step.rebuilt["signal_cursors"] += len(cursors) - len(lost)


def withdraw_answers(step: ErasureStep, ids: Collection[str]) -> None:
    """Other users' finished queries whose answer, trace or research cites one of the erased rows keep their
    question and lose what was made of the erased memory; their working context goes."""
    withdrawn = [r["id"] for r in step.rows(
        "UPDATE world_queries q SET answer = NULL, trace = '[]'::jsonb, research = NULL, status = 'failed', "
        " error = %(why)s WHERE q.world_id = %(w)s AND q.user_id <> %(u)s AND q.status IN ('completed', 'failed') "
        " AND EXISTS (SELECT 1 FROM jsonb_path_query(jsonb_build_array(q.answer, q.trace, q.research), "
        "  'strict $.**') j JOIN unnest(%(ids)s::text[]) x ON x = j #>> '{}' WHERE jsonb_typeof(j) = 'string') "
        "RETURNING q.query_id AS id", {"ids": sorted(set(ids)), "why": WITHDRAWN})] if ids else []
    step.rebuilt["world_queries"] += len(withdrawn)
    step.delete("query_contexts", "query_id = ANY(%(q)s::text[])", {"q": withdrawn})
