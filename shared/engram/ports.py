"""The ports: what the domain needs from the outside world, as Protocols.

Score conventions: keyword scores are BM25-like (higher is better, engine scale); semantic
scores are cosine similarity (higher is better, never a distance). Every method takes the
world id first: no port method can reach across worlds.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Generic, Literal, Protocol, TypeVar, runtime_checkable

from pydantic import BaseModel

from engram.model.entities import CanonicalEntity, EntityAlias, Relationship, Resolution
from engram.model.events import EnrichmentStatus, StoredEvent, WorldUser
from engram.model.memories import (
    EpisodicMemory,
    MemoryConflict,
    MemorySummary,
    ProceduralMemory,
    SemanticMemory,
)
from engram.model.queries import Answer, NeedsMoreInfo, WorldQuery
from engram.model.search import DocKind, IndexDocument, KeywordHit, SemanticHit
from engram.model.signals import AssumptionStatus, Signal, SignalCursor
from engram.query.context import QueryContext


# ---------------------------------------------------------------- store (PostgreSQL)
class EventStore(Protocol):
    def insert_events(self, events: Sequence[StoredEvent]) -> list[bool]:
        """Insert events of one world atomically; True per event newly stored, False for a
        duplicate event_id (the stored row is left as it was)."""
        ...

    def get_event(self, world_id: str, event_id: str) -> StoredEvent | None: ...
    def get_events(self, world_id: str, event_ids: Sequence[str]) -> list[StoredEvent]: ...
    def set_enrichment(
        self, world_id: str, event_ids: Sequence[str], status: EnrichmentStatus,
        enrichment_id: str | None = None, error: str | None = None,
    ) -> None: ...
    def conversation_events(
        self, world_id: str, conversation_id: str, limit: int, before: datetime | None = None
    ) -> list[StoredEvent]:
        """The latest `limit` events of a conversation, oldest first."""
        ...
    def user_events(self, world_id: str, user_id: str, limit: int) -> list[StoredEvent]: ...
    def important_events(self, world_id: str, user_id: str, limit: int) -> list[StoredEvent]: ...
    def world_users(self, world_id: str, limit: int) -> list[WorldUser]:
        """The users of a world with their event counts, the most recently active first."""
        ...
    def set_event_embeddings(self, world_id: str, embeddings: dict[str, Sequence[float]]) -> None: ...
    def stalled_events(self, world_id: str | None, statuses: Sequence[EnrichmentStatus], received_before: datetime,
                       limit: int) -> list[tuple[str, str]]:
        """(world id, event id) of events in `statuses` received before the cutoff, oldest first; every
        world when `world_id` is None (the scheduled sweep)."""
        ...


class EntityStore(Protocol):
    def get_entity(self, world_id: str, entity_id: str) -> CanonicalEntity | None: ...
    def find_entity_by_name(self, world_id: str, name: str) -> CanonicalEntity | None:
        """Exact match on the normalized canonical name."""
        ...
    def find_alias(self, world_id: str, alias: str, user_id: str | None) -> list[EntityAlias]:
        """Aliases equal to `alias` (normalized): the user's own first, then global ones."""
        ...
    def similar_aliases(
        self, world_id: str, text: str, min_similarity: float, limit: int
    ) -> list[tuple[EntityAlias, float]]:
        """pg_trgm similarity over aliases and canonical names, best first."""
        ...
    def create_entity(self, world_id: str, name: str, entity_type: str, description: str | None = None
                      ) -> CanonicalEntity: ...
    def add_alias(self, alias: EntityAlias) -> None: ...
    def list_entities(self, world_id: str, name: str | None, limit: int) -> list[CanonicalEntity]: ...
    def record_resolutions(self, world_id: str, resolutions: Sequence[Resolution]) -> None: ...
    def get_entities(self, world_id: str, entity_ids: Sequence[str]) -> list[CanonicalEntity]: ...
    def event_entity_ids(self, world_id: str, event_ids: Sequence[str]) -> dict[str, list[str]]: ...
    def recent_conversation_entities(self, world_id: str, conversation_id: str, entity_type: str,
                                     limit: int) -> list[str]: ...
    def upsert_relationship(self, rel: Relationship) -> Relationship: ...
    def relationships(self, world_id: str, entity_id: str, depth: int) -> list[Relationship]: ...


class MemoryStore(Protocol):
    def insert_episodic(self, memory: EpisodicMemory, embedding: Sequence[float] | None) -> None: ...
    def insert_semantic(self, memory: SemanticMemory, embedding: Sequence[float] | None) -> None: ...
    def update_semantic(self, memory: SemanticMemory) -> None: ...
    def find_facts(self, world_id: str, subject_entity_id: str, predicate: str | None = None,
                   statuses: Sequence[str] = ("active",)) -> list[SemanticMemory]: ...
    def facts_about(self, world_id: str, entity_ids: Sequence[str], limit: int) -> list[SemanticMemory]: ...
    def user_memories(self, world_id: str, user_id: str, layer: str, limit: int) -> list[Any]: ...
    def insert_conflict(self, conflict: MemoryConflict) -> None: ...
    def list_conflicts(self, world_id: str, status: str | None) -> list[MemoryConflict]: ...
    def insert_procedural(self, memory: ProceduralMemory, embedding: Sequence[float] | None) -> None: ...
    def semantic_search(
        self, world_id: str, embedding: Sequence[float], *, user_id: str | None, kinds: Sequence[DocKind],
        limit: int, min_similarity: float,
    ) -> list[SemanticHit]: ...
    def documents(self, world_id: str, refs: Sequence[tuple[DocKind, str]]) -> list[IndexDocument]:
        """The indexable text and metadata of rows, by (kind, id); missing rows are skipped."""
        ...


