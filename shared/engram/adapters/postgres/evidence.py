"""What an enrichment write derives from, checked in the transaction it writes in.

An erasure deletes the user's events first, in key order, in the transaction that records the user's tombstone (see
`erase.py`). A write of derived data (a fact, a mention, an episode, a signal, a summary...) first locks the events
it derives from with FOR KEY SHARE, in key order, in its own transaction: if the erasure came first, those events are
gone and the write leaves out what derives from them; if the write came first, the erasure waits for it to commit and
then removes what it wrote. Either way nothing of an erased event outlives the erasure, and the step that writes goes
on (it writes nothing for the erased events, it does not fail). Rows named by a write (an entity, a fact, a signal)
are locked the same way, so an erasure deleting them waits or has already happened."""

from __future__ import annotations

from collections.abc import Iterable

from psycopg import Cursor, sql

from engram.adapters.postgres.base import Row

# The user's advisory lock: an erasure takes it alone, a write keyed by the user (a query) shares it.
USER_LOCK = "hashtextextended(%s || '/' || %s, 0)"


def live_events(cur: Cursor[Row], world_id: str, event_ids: Iterable[str]) -> set[str]:
    """The events among `event_ids` still stored, locked until the transaction ends."""
    ids = sorted(set(event_ids))
    if not ids:
        return set()
    cur.execute("SELECT event_id FROM chat_events WHERE world_id = %s AND event_id = ANY(%s::text[]) "
                "ORDER BY event_id FOR KEY SHARE", (world_id, ids))
    return {r["event_id"] for r in cur.fetchall()}


def user_stands(cur: Cursor[Row], world_id: str, user_id: str) -> bool:
    """Whether something may stand for the user: they have an event stored (one of them locked until the
    transaction ends), or were never erased. A user erased while a step ran has neither."""
    cur.execute("SELECT event_id FROM chat_events WHERE world_id = %s AND user_id = %s ORDER BY event_id LIMIT 1 "
                "FOR KEY SHARE", (world_id, user_id))
    if cur.fetchone() is not None:
        return True
    cur.execute("SELECT 1 FROM erased_users WHERE world_id = %s AND user_id = %s", (world_id, user_id))
    return cur.fetchone() is None


def existing(cur: Cursor[Row], world_id: str, table: str, key: str, ids: Iterable[str]) -> set[str]:
    """The rows among `ids` of `table` still stored, locked until the transaction ends."""
    wanted = sorted({i for i in ids if i})
    if not wanted:
        return set()
    cur.execute(sql.SQL("SELECT {key} AS id FROM {table} WHERE world_id = %s AND {key} = ANY(%s::text[]) "
                        "ORDER BY {key} FOR KEY SHARE").format(key=sql.Identifier(key), table=sql.Identifier(table)),
                (world_id, wanted))
    return {r["id"] for r in cur.fetchall()}


def sources_present(cur: Cursor[Row], world_id: str, source_ids: Iterable[str]) -> bool:
    """Whether every source of a summary or a pattern (events, facts, episodes) is still stored, the events locked:
    one that quotes an erased event or memory is not written (a later run makes it from what is left)."""
    ids = set(source_ids)
    if not ids:
        return True
    events = live_events(cur, world_id, ids)
    rest = ids - events
    found = (existing(cur, world_id, "semantic_memories", "memory_id", rest)
             | existing(cur, world_id, "episodic_memories", "memory_id", rest)) if rest else set()
    return rest <= found


def lock_user(cur: Cursor[Row], world_id: str, user_id: str, *, alone: bool) -> None:
    """The user's advisory lock for the transaction: alone for an erasure, shared for a write keyed by the user."""
    function = "pg_advisory_xact_lock" if alone else "pg_advisory_xact_lock_shared"
    cur.execute(f"SELECT {function}({USER_LOCK})", (world_id, user_id))


def erased_after(cur: Cursor[Row], world_id: str, user_id: str, at: object) -> bool:
    """Whether the user was erased at or after `at` (under the user's shared lock, taken here)."""
    lock_user(cur, world_id, user_id, alone=False)
    cur.execute("SELECT 1 FROM erased_users WHERE world_id = %s AND user_id = %s AND erased_at >= %s",
                (world_id, user_id, at))
    return cur.fetchone() is not None
