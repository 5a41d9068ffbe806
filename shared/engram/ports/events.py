"""The event store: a world's conversation events and their enrichment status."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

from engram.model.events import EnrichmentStatus, StoredEvent, WorldSummary, WorldUser


class EventStore(Protocol):
    def insert_events(self, events: Sequence[StoredEvent]) -> list[bool]:
        """Insert events of one world atomically; True per event newly stored, False for a
        duplicate event_id (the stored row is left as it was). An event_id the world holds, or the batch
        repeats, with other content (`conflicting_ids`) raises EventIdConflict and stores nothing, decided in
        the insert's own transaction so that a concurrent batch cannot slip between check and insert."""
        ...

    def has_events(self, world_id: str) -> bool:
        """Whether the world holds any event (a world exists once it holds one)."""
        ...

    def worlds(self, world_ids: Sequence[str] | None) -> list[WorldSummary]:
        """The worlds that hold events, the most recently active first: those of `world_ids` only, each read in
        its own world's scope, or every world when None (the reviewed all-worlds path, for a caller that may
        read every world)."""
        ...

    def get_event(self, world_id: str, event_id: str) -> StoredEvent | None: ...
    def get_events(self, world_id: str, event_ids: Sequence[str]) -> list[StoredEvent]: ...
    def set_enrichment(
        self, world_id: str, event_ids: Sequence[str], status: EnrichmentStatus,
        enrichment_id: str | None = None, error: str | None = None,
    ) -> None: ...
    def conversation_events(
        self, world_id: str, conversation_id: str, limit: int, before: datetime | None = None, *,
        user_id: str | None = None
    ) -> list[StoredEvent]:
        """The latest `limit` events of a conversation, oldest first; with `user_id`, none unless that user
        takes part in the conversation (a user reads the conversations they are in, not another user's)."""
        ...
    def user_events(self, world_id: str, user_id: str, limit: int) -> list[StoredEvent]: ...
    def important_events(self, world_id: str, user_id: str, limit: int) -> list[StoredEvent]: ...
    def world_users(self, world_id: str, limit: int) -> list[WorldUser]:
        """The users of a world with their event counts, the most recently active first."""
        ...
    def set_event_embeddings(self, world_id: str, embeddings: dict[str, Sequence[float]],
                             context_embeddings: dict[str, Sequence[float]] | None = None) -> None:
        """Each event's vector and, when given, its vector read in context (after the turn before it)."""
        ...
    def stalled_events(self, world_id: str | None, statuses: Sequence[EnrichmentStatus], received_before: datetime,
                       limit: int | None) -> list[tuple[str, str]]:
        """(world id, event id) of events in `statuses` received before the cutoff, oldest first, at most
        `limit` (None: all); every world when `world_id` is None (the scheduled sweep)."""
        ...
