"""The signal store: signals read from conversations, and the cursors of that reading."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from engram.model.signals import AssumptionStatus, Signal, SignalCursor


class SignalStore(Protocol):
    def insert_signals(self, world_id: str, signals: Sequence[Signal]) -> list[str]:
        """Store a batch in one statement, skipping any whose content hash its conversation already
        holds; returns the ids newly stored."""
        ...
    def get_signal(self, world_id: str, signal_id: str) -> Signal | None: ...
    def list_signals(self, world_id: str, conversation_id: str, signal_type: str | None = None,
                     limit: int = 200) -> list[Signal]:
        """A conversation's signals in the order they were said, optionally of one type."""
        ...
    def set_assumption_status(self, world_id: str, signal_id: str, status: AssumptionStatus) -> Signal | None:
        """The updated assumption, or None when no Assumption has this id."""
        ...
    def signal_cursors(self, world_id: str, conversation_ids: Sequence[str]) -> dict[str, SignalCursor]: ...
    def save_signal_cursors(self, world_id: str, cursors: Sequence[SignalCursor]) -> set[str]:
        """Write cursors read at their `version` (0: none was read); returns the conversations written.
        A cursor another writer moved since it was read is left as it is and not returned."""
        ...
