"""An in-memory EventStore: a world's events and their enrichment status, dict-backed."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from engram.errors import EventIdConflict
from engram.model.events import EnrichmentStatus, StoredEvent, WorldSummary, WorldUser, conflicting_ids
from tests.fakes.tables import Tables, copy


class InMemoryEventStore:
    """Records every enrichment status change in `enrichment_log` (event ids, status, error)."""

    t: Tables
    enrichment_log: list[tuple[list[str], EnrichmentStatus, str | None]]

    def insert_events(self, events: Sequence[StoredEvent]) -> list[bool]:
        stored = {e.event_id: self.t.events[(e.world_id, e.event_id)] for e in events
                  if (e.world_id, e.event_id) in self.t.events}
        conflicts = conflicting_ids(events, stored)
        if conflicts:  # checked before any insert: the batch is stored whole or not at all
            raise EventIdConflict.of(conflicts)
        inserted = []
        for e in events:
            key = (e.world_id, e.event_id)
            new = key not in self.t.events
            if new:
                self.t.events[key] = copy(e)
                self.t.queue(e.world_id, "event", e.event_id)
            inserted.append(new)
        return inserted

    def get_event(self, world_id: str, event_id: str) -> StoredEvent | None:
        found = self.get_events(world_id, [event_id])
        return found[0] if found else None

    def get_events(self, world_id: str, event_ids: Sequence[str]) -> list[StoredEvent]:
        return [copy(self.t.events[(world_id, i)]) for i in event_ids if (world_id, i) in self.t.events]

    def set_enrichment(self, world_id: str, event_ids: Sequence[str], status: EnrichmentStatus,
                       enrichment_id: str | None = None, error: str | None = None) -> None:
        self.enrichment_log.append((list(event_ids), status, error))
        for i in event_ids:
            event = self.t.events.get((world_id, i))
            if event is not None:
                event.enrichment_status, event.enrichment_error = status, error
                event.enrichment_id = enrichment_id or event.enrichment_id

    def _conversation(self, world_id: str, conversation_id: str) -> list[StoredEvent]:
        return sorted((e for e in self.t.of_world(self.t.events, world_id) if e.conversation_id == conversation_id),
                      key=lambda e: (e.occurred_at, e.event_id))

    def conversation_events(self, world_id: str, conversation_id: str, limit: int, before: datetime | None = None, *,
                            user_id: str | None = None) -> list[StoredEvent]:
        events = self._conversation(world_id, conversation_id)
        if user_id is not None and all(e.user_id != user_id for e in events):
            return []
        events = [e for e in events if before is None or e.occurred_at < before]
        return [copy(e) for e in events[-limit:]] if limit > 0 else []

    def user_events(self, world_id: str, user_id: str, limit: int) -> list[StoredEvent]:
        events = [e for e in self.t.of_world(self.t.events, world_id) if e.user_id == user_id]
        return [copy(e) for e in sorted(events, key=lambda e: e.occurred_at, reverse=True)[:limit]]

    def important_events(self, world_id: str, user_id: str, limit: int) -> list[StoredEvent]:
        events = [e for e in self.t.of_world(self.t.events, world_id) if e.user_id == user_id]
        return [copy(e) for e in sorted(events, key=lambda e: (e.importance, e.occurred_at), reverse=True)[:limit]]

    def has_events(self, world_id: str) -> bool:
        return any(True for _ in self.t.of_world(self.t.events, world_id))

    def worlds(self, world_ids: Sequence[str] | None) -> list[WorldSummary]:
        by_world: dict[str, list[StoredEvent]] = {}
        for (world_id, _), e in self.t.events.items():
            if world_ids is None or world_id in world_ids:
                by_world.setdefault(world_id, []).append(e)
        worlds = sorted((WorldSummary(world_id=w, events=len(es), users=len({e.user_id for e in es}),
                                      conversations=len({e.conversation_id for e in es}),
                                      last_event_at=max(e.occurred_at for e in es)) for w, es in by_world.items()),
                        key=lambda w: w.world_id)
        return sorted(worlds, key=lambda w: w.last_event_at, reverse=True)

    def world_users(self, world_id: str, limit: int) -> list[WorldUser]:
        by_user: dict[str, list[StoredEvent]] = {}
        for e in self.t.of_world(self.t.events, world_id):
            by_user.setdefault(e.user_id, []).append(e)
        users = [WorldUser(user_id=u, events=len(es), conversations=len({e.conversation_id for e in es}),
                           last_event_at=max(e.occurred_at for e in es)) for u, es in by_user.items()]
        return sorted(users, key=lambda u: (u.last_event_at, u.user_id), reverse=True)[:limit]

    def set_event_embeddings(self, world_id: str, embeddings: dict[str, Sequence[float]],
                             context_embeddings: dict[str, Sequence[float]] | None = None) -> None:
        for event_id, vector in embeddings.items():
            self.t.event_vectors[(world_id, event_id)] = list(vector)
            if context_embeddings and event_id in context_embeddings:
                self.t.context_vectors[(world_id, event_id)] = list(context_embeddings[event_id])

    def stalled_events(self, world_id: str | None, statuses: Sequence[EnrichmentStatus], received_before: datetime,
                       limit: int | None) -> list[tuple[str, str]]:
        stalled = sorted((e for e in self.t.events.values() if (world_id is None or e.world_id == world_id)
                          and e.enrichment_status in statuses and e.received_at < received_before),
                         key=lambda e: (e.received_at, e.event_id))
        return [(e.world_id, e.event_id) for e in stalled[:limit]]
