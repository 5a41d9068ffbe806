"""An in-memory DomainDatabase: the world's own records, found by name as the real adapter finds them
(case and spacing aside); records the names it was asked for."""

from __future__ import annotations

from collections.abc import Sequence

from engram.model.entities import DomainMatch, DomainSource
from tests.fakes.tables import normalized


class InMemoryDomain:
    def __init__(self, rows: Sequence[DomainMatch] = ()) -> None:
        self.rows = list(rows)
        self.asked: list[str] = []

    def find(self, world_id: str, sources: Sequence[DomainSource], name: str, limit: int) -> list[DomainMatch]:
        self.asked.append(name)
        types = {s.entity_type for s in sources}
        return [r for r in self.rows if r.entity_type in types and normalized(r.name) == normalized(name)][:limit]

    def ping(self) -> None:
        return None
