"""The ports: what the domain needs from the outside world, as Protocols.

Score conventions: keyword scores are BM25-like (higher is better, engine scale); semantic
scores are cosine similarity (higher is better, never a distance). Every method takes the
world id first: no port method can reach across worlds.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, Protocol, runtime_checkable

from engram.model.entities import DomainMatch, DomainSource
from engram.model.search import DocKind, IndexDocument, KeywordHit
from engram.model.web import WebResult
from engram.ports.llm import (  # the model port, in a module of its own
    LLM,
    ConflictCheck,
    ConflictingFacts,
    Coreference,
    ExtractedTriple,
    ExtractionResult,
    KnownFact,
    LLMReply,
    Reference,
    Usage,
    WindowEvent,
    WrittenSummary,
)
from engram.ports.store import (  # the store port, in a module of its own
    EntityStore,
    EraseStore,
    EventStore,
    InsightStore,
    MemoryStore,
    OutboxStore,
    PortabilityStore,
    QueryStore,
    RetrievalStore,
    SignalStore,
    Store,
    SummaryStore,
)

__all__ = [  # what this module re-exports; its own Protocols export themselves
    "LLM",
    "ConflictCheck",
    "ConflictingFacts",
    "Coreference",
    "EntityStore",
    "EraseStore",
    "EventStore",
    "ExtractedTriple",
    "ExtractionResult",
    "InsightStore",
    "KnownFact",
    "LLMReply",
    "MemoryStore",
    "OutboxStore",
    "PortabilityStore",
    "QueryStore",
    "Reference",
    "RetrievalStore",
    "SignalStore",
    "Store",
    "SummaryStore",
    "Usage",
    "WindowEvent",
    "WrittenSummary",
]


# ---------------------------------------------------------------- keyword index
@runtime_checkable
class KeywordIndex(Protocol):
    """Documents are keyed by world, kind and id (an event and a fact may share an id). A search's scores
    depend on the searched world's documents only, for every query form: nothing another world holds can
    move them (the engines' statistics are kept per world)."""

    def upsert(self, docs: Sequence[IndexDocument]) -> None: ...
    def delete(self, world_id: str, refs: Sequence[tuple[DocKind, str]]) -> None:
        """Forget the documents (kind, doc id) of the world; a missing one is no error."""
        ...
    def search(
        self, world_id: str, query: str, *, user_id: str | None = None, kinds: Sequence[DocKind] | None = None,
        limit: int = 10,
    ) -> list[KeywordHit]:
        """BM25 search with query syntax (terms, "phrase", field:value, AND/OR/NOT, prefix*),
        always filtered to `world_id`; highlights hold snippets with <b>...</b> marks."""
        ...
    def delete_world_user(self, world_id: str, user_id: str) -> int: ...
    def clear(self, world_id: str) -> None:
        """Forget every document of the world (before it is rebuilt from the database)."""
        ...
    def ping(self) -> None: ...


# ---------------------------------------------------------------- embeddings
class Embedder(Protocol):
    name: str
    dim: int

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Unit-normalized vectors, one per text, in order."""
        ...


# ---------------------------------------------------------------- domain database
class DomainDatabase(Protocol):
    """The world's own records (customers, products...) in an external database, searched by name."""

    def find(self, world_id: str, sources: Sequence[DomainSource], name: str, limit: int) -> list[DomainMatch]:
        """Rows of the described tables whose name column equals `name` (case and spacing aside)."""
        ...
    def ping(self) -> None: ...


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


# ---------------------------------------------------------------- web search
class WebSearch(Protocol):
    """Current information from the web, for questions the trigger rules send there. An adapter degrades
    to no results (never an error) when the service is unreachable."""

    name: str

    def search(self, query: str, limit: int) -> list[WebResult]: ...
