"""PostgreSQL repository: episodic and semantic memories, procedural memories and conflicts."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import psycopg
from psycopg.types.json import Jsonb
from pydantic import BaseModel

from engram.adapters.postgres.base import PostgresBase, Row, to_vector
from engram.adapters.postgres.evidence import existing, live_events, sources_present
from engram.model.memories import EpisodicMemory, MemoryAudit, MemoryConflict, ProceduralMemory, SemanticMemory

_EPISODIC_COLUMNS = ("world_id, memory_id, user_id, conversation_id, content, event_ids, entity_ids, importance, "
                     "occurred_at, status")
_EPISODIC = _EPISODIC_COLUMNS + ", entities"
_SEMANTIC_COLUMNS = ("world_id, memory_id, user_id, subject_entity_id, predicate, object_value, object_entity_id, "
                     "confidence, reinforcement_count, source_event_ids, valid_from, valid_to, status, created_at, "
                     "last_validated_at")
# Facts stored before their factors were kept read with none ('{}' is the column's default).
_SEMANTIC = _SEMANTIC_COLUMNS + ", NULLIF(confidence_factors, '{}'::jsonb) AS factors"
_CONFLICT = ("world_id, conflict_id, memory_id, conflicting_memory_id, status, strategy, reason, created_at, "
             "resolved_at, kind, winner_memory_id, resolved_by, note")
_PROCEDURAL = "world_id, memory_id, user_id, pattern, support_count, source_ids, confidence, created_at"
_AUDIT = "world_id, audit_id, memory_id, user_id, action, before, after, note, request_id, at"
_OUTBOX = "INSERT INTO index_outbox (world_id, kind, doc_id, op) VALUES (%s, %s, %s, 'upsert')"
# A fact true at %(at)s: begun by then (its valid_from, else when it was recorded), not ended by then, not forgotten.
VALID_AT = ("{m}status <> 'archived' AND coalesce({m}valid_from, {m}created_at) <= %(at)s "
            "AND ({m}valid_to IS NULL OR {m}valid_to > %(at)s)")


class MemoryRepo(PostgresBase):
    def insert_episodic(self, memory: EpisodicMemory, embedding: Sequence[float] | None) -> None:
        """Insert (idempotent on memory_id) and queue its index document in the same transaction; nothing when one
        of its events was erased meanwhile (it would quote it)."""
        m = memory
        with self.tx(m.world_id) as cur:
            if live_events(cur, m.world_id, m.event_ids) != set(m.event_ids):
                return
            cur.execute(
                f"INSERT INTO episodic_memories ({_EPISODIC}, embedding) VALUES "
                "(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (world_id, memory_id) DO NOTHING",
                (m.world_id, m.memory_id, m.user_id, m.conversation_id, m.content, m.event_ids, m.entity_ids,
                 m.importance, m.occurred_at, m.status, Jsonb([e.model_dump() for e in m.entities]),
                 to_vector(embedding)),
            )
            if cur.rowcount:
                cur.execute(_OUTBOX, (m.world_id, "episodic", m.memory_id))

    def insert_semantic(self, memory: SemanticMemory, embedding: Sequence[float] | None) -> None:
        self.record_facts(memory.world_id, [(memory, embedding)], [], [])

    def update_semantic(self, memory: SemanticMemory) -> None:
        self.record_facts(memory.world_id, [], [memory], [])

    def record_facts(self, world_id: str, created: Sequence[tuple[SemanticMemory, Sequence[float] | None]],
                     updated: Sequence[SemanticMemory], conflicts: Sequence[MemoryConflict]) -> None:
        """New facts, changed facts and new conflicts in one transaction, with the index outbox rows. One call is
        what one statement did to memory: when an event it rests on, or a fact or entity it names, was erased
        meanwhile, none of it is written."""
        with self.tx(world_id) as cur:
            if not _still_derivable(cur, world_id, [m for m, _ in created], updated, conflicts):
                return
            for m, embedding in created:
                cur.execute(
                    f"INSERT INTO semantic_memories ({_SEMANTIC_COLUMNS}, confidence_factors, embedding) VALUES "
                    "(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) "
                    "ON CONFLICT (world_id, memory_id) DO NOTHING",
                    (world_id, m.memory_id, m.user_id, m.subject_entity_id, m.predicate, m.object_value,
                     m.object_entity_id, m.confidence, m.reinforcement_count, m.source_event_ids, m.valid_from,
                     m.valid_to, m.status, m.created_at, m.last_validated_at, _factors(m), to_vector(embedding)),
                )
                if cur.rowcount:
                    cur.execute(_OUTBOX, (world_id, "semantic", m.memory_id))
            for m in updated:
                _update_fact(cur, world_id, m)
            for c in conflicts:
                _insert_conflict(cur, c)

    def get_semantic(self, world_id: str, memory_ids: Sequence[str]) -> list[SemanticMemory]:
        with self.tx(world_id) as cur:
            cur.execute(f"SELECT {_SEMANTIC} FROM semantic_memories WHERE world_id = %s AND memory_id = ANY(%s)",
                        (world_id, list(memory_ids)))
            return [SemanticMemory.model_validate(r) for r in cur.fetchall()]

    def get_conflict(self, world_id: str, conflict_id: str) -> MemoryConflict | None:
        with self.tx(world_id) as cur:
            cur.execute(f"SELECT {_CONFLICT} FROM memory_conflicts WHERE world_id = %s AND conflict_id = %s",
                        (world_id, conflict_id))
            row = cur.fetchone()
        return MemoryConflict.model_validate(row) if row else None

    def settle_conflict(self, conflict: MemoryConflict, updated: Sequence[SemanticMemory]) -> bool:
        c = conflict
        with self.tx(c.world_id) as cur:
            live_events(cur, c.world_id, {x for m in updated for x in m.source_event_ids})  # events first (see above)
            if len(existing(cur, c.world_id, "semantic_memories", "memory_id",
                            [c.memory_id, c.conflicting_memory_id])) < 2:
                return False  # a side was erased meanwhile (its conflict with it)
            # Guarded: a settlement by the user is final; one by the rules the user may overturn.
            cur.execute(
                "UPDATE memory_conflicts SET status = %s, winner_memory_id = %s, resolved_by = %s, note = %s, "
                "resolved_at = %s, strategy = %s, reason = %s WHERE world_id = %s AND conflict_id = %s "
                "AND resolved_by IS DISTINCT FROM 'user'",
                (c.status, c.winner_memory_id, c.resolved_by, c.note, c.resolved_at, c.strategy, c.reason,
                 c.world_id, c.conflict_id),
            )
            if not cur.rowcount:
                return False
            for m in updated:
                _update_fact(cur, c.world_id, m)
            return True

    def find_facts(self, world_id: str, subject_entity_id: str, predicate: str | None = None,
                   statuses: Sequence[str] = ("active",), *, user_id: str | None = None) -> list[SemanticMemory]:
        with self.tx(world_id) as cur:
            cur.execute(
                f"SELECT {_SEMANTIC} FROM semantic_memories WHERE world_id = %s AND subject_entity_id = %s "
                "AND (%s::text IS NULL OR predicate = %s) AND status = ANY(%s) AND (%s::text IS NULL OR user_id = %s) "
                "ORDER BY created_at",
                (world_id, subject_entity_id, predicate, predicate, list(statuses), user_id, user_id),
            )
            return [SemanticMemory.model_validate(r) for r in cur.fetchall()]

    def facts_about(self, world_id: str, entity_ids: Sequence[str], limit: int, *,
                    user_id: str | None = None, as_of: datetime | None = None,
                    statuses: Sequence[str] = ("active",)) -> list[SemanticMemory]:
        """Facts of the statuses (`user_id`'s when given) whose subject or object is one of the entities, strongest
        first; with `as_of`, the facts true then instead, superseded ones included."""
        held = VALID_AT.format(m="") if as_of is not None else "status = ANY(%(s)s)"
        with self.tx(world_id) as cur:
            cur.execute(
                f"SELECT {_SEMANTIC} FROM semantic_memories WHERE world_id = %(w)s AND {held} AND "
                "(subject_entity_id = ANY(%(e)s) OR object_entity_id = ANY(%(e)s)) "
                "AND (%(u)s::text IS NULL OR user_id = %(u)s) ORDER BY confidence DESC, created_at LIMIT %(k)s",
                {"w": world_id, "e": list(entity_ids), "u": user_id, "k": limit, "at": as_of, "s": list(statuses)},
            )
            return [SemanticMemory.model_validate(r) for r in cur.fetchall()]

    def memory_conflicts(self, world_id: str, memory_ids: Sequence[str]) -> list[MemoryConflict]:
        """The conflicts naming any of the facts, on either side, oldest first."""
        with self.tx(world_id) as cur:
            cur.execute(f"SELECT {_CONFLICT} FROM memory_conflicts WHERE world_id = %s AND "
                        "(memory_id = ANY(%s) OR conflicting_memory_id = ANY(%s)) ORDER BY created_at, conflict_id",
                        (world_id, list(memory_ids), list(memory_ids)))
            return [MemoryConflict.model_validate(r) for r in cur.fetchall()]

    def episodic_by_key(self, world_id: str, memory_id: str) -> EpisodicMemory | None:
        with self.tx(world_id) as cur:
            cur.execute(f"SELECT {_EPISODIC} FROM episodic_memories WHERE world_id = %s AND memory_id = %s",
                        (world_id, memory_id))
            row = cur.fetchone()
        return EpisodicMemory.model_validate(row) if row else None

    def user_memories(self, world_id: str, user_id: str, layer: str, limit: int, *,
                      as_of: datetime | None = None) -> list[Any]:
        """A user's memories of one layer, the newest first; with `as_of`, as memory held them then: the facts
        true then (superseded ones included), the episodes and patterns there were by then."""
        models: dict[str, tuple[str, str, type[BaseModel], str]] = {
            "episodic": ("episodic_memories", _EPISODIC, EpisodicMemory, "occurred_at <= %(at)s"),
            "semantic": ("semantic_memories", _SEMANTIC, SemanticMemory, VALID_AT.format(m="")),
            "procedural": ("procedural_memories", _PROCEDURAL, ProceduralMemory, "created_at <= %(at)s"),
        }
        table, columns, model, then = models[layer]
        with self.tx(world_id) as cur:
            cur.execute(f"SELECT {columns} FROM {table} WHERE world_id = %(w)s AND user_id = %(u)s "
                        f"AND {then if as_of is not None else 'TRUE'} ORDER BY created_at DESC LIMIT %(k)s",
                        {"w": world_id, "u": user_id, "k": limit, "at": as_of})
            return [model.model_validate(r) for r in cur.fetchall()]

    def insert_conflict(self, conflict: MemoryConflict) -> None:
        with self.tx(conflict.world_id) as cur:
            _insert_conflict(cur, conflict)

    def list_conflicts(self, world_id: str, status: str | None) -> list[MemoryConflict]:
        with self.tx(world_id) as cur:
            cur.execute(f"SELECT {_CONFLICT} FROM memory_conflicts WHERE world_id = %s AND "
                        "(%s::text IS NULL OR status = %s) ORDER BY created_at DESC", (world_id, status, status))
            return [MemoryConflict.model_validate(r) for r in cur.fetchall()]

    def insert_procedural(self, memory: ProceduralMemory, embedding: Sequence[float] | None) -> None:
        m = memory
        with self.tx(m.world_id) as cur:
            if not sources_present(cur, m.world_id, m.source_ids):
                return
            cur.execute(
                f"INSERT INTO procedural_memories ({_PROCEDURAL}, embedding) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s) "
                "ON CONFLICT (world_id, memory_id) DO NOTHING",
                (m.world_id, m.memory_id, m.user_id, m.pattern, m.support_count, m.source_ids, m.confidence,
                 m.created_at, to_vector(embedding)),
            )
            if cur.rowcount:
                cur.execute(_OUTBOX, (m.world_id, "procedural", m.memory_id))

    def correct_semantic(self, fact: SemanticMemory, embedding: Sequence[float] | None, audit: MemoryAudit) -> bool:
        m = fact
        with self.tx(m.world_id) as cur:
            live_events(cur, m.world_id, m.source_event_ids)  # events first, as an erasure takes them
            cur.execute(
                "UPDATE semantic_memories SET object_value = %s, object_entity_id = %s, confidence = %s, "
                "valid_from = %s, valid_to = %s, last_validated_at = %s, confidence_factors = %s, "
                "embedding = coalesce(%s::vector, embedding) WHERE world_id = %s AND memory_id = %s",
                (m.object_value, m.object_entity_id, m.confidence, m.valid_from, m.valid_to, m.last_validated_at,
                 _factors(m), to_vector(embedding), m.world_id, m.memory_id),
            )
            if not cur.rowcount:
                return False
            cur.execute(_OUTBOX, (m.world_id, "semantic", m.memory_id))
            _insert_audit(cur, audit)
            return True

    def delete_semantic(self, audit: MemoryAudit) -> MemoryAudit | None:
        w, memory_id = audit.world_id, audit.memory_id
        with self.tx(w) as cur:
            cur.execute(f"SELECT {_SEMANTIC} FROM semantic_memories WHERE world_id = %s AND memory_id = %s",
                        (w, memory_id))
            row = cur.fetchone()
            if row is None:
                return None
            live_events(cur, w, row["source_event_ids"])  # events first, as an erasure takes them
            cur.execute("DELETE FROM semantic_memories WHERE world_id = %s AND memory_id = %s", (w, memory_id))
            if not cur.rowcount:
                return None
            cur.execute(f"DELETE FROM memory_conflicts WHERE world_id = %s AND (memory_id = %s "
                        f"OR conflicting_memory_id = %s) RETURNING {_CONFLICT}", (w, memory_id, memory_id))
            conflicts = [MemoryConflict.model_validate(r).model_dump(mode="json") for r in cur.fetchall()]
            # A pending upsert would bring the document back: the queue learns of the deletion instead.
            cur.execute("DELETE FROM index_outbox WHERE world_id = %s AND kind = 'semantic' AND doc_id = %s",
                        (w, memory_id))
            cur.execute("INSERT INTO index_outbox (world_id, kind, doc_id, op) VALUES (%s, 'semantic', %s, 'delete')",
                        (w, memory_id))
            fact = SemanticMemory.model_validate(row)
            done = audit.model_copy(update={"user_id": fact.user_id, "after": None, "before": {
                **fact.model_dump(mode="json"), "conflicts": conflicts}})
            _insert_audit(cur, done)
            return done

    def memory_audit(self, world_id: str, memory_id: str) -> list[MemoryAudit]:
        with self.tx(world_id) as cur:
            cur.execute(f"SELECT {_AUDIT} FROM memory_audit WHERE world_id = %s AND memory_id = %s "
                        "ORDER BY at, audit_id", (world_id, memory_id))
            return [MemoryAudit.model_validate(r) for r in cur.fetchall()]


def _insert_audit(cur: psycopg.Cursor[Row], a: MemoryAudit) -> None:
    cur.execute(f"INSERT INTO memory_audit ({_AUDIT}) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                (a.world_id, a.audit_id, a.memory_id, a.user_id, a.action, Jsonb(a.before),
                 Jsonb(a.after) if a.after is not None else None, a.note, a.request_id, a.at))


def _factors(m: SemanticMemory) -> Jsonb:
    return Jsonb(m.factors.model_dump() if m.factors is not None else {})


def _still_derivable(cur: psycopg.Cursor[Row], world_id: str, created: Sequence[SemanticMemory],
                     updated: Sequence[SemanticMemory], conflicts: Sequence[MemoryConflict]) -> bool:
    """Whether a write of facts still rests on stored rows: the events of new facts and those an update adds (a
    restatement), and both sides of each conflict. Locked until it commits in the order an erasure takes them
    (events, then facts, then entities), so that the two wait for each other and never deadlock."""
    live = live_events(cur, world_id, {x for m in [*created, *updated] for x in m.source_event_ids})
    stored: dict[str, set[str]] = {}
    if updated:
        cur.execute("SELECT memory_id, source_event_ids FROM semantic_memories WHERE world_id = %s "
                    "AND memory_id = ANY(%s::text[]) ORDER BY memory_id FOR NO KEY UPDATE",
                    (world_id, sorted({m.memory_id for m in updated})))
        stored = {r["memory_id"]: set(r["source_event_ids"]) for r in cur.fetchall()}
    added = {x for m in created for x in m.source_event_ids} | {
        x for m in updated for x in m.source_event_ids if x not in stored.get(m.memory_id, set())}
    sides = {i for c in conflicts for i in (c.memory_id, c.conflicting_memory_id)} - {m.memory_id for m in created}
    if not (live >= added and existing(cur, world_id, "semantic_memories", "memory_id", sides) >= sides):
        return False
    # The entities new facts name are locked, not required: an erasure weighing whether to keep one sees these.
    existing(cur, world_id, "canonical_entities", "entity_id",
             {i for m in created for i in (m.subject_entity_id, m.object_entity_id) if i})
    return True


def _update_fact(cur: psycopg.Cursor[Row], world_id: str, m: SemanticMemory) -> None:
    """Write a changed fact. Its sources keep only the events still stored: an erasure that took one out meanwhile
    is not undone by a write made from an older read."""
    live = live_events(cur, world_id, m.source_event_ids)
    m = m.model_copy(update={"source_event_ids": [x for x in m.source_event_ids if x in live]})
    cur.execute(
        "UPDATE semantic_memories SET confidence = %s, reinforcement_count = %s, source_event_ids = %s, "
        "valid_to = %s, status = %s, last_validated_at = %s, "
        "confidence_factors = CASE WHEN %s::jsonb = '{}'::jsonb THEN confidence_factors ELSE %s::jsonb END "
        "WHERE world_id = %s AND memory_id = %s",
        (m.confidence, m.reinforcement_count, m.source_event_ids, m.valid_to, m.status, m.last_validated_at,
         _factors(m), _factors(m), world_id, m.memory_id),
    )
    cur.execute(_OUTBOX, (world_id, "semantic", m.memory_id))


def _insert_conflict(cur: psycopg.Cursor[Row], c: MemoryConflict) -> None:
    cur.execute(
        f"INSERT INTO memory_conflicts ({_CONFLICT}) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) "
        "ON CONFLICT (world_id, conflict_id) DO NOTHING",
        (c.world_id, c.conflict_id, c.memory_id, c.conflicting_memory_id, c.status, c.strategy, c.reason,
         c.created_at, c.resolved_at, c.kind, c.winner_memory_id, c.resolved_by, c.note),
    )
