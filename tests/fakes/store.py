"""The in-memory store: every fake store part over one set of tables (tests/fakes/tables.py), so that what
one port writes another reads, as in PostgreSQL. It implements the narrow ports the use cases compose whole
(EventStore, EntityStore, QueryStore, SignalStore, InsightStore, OutboxStore) and, of the wider MemoryStore,
RetrievalStore and EraseStore, what the use cases call (their Protocols list it)."""

from __future__ import annotations

from engram.model.events import EnrichmentStatus
from tests.fakes.entities import InMemoryEntityStore
from tests.fakes.events import InMemoryEventStore
from tests.fakes.memories import InMemoryMemoryStore
from tests.fakes.queries import InMemoryQueryStore
from tests.fakes.signals import InMemoryInsightStore, InMemorySignalStore
from tests.fakes.tables import Tables


class InMemoryStore(InMemoryEventStore, InMemoryEntityStore, InMemoryMemoryStore, InMemoryQueryStore,
                    InMemorySignalStore, InMemoryInsightStore):
    """Dict-backed; `t` holds the rows (tests may read them), `enrichment_log` every status change received."""

    def __init__(self) -> None:
        self.t = Tables()
        self.enrichment_log: list[tuple[list[str], EnrichmentStatus, str | None]] = []
