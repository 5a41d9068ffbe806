"""The erase store: a user's rows removed and the erasures recorded."""

from __future__ import annotations

from typing import Protocol

from engram.model.events import ErasedRows


class EraseStore(Protocol):
    def erase_user(self, world_id: str, user_id: str) -> ErasedRows:
        """Delete a user's events, memories, signals, queries and aliases, what was made only of them, and what
        other users' rows held of theirs, in one transaction; returns the counts and what is left to rebuild."""
        ...
    def erasures(self, world_id: str) -> int:
        """How many erasures the world has had (only grows)."""
        ...