class QueryStore(Protocol):
    def save_query(self, query: WorldQuery) -> None: ...
    def get_query(self, world_id: str, query_id: str) -> WorldQuery | None: ...
    def list_queries(self, world_id: str, user_id: str | None, limit: int) -> list[WorldQuery]: ...
    def save_context(self, context: QueryContext) -> None: ...
    def load_context(self, world_id: str, query_id: str) -> QueryContext | None: ...


class OutboxStore(Protocol):
    """Keyword-index writes, recorded in the same transaction as the rows they index."""

    def pending_index_ops(self, world_id: str | None, limit: int) -> list[tuple[int, str, DocKind, str, str]]:
        """(outbox id, world id, kind, doc id, op 'upsert'|'delete'), oldest first."""
        ...
    def mark_index_ops_done(self, outbox_ids: Sequence[int]) -> None: ...


class SummaryStore(Protocol):
    def upsert_summary(self, summary: MemorySummary, embedding: Sequence[float] | None) -> None: ...
    def get_summary(self, world_id: str, scope_kind: str, scope_id: str) -> MemorySummary | None: ...
    def list_summaries(self, world_id: str, user_id: str | None, limit: int) -> list[MemorySummary]: ...
    def stale_conversations(self, world_id: str | None, limit: int) -> list[tuple[str, str, str]]: ...
    def conversation_facts(self, world_id: str, conversation_id: str, limit: int) -> list[dict[str, Any]]: ...
    def start_run(self, world_id: str, run_id: str, started_at: datetime) -> None: ...
    def finish_run(self, world_id: str, run_id: str, finished_at: datetime, stats: dict[str, Any]) -> None: ...


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


class Store(EventStore, EntityStore, MemoryStore, QueryStore, OutboxStore, SignalStore, SummaryStore, Protocol):
    def world_config(self, world_id: str) -> dict[str, Any]:
        """The world's `system_config` overrides (heuristics and tag categories)."""
        ...
    def ping(self) -> None: ...


# ---------------------------------------------------------------- keyword index
@runtime_checkable
class KeywordIndex(Protocol):
    def upsert(self, docs: Sequence[IndexDocument]) -> None: ...
    def delete(self, world_id: str, doc_ids: Sequence[str]) -> None: ...
    def search(
        self, world_id: str, query: str, *, user_id: str | None = None, kinds: Sequence[DocKind] | None = None,
        limit: int = 10,
    ) -> list[KeywordHit]:
        """BM25 search with query syntax (terms, "phrase", field:value, AND/OR/NOT, prefix*),
        always filtered to `world_id`; highlights hold snippets with <b>...</b> marks."""
        ...
    def delete_world_user(self, world_id: str, user_id: str) -> int: ...
    def ping(self) -> None: ...


# ---------------------------------------------------------------- embeddings
class Embedder(Protocol):
    name: str
    dim: int

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Unit-normalized vectors, one per text, in order."""
        ...


# ---------------------------------------------------------------- LLM
@dataclass(frozen=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    calls: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(self.input_tokens + other.input_tokens, self.output_tokens + other.output_tokens,
                     self.calls + other.calls)


class ExtractedTriple(BaseModel):
    subject: str
    predicate: str
    object: str
    object_is_entity: bool = False
    confidence: float = 0.8
    event_id: str
    valid_from: datetime | None = None


class ExtractionResult(BaseModel):
    triples: list[ExtractedTriple] = []


class WindowEvent(BaseModel):
    event_id: str
    role: str
    content: str
    occurred_at: datetime
    speaker: str | None = None  # the user's display name or id, for "I" and "my"


T = TypeVar("T")


@dataclass(frozen=True)
class LLMReply(Generic[T]):
    value: T
    usage: Usage = field(default_factory=Usage)
    model: str = ""


class LLM(Protocol):
    """Task-shaped model calls. Adapters for Anthropic send each as a forced tool with a pydantic
    schema and validate the reply; the offline model answers by rules and says so in `name`."""

    name: str

    def extract(self, events: Sequence[WindowEvent], known_entities: Sequence[str]) -> LLMReply[ExtractionResult]: ...
    def answer(
        self, context: QueryContext, *, can_request_more: bool, remaining_info_requests: int,
        temperature: float,
    ) -> LLMReply[Answer | NeedsMoreInfo]: ...
    def force_answer(self, context: QueryContext, *, temperature: float) -> LLMReply[Answer]: ...
    def summarize(self, scope: str, items: Sequence[str]) -> LLMReply[str]: ...


# ---------------------------------------------------------------- workflows
class Workflows(Protocol):
    def start_enrichment(self, world_id: str, event_ids: Sequence[str], enrichment_id: str) -> str:
        """Start one enrichment execution for an accepted batch; returns the execution id."""
        ...
    def run_query(self, world_id: str, query_id: str) -> dict[str, Any]:
        """Run the query state machine to completion; returns its output."""
        ...
    def start_query(self, world_id: str, query_id: str) -> str: ...
    def start_consolidation(self, world_id: str | None) -> str: ...


QueryOutcome = Literal["answer", "needs_more_info"]
