"""The signal store: signals read from conversations, and the cursors of that reading."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Protocol

from engram.model.signals import AssumptionStatus, Signal, SignalCursor


class SignalStore(Protocol):
    def insert_signals(self, world_id: str, signals: Sequence[Signal],
                       embeddings: Mapping[str, Sequence[float]] | None = None) -> list[str]:
        """Store a batch in one statement, each with its vector (`embeddings` by signal id), skipping any whose
        content hash a non-dismissed signal of its conversation holds; returns the ids newly stored."""
        ...
    def get_signal(self, world_id: str, signal_id: str) -> Signal | None: ...
    def list_signals(self, world_id: str, conversation_id: str, signal_type: str | None = None,
                     limit: int = 200, *, include_dismissed: bool = False,
                     near: Sequence[float] | None = None) -> list[Signal]:
        """A conversation's signals in the order they were said, optionally of one type, the dismissed ones
        only when asked; with `near`, the closest to that vector first (cosine similarity, higher is better;
        a signal without a vector last)."""
        ...
    def dismiss_signal(self, world_id: str, signal_id: str, at: datetime) -> Signal | None:
        """Dismiss a signal at `at` (dismissed already: it keeps its first time); None when no signal has this id."""
        ...
    def set_assumption_status(self, world_id: str, signal_id: str, status: AssumptionStatus) -> Signal | None:
        """The updated assumption, or None when no Assumption has this id."""
        ...
    def signal_cursors(self, world_id: str, conversation_ids: Sequence[str]) -> dict[str, SignalCursor]: ...
    def save_signal_cursors(self, world_id: str, cursors: Sequence[SignalCursor]) -> set[str]:
        """Write cursors read at their `version` (0: none was read); returns the conversations written.
        A cursor another writer moved since it was read is left as it is and not returned."""
        ...
