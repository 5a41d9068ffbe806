"""PostgreSQL repository: chat events (layer 1, immutable but for enrichment status and embedding)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from psycopg.types.json import Jsonb

from engram.adapters.postgres.base import PostgresBase, to_vector
from engram.errors import EventIdConflict
from engram.model.events import EnrichmentStatus, StoredEvent, WorldSummary, WorldUser, conflicting_ids

EVENT_COLUMNS = (
    "world_id, event_id, user_id, conversation_id, role, content, content_type, occurred_at, received_at, "
    "metadata, importance, tags, enrichment_status, enrichment_id, enrichment_error"
)


_INSERT_FIELDS = ("event_id", "user_id", "conversation_id", "role", "content", "content_type", "occurred_at",
                  "received_at", "metadata", "importance", "tags", "enrichment_status", "enrichment_id",
                  "enrichment_error")


_WORLDS = ("SELECT world_id, count(*) AS events, count(DISTINCT user_id) AS users, "
           "count(DISTINCT conversation_id) AS conversations, max(occurred_at) AS last_event_at "
           "FROM chat_events {where} GROUP BY world_id")


def _event(row: dict) -> StoredEvent:
    return StoredEvent.model_validate(row)


class EventRepo(PostgresBase):
    def insert_events(self, events: Sequence[StoredEvent]) -> list[bool]:
        """Insert one world's batch in one statement and one transaction; False for an event_id already
        stored. Concurrent replays are safe: ON CONFLICT lets exactly one of them insert each id, and every
        batch inserts in event id order, so two batches sharing ids wait on each other in one order only
        (in the order given, each could hold an id the other waits for: a deadlock)."""
        if not events:
            return []
        world_id = events[0].world_id
        ordered = sorted(events, key=lambda e: e.event_id)  # stable: a repeated id keeps its first occurrence
        columns = [[getattr(e, c) for e in ordered] for c in _INSERT_FIELDS]
        with self.tx(world_id) as cur:
            cur.execute(
                f"INSERT INTO chat_events ({EVENT_COLUMNS}) "
                "SELECT %s, u.event_id, u.user_id, u.conversation_id, u.role, u.content, u.content_type, "
                "u.occurred_at, u.received_at, u.metadata, u.importance, "
                "ARRAY(SELECT jsonb_array_elements_text(u.tags)), u.enrichment_status, u.enrichment_id, "
                "u.enrichment_error "
                "FROM unnest(%s::text[], %s::text[], %s::text[], %s::text[], %s::text[], %s::text[], "
                "%s::timestamptz[], %s::timestamptz[], %s::jsonb[], %s::real[], %s::jsonb[], %s::text[], %s::text[], "
                "%s::text[]) AS u(event_id, user_id, conversation_id, role, content, content_type, occurred_at, "
                "received_at, metadata, importance, tags, enrichment_status, enrichment_id, enrichment_error) "
                "ON CONFLICT (world_id, event_id) DO NOTHING RETURNING event_id",
                (world_id, *columns[:8], [Jsonb(m) for m in columns[8]], columns[9],
                 [Jsonb(t) for t in columns[10]], *columns[11:]),
            )
            new_ids = {r["event_id"] for r in cur.fetchall()}
            # Checked after the insert, in its transaction: a concurrent batch's row for one of our ids was
            # committed before ON CONFLICT skipped it, so this read sees it; raising rolls the whole batch back.
            replayed = [e.event_id for e in ordered if e.event_id not in new_ids]
            if replayed or len({e.event_id for e in events}) < len(events):
                cur.execute(f"SELECT {EVENT_COLUMNS} FROM chat_events WHERE world_id = %s AND event_id = ANY(%s)",
                            (world_id, [e.event_id for e in ordered]))
                conflicts = conflicting_ids(events, {r["event_id"]: _event(r) for r in cur.fetchall()})
                if conflicts:
                    raise EventIdConflict.of(conflicts)
            # The keyword index learns of the events with them, through the outbox.
            cur.execute("INSERT INTO index_outbox (world_id, kind, doc_id, op) "
                        "SELECT %s, 'event', id, 'upsert' FROM unnest(%s::text[]) AS id",
                        (world_id, list(new_ids)))
        seen: set[str] = set()  # an id repeated inside the batch is a replay of its first occurrence
        inserted = []
        for e in events:
            inserted.append(e.event_id in new_ids and e.event_id not in seen)
            seen.add(e.event_id)
        return inserted

    def get_event(self, world_id: str, event_id: str) -> StoredEvent | None:
        events = self.get_events(world_id, [event_id])
        return events[0] if events else None

    def get_events(self, world_id: str, event_ids: Sequence[str]) -> list[StoredEvent]:
        """The events in the order of `event_ids` (missing ids skipped)."""
        with self.tx(world_id) as cur:
            cur.execute(f"SELECT {EVENT_COLUMNS} FROM chat_events WHERE world_id = %s AND event_id = ANY(%s)",
                        (world_id, list(event_ids)))
            rows = {r["event_id"]: r for r in cur.fetchall()}
        return [_event(rows[i]) for i in event_ids if i in rows]

    def set_enrichment(self, world_id: str, event_ids: Sequence[str], status: EnrichmentStatus,
                       enrichment_id: str | None = None, error: str | None = None) -> None:
        with self.tx(world_id) as cur:
            cur.execute(
                "UPDATE chat_events SET enrichment_status = %s, enrichment_id = coalesce(%s, enrichment_id), "
                "enrichment_error = %s WHERE world_id = %s AND event_id = ANY(%s)",
                (status, enrichment_id, error, world_id, list(event_ids)),
            )

    def stalled_events(self, world_id: str | None, statuses: Sequence[EnrichmentStatus], received_before: datetime,
                       limit: int | None) -> list[tuple[str, str]]:
        with self.world_or_all_tx(world_id) as cur:  # None: the scheduled sweep over every world (LIMIT NULL: all)
            cur.execute(
                "SELECT world_id, event_id FROM chat_events WHERE (%s::text IS NULL OR world_id = %s) "
                "AND enrichment_status = ANY(%s) AND received_at < %s ORDER BY received_at, event_id LIMIT %s",
                (world_id, world_id, list(statuses), received_before, limit),
            )
            return [(r["world_id"], r["event_id"]) for r in cur.fetchall()]

    def set_event_embeddings(self, world_id: str, embeddings: dict[str, Sequence[float]],
                             context_embeddings: dict[str, Sequence[float]] | None = None) -> None:
        context = context_embeddings or {}
        with self.tx(world_id) as cur:
            cur.executemany("UPDATE chat_events SET embedding = %s, context_embedding = %s "
                            "WHERE world_id = %s AND event_id = %s",
                            [(to_vector(v), to_vector(context.get(k)), world_id, k) for k, v in embeddings.items()])

    def conversation_events(self, world_id: str, conversation_id: str, limit: int,
                            before: datetime | None = None, *, user_id: str | None = None) -> list[StoredEvent]:
        with self.tx(world_id) as cur:
            cur.execute(
                f"SELECT {EVENT_COLUMNS} FROM chat_events WHERE world_id = %(w)s AND conversation_id = %(c)s "
                "AND (%(b)s::timestamptz IS NULL OR occurred_at < %(b)s) AND (%(u)s::text IS NULL OR EXISTS ("
                " SELECT 1 FROM chat_events p WHERE p.world_id = %(w)s AND p.conversation_id = %(c)s "
                " AND p.user_id = %(u)s)) ORDER BY occurred_at DESC, event_id DESC LIMIT %(k)s",
                {"w": world_id, "c": conversation_id, "b": before, "u": user_id, "k": limit},
            )
            return [_event(r) for r in reversed(cur.fetchall())]

    def user_events(self, world_id: str, user_id: str, limit: int) -> list[StoredEvent]:
        with self.tx(world_id) as cur:
            cur.execute(f"SELECT {EVENT_COLUMNS} FROM chat_events WHERE world_id = %s AND user_id = %s "
                        "ORDER BY occurred_at DESC LIMIT %s", (world_id, user_id, limit))
            return [_event(r) for r in cur.fetchall()]

    def world_users(self, world_id: str, limit: int) -> list[WorldUser]:
        with self.tx(world_id) as cur:
            cur.execute("SELECT user_id, count(*) AS events, count(DISTINCT conversation_id) AS conversations, "
                        "max(occurred_at) AS last_event_at FROM chat_events WHERE world_id = %s GROUP BY user_id "
                        "ORDER BY max(occurred_at) DESC, user_id LIMIT %s", (world_id, limit))
            return [WorldUser.model_validate(r) for r in cur.fetchall()]

    def has_events(self, world_id: str) -> bool:
        with self.tx(world_id) as cur:
            cur.execute("SELECT EXISTS (SELECT 1 FROM chat_events WHERE world_id = %s) AS any", (world_id,))
            row = cur.fetchone()
            return bool(row and row["any"])

    def worlds(self, world_ids: Sequence[str] | None) -> list[WorldSummary]:
        if world_ids is None:
            with self.all_worlds_tx() as cur:  # a caller allowed every world: the reviewed all-worlds path
                cur.execute(_WORLDS.format(where=""))
                found = cur.fetchall()
        else:
            found = []
            for world_id in sorted(set(world_ids)):  # each world in its own scope: row-level security holds
                with self.tx(world_id) as cur:
                    cur.execute(_WORLDS.format(where="WHERE world_id = %s"), (world_id,))
                    found += cur.fetchall()
        summaries = sorted((WorldSummary.model_validate(r) for r in found), key=lambda w: w.world_id)
        return sorted(summaries, key=lambda w: w.last_event_at, reverse=True)

    def important_events(self, world_id: str, user_id: str, limit: int) -> list[StoredEvent]:
        """The user's most important events, most important (then latest) first."""
        with self.tx(world_id) as cur:
            cur.execute(f"SELECT {EVENT_COLUMNS} FROM chat_events WHERE world_id = %s AND user_id = %s "
                        "ORDER BY importance DESC, occurred_at DESC LIMIT %s", (world_id, user_id, limit))
            return [_event(r) for r in cur.fetchall()]
