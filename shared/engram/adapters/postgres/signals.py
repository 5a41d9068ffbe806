"""PostgreSQL repository: signals (deduplicated per conversation) and the per-conversation cursor."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TypeVar

from psycopg import Cursor
from psycopg.types.json import Jsonb

from engram.adapters.postgres.base import PostgresBase, Row, to_vector
from engram.adapters.postgres.evidence import live_events
from engram.model.signals import AssumptionStatus, Signal, SignalCursor

_STORED = ("world_id, signal_id, conversation_id, user_id, event_id, signal_type, content, content_hash, confidence, "
           "assumption_status, occurred_at, position, created_at, updated_at")
_SIGNAL = f"{_STORED}, dismissed_at"
T = TypeVar("T", Signal, SignalCursor)
_CURSOR = "world_id, conversation_id, last_event_id, last_occurred_at, pending_event_ids, chars_since, version"


def _of_world(world_id: str, rows: Sequence[T]) -> Sequence[T]:
    if any(r.world_id != world_id for r in rows):  # a write never reaches across worlds
        raise ValueError(f"rows of another world in a write to world {world_id!r}")
    return rows


class SignalRepo(PostgresBase):
    def insert_signals(self, world_id: str, signals: Sequence[Signal],
                       embeddings: Mapping[str, Sequence[float]] | None = None) -> list[str]:
        """Store a batch in one statement, each with its vector (`embeddings` by signal id); a signal whose content
        hash a non-dismissed signal of its conversation holds is skipped, one of an event erased meanwhile too, one
        already stored (a re-read of a dismissed signal's turn) too. Returns the ids newly stored."""
        rows = _of_world(world_id, signals)
        if not rows:
            return []
        vectors = embeddings or {}
        with self.tx(world_id) as cur:
            live = live_events(cur, world_id, [s.event_id for s in rows])
            rows = [s for s in rows if s.event_id in live]
            if not rows:
                return []
            columns = [[getattr(s, c) for s in rows] for c in (
                "signal_id", "conversation_id", "user_id", "event_id", "signal_type", "content", "content_hash",
                "confidence", "assumption_status", "occurred_at", "position", "created_at")]
            # Vectors travel in pgvector's text form, NULL for a signal without one.
            columns.append([_vector_text(vectors[s.signal_id]) if s.signal_id in vectors else None for s in rows])
            cur.execute(
                f"INSERT INTO signals ({_STORED}, embedding) "
                "SELECT %s, u.signal_id, u.conversation_id, u.user_id, u.event_id, u.signal_type, u.content, "
                "u.content_hash, u.confidence, u.assumption_status, u.occurred_at, u.position, u.created_at, "
                "u.created_at, u.embedding::vector "
                "FROM unnest(%s::text[], %s::text[], %s::text[], %s::text[], %s::text[], %s::text[], %s::text[], "
                "%s::real[], %s::text[], %s::timestamptz[], %s::int[], %s::timestamptz[], %s::text[]) AS u(signal_id, "
                "conversation_id, user_id, event_id, signal_type, content, content_hash, confidence, assumption_status, "
                "occurred_at, position, created_at, embedding) "
                "ON CONFLICT DO NOTHING RETURNING signal_id",
                (world_id, *columns),
            )
            return [r["signal_id"] for r in cur.fetchall()]

    def get_signal(self, world_id: str, signal_id: str) -> Signal | None:
        with self.tx(world_id) as cur:
            cur.execute(f"SELECT {_SIGNAL} FROM signals WHERE world_id = %s AND signal_id = %s", (world_id, signal_id))
            row = cur.fetchone()
        return Signal.model_validate(row) if row else None

    def list_signals(self, world_id: str, conversation_id: str, signal_type: str | None = None,
                     limit: int = 200, *, include_dismissed: bool = False,
                     near: Sequence[float] | None = None) -> list[Signal]:
        """A conversation's signals in the order they were said, optionally of one type, the dismissed ones only
        when asked; with `near`, the closest to that vector first (a signal without a vector last)."""
        order = "ORDER BY occurred_at, event_id, position"
        if near is not None:
            order = "ORDER BY embedding <=> %(near)s NULLS LAST, occurred_at, event_id, position"
        with self.tx(world_id) as cur:
            cur.execute(
                f"SELECT {_SIGNAL} FROM signals WHERE world_id = %(w)s AND conversation_id = %(c)s "
                "AND (%(t)s::text IS NULL OR signal_type = %(t)s) AND (%(all)s OR dismissed_at IS NULL) "
                f"{order} LIMIT %(limit)s",
                {"w": world_id, "c": conversation_id, "t": signal_type, "all": include_dismissed,
                 "near": to_vector(near), "limit": limit},
            )
            return [Signal.model_validate(r) for r in cur.fetchall()]

    def dismiss_signal(self, world_id: str, signal_id: str, at: datetime) -> Signal | None:
        """Dismiss a signal at `at`; dismissed already, it keeps its first time. None when no signal has this id."""
        with self.tx(world_id) as cur:
            cur.execute(
                "UPDATE signals SET dismissed_at = coalesce(dismissed_at, %s), "
                "updated_at = CASE WHEN dismissed_at IS NULL THEN now() ELSE updated_at END "
                f"WHERE world_id = %s AND signal_id = %s RETURNING {_SIGNAL}",
                (at, world_id, signal_id),
            )
            row = cur.fetchone()
        return Signal.model_validate(row) if row else None

    def set_assumption_status(self, world_id: str, signal_id: str, status: AssumptionStatus) -> Signal | None:
        """The updated assumption, or None when no Assumption has this id."""
        with self.tx(world_id) as cur:
            cur.execute(
                f"UPDATE signals SET assumption_status = %s, updated_at = now() WHERE world_id = %s "
                f"AND signal_id = %s AND signal_type = 'Assumption' RETURNING {_SIGNAL}",
                (status, world_id, signal_id),
            )
            row = cur.fetchone()
        return Signal.model_validate(row) if row else None

    def signal_cursors(self, world_id: str, conversation_ids: Sequence[str]) -> dict[str, SignalCursor]:
        with self.tx(world_id) as cur:
            cur.execute(f"SELECT {_CURSOR} FROM signal_cursors WHERE world_id = %s AND conversation_id = ANY(%s)",
                        (world_id, list(conversation_ids)))
            return {r["conversation_id"]: SignalCursor.model_validate(r) for r in cur.fetchall()}

    def save_signal_cursors(self, world_id: str, cursors: Sequence[SignalCursor]) -> set[str]:
        """Write cursors read at `version` (0: none was read), in one statement. Returns the conversations
        written (or left as they were, having moved over erased turns only); one missing moved meanwhile
        (another extract step wrote it) and was left as it is."""
        rows = _of_world(world_id, cursors)
        if not rows:
            return set()
        with self.tx(world_id) as cur:
            rows, untouched = _without_erased(cur, world_id, rows)
            if not rows:
                return untouched
            cur.execute(
                f"INSERT INTO signal_cursors ({_CURSOR}) "
                "SELECT %s, u.conversation_id, u.last_event_id, u.last_occurred_at, "
                "ARRAY(SELECT jsonb_array_elements_text(u.pending)), u.chars_since, u.version + 1 "
                "FROM unnest(%s::text[], %s::text[], %s::timestamptz[], %s::jsonb[], %s::int[], %s::int[]) "
                "AS u(conversation_id, last_event_id, last_occurred_at, pending, chars_since, version) "
                "ON CONFLICT (world_id, conversation_id) DO UPDATE SET last_event_id = EXCLUDED.last_event_id, "
                "last_occurred_at = EXCLUDED.last_occurred_at, pending_event_ids = EXCLUDED.pending_event_ids, "
                "chars_since = EXCLUDED.chars_since, version = EXCLUDED.version, updated_at = now() "
                "WHERE signal_cursors.version = EXCLUDED.version - 1 RETURNING conversation_id",
                (world_id, [c.conversation_id for c in rows], [c.last_event_id for c in rows],
                 [c.last_occurred_at for c in rows], [Jsonb(list(c.pending_event_ids)) for c in rows],
                 [c.chars_since for c in rows], [c.version for c in rows]),
            )
            return {r["conversation_id"] for r in cur.fetchall()} | untouched


def _vector_text(vector: Sequence[float]) -> str:
    """A vector in pgvector's text form."""
    return "[" + ",".join(repr(float(x)) for x in vector) + "]"


def _without_erased(cur: Cursor[Row], world_id: str, cursors: Sequence[SignalCursor]
                    ) -> tuple[list[SignalCursor], set[str]]:
    """Cursors as they stand without the turns erased while they were planned: an erased turn no longer waits (its
    characters with it), a mark on one moves back to the turn before it. A cursor that moved over erased turns
    only is left as it was (returned apart, as done: planning it again would move it the same way)."""
    live = live_events(cur, world_id, [i for c in cursors for i in (*c.pending_event_ids, c.last_event_id)])
    kept: list[SignalCursor] = []
    untouched: set[str] = set()
    for c in cursors:
        if c.last_event_id not in live:
            cur.execute("SELECT event_id, occurred_at FROM chat_events WHERE world_id = %s AND conversation_id = %s "
                        "AND (occurred_at, event_id) <= (%s, %s) ORDER BY occurred_at DESC, event_id DESC LIMIT 1",
                        (world_id, c.conversation_id, c.last_occurred_at, c.last_event_id))
            before = cur.fetchone()
            if before is None:
                untouched.add(c.conversation_id)
                continue
            c = c.model_copy(update={"last_event_id": before["event_id"], "last_occurred_at": before["occurred_at"]})
        if not set(c.pending_event_ids) <= live:
            pending = tuple(i for i in c.pending_event_ids if i in live)
            cur.execute("SELECT coalesce(sum(length(content)), 0) AS n FROM chat_events WHERE world_id = %s "
                        "AND event_id = ANY(%s::text[])", (world_id, list(pending)))
            c = c.model_copy(update={"pending_event_ids": pending, "chars_since": int(cur.fetchone()["n"])})  # type: ignore[index]
        kept.append(c)
    return kept, untouched
