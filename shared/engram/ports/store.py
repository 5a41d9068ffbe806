"""The store port (PostgreSQL): `Store` is every narrow store port together, as the PostgreSQL adapter
implements them; each narrow port lives in a module of its own (`engram.ports.events`, `.entities`...). A use case
declares the narrow ports it needs; re-exported by `engram.ports`."""

from __future__ import annotations

from typing import Any, Protocol

from engram.ports.entities import EntityStore
from engram.ports.erase import EraseStore
from engram.ports.events import EventStore
from engram.ports.insights import InsightStore
from engram.ports.memories import MemoryStore
from engram.ports.mentions import MentionStore
from engram.ports.outbox import OutboxStore
from engram.ports.portability import PortabilityStore
from engram.ports.queries import QueryStore
from engram.ports.relationships import RelationshipStore
from engram.ports.retrieval import RetrievalStore
from engram.ports.signals import SignalStore
from engram.ports.summaries import SummaryStore
from engram.ports.usage import UsageLedger


class Store(PortabilityStore, EraseStore, EventStore, EntityStore, MentionStore, RelationshipStore, MemoryStore, QueryStore, OutboxStore, SignalStore, SummaryStore, InsightStore,
            RetrievalStore, UsageLedger, Protocol):
    def world_config(self, world_id: str) -> dict[str, Any]:
        """The world's `system_config` rows (heuristics and tag categories), as stored: not validated."""
        ...
    def set_world_config(self, world_id: str, config: dict[str, Any]) -> None:
        """Replace the world's `system_config` rows with one row per key of `config` (empty: none)."""
        ...
    def ping(self) -> None: ...
