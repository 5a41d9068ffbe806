"""The rows of the in-memory store: one dict per table, keyed by (world id, row id), shared by the fake
store's parts (tests/fakes/store.py). Rows are copied in and out, as a database would, so a pipeline that
changes what it read changes nothing stored until it writes it back."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import TypeVar

from pydantic import BaseModel

from engram.model.context import QueryContext
from engram.model.entities import (
    CanonicalEntity,
    DomainSource,
    EntityAlias,
    RecordedMention,
    Relationship,
)
from engram.model.events import StoredEvent
from engram.model.insights import Inflection, InsightState, Intervention
from engram.model.memories import EpisodicMemory, MemoryAudit, MemoryConflict, OntologyPredicate, SemanticMemory
from engram.model.queries import WorldQuery
from engram.model.search import DocKind
from engram.model.signals import Signal, SignalCursor

Key = tuple[str, str]  # (world id, row id)
M = TypeVar("M", bound=BaseModel)


def normalized(text: str) -> str:
    """Names and aliases are matched lowercased with inner whitespace collapsed, as PostgreSQL stores them."""
    return " ".join(text.lower().split())


def copy(row: M) -> M:
    return row.model_copy(deep=True)


@dataclass
class OutboxRow:
    outbox_id: int
    world_id: str
    kind: DocKind
    doc_id: str
    op: str
    done: bool = False


@dataclass
class Tables:
    events: dict[Key, StoredEvent] = field(default_factory=dict)
    event_vectors: dict[Key, list[float]] = field(default_factory=dict)
    context_vectors: dict[Key, list[float]] = field(default_factory=dict)
    entities: dict[Key, CanonicalEntity] = field(default_factory=dict)
    entity_vectors: dict[Key, list[float]] = field(default_factory=dict)
    aliases: list[EntityAlias] = field(default_factory=list)
    mentions: dict[Key, RecordedMention] = field(default_factory=dict)
    relationships: dict[Key, Relationship] = field(default_factory=dict)
    domain_sources: dict[Key, DomainSource] = field(default_factory=dict)
    predicates: dict[Key, OntologyPredicate] = field(default_factory=dict)
    facts: dict[Key, SemanticMemory] = field(default_factory=dict)
    fact_vectors: dict[Key, list[float]] = field(default_factory=dict)
    episodes: dict[Key, EpisodicMemory] = field(default_factory=dict)
    episode_vectors: dict[Key, list[float]] = field(default_factory=dict)
    conflicts: dict[Key, MemoryConflict] = field(default_factory=dict)
    audit: list[MemoryAudit] = field(default_factory=list)
    queries: dict[Key, WorldQuery] = field(default_factory=dict)
    contexts: dict[Key, QueryContext] = field(default_factory=dict)
    signals: dict[Key, Signal] = field(default_factory=dict)
    signal_vectors: dict[Key, list[float]] = field(default_factory=dict)
    cursors: dict[Key, SignalCursor] = field(default_factory=dict)
    insight_states: dict[Key, InsightState] = field(default_factory=dict)
    inflections: dict[Key, Inflection] = field(default_factory=dict)
    interventions: dict[Key, Intervention] = field(default_factory=dict)
    outbox: list[OutboxRow] = field(default_factory=list)
    erasures: dict[str, int] = field(default_factory=dict)
    _outbox_ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    def queue(self, world_id: str, kind: DocKind, doc_id: str, op: str = "upsert") -> None:
        """An index outbox row, as the store writes one with the row it indexes."""
        self.outbox.append(OutboxRow(next(self._outbox_ids), world_id, kind, doc_id, op))

    def of_world(self, table: dict[Key, M], world_id: str) -> list[M]:
        return [row for (world, _), row in table.items() if world == world_id]
