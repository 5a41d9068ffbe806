"""The domain database port: the world's own records, searched by name during resolution."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from engram.model.entities import DomainMatch, DomainSource


class DomainDatabase(Protocol):
    """The world's own records (customers, products...) in an external database, searched by name."""

    def find(self, world_id: str, sources: Sequence[DomainSource], name: str, limit: int) -> list[DomainMatch]:
        """Rows of the described tables whose name column equals `name` (case and spacing aside)."""
        ...
    def ping(self) -> None: ...
