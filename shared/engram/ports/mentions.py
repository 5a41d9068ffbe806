"""The mention store: what each event names, how it was resolved, and what waits for the user."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

from engram.model.entities import (
    EntityAlias,
    EntitySighting,
    RecordedMention,
    Resolution,
)


class MentionStore(Protocol):
    def record_resolutions(self, world_id: str, resolutions: Sequence[Resolution],
                           aliases: Sequence[EntityAlias] = ()) -> None:
        """Record an event's resolutions and, in the same transaction, the aliases they taught."""
        ...
    def event_entity_ids(self, world_id: str, event_ids: Sequence[str]) -> dict[str, list[str]]: ...
    def known_aliases_in(self, world_id: str, phrases: Sequence[str], user_id: str | None) -> list[str]:
        """Those normalized phrases that are aliases of the world (global or the user's own)."""
        ...
    def recorded_mentions(self, world_id: str, event_ids: Sequence[str]) -> list[RecordedMention]: ...
    def get_mention(self, world_id: str, mention_id: str) -> RecordedMention | None: ...
    def pending_disambiguations(self, world_id: str, user_id: str | None, limit: int) -> list[RecordedMention]: ...
    def set_mention_entities(self, world_id: str, updates: Sequence[tuple[str, str, str, float]]) -> None:
        """(mention id, entity id, method, confidence) for mentions resolved after they were recorded."""
        ...
    def conversation_sightings(self, world_id: str, conversation_id: str, until: datetime,
                               limit: int) -> list[EntitySighting]:
        """The conversation's resolved mentions up to `until`, most recent first."""
        ...
