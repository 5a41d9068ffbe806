"""The ports: what the domain needs from the outside world, as Protocols, one module each; this module
re-exports them. A use case declares the narrow ports it needs; `engram.ports.clients.Clients` holds one
adapter for each and satisfies them all.

Score conventions: keyword scores are BM25-like (higher is better, engine scale); semantic
scores are cosine similarity (higher is better, never a distance). Every method takes the
world id first: no port method can reach across worlds.
"""

from engram.ports.domain import DomainDatabase
from engram.ports.embedder import Embedder
from engram.ports.entities import EntityStore
from engram.ports.erase import EraseStore
from engram.ports.events import EventStore
from engram.ports.index import KeywordIndex
from engram.ports.insights import InsightStore
from engram.ports.llm import (
    LLM,
    ConflictCheck,
    ConflictingFacts,
    ContextDigest,
    Coreference,
    DigestedItem,
    ExtractedTriple,
    ExtractionResult,
    KnownFact,
    LLMReply,
    Reference,
    Usage,
    WindowEvent,
    WrittenSummary,
)
from engram.ports.memories import MemoryStore
from engram.ports.mentions import MentionStore
from engram.ports.outbox import OutboxStore
from engram.ports.portability import PortabilityStore
from engram.ports.queries import QueryStore
from engram.ports.relationships import RelationshipStore
from engram.ports.retrieval import RetrievalStore
from engram.ports.signals import SignalStore
from engram.ports.store import Store
from engram.ports.summaries import SummaryStore
from engram.ports.web import WebSearch
from engram.ports.workflows import QueryOutcome, Workflows

__all__ = [
    "LLM",
    "ConflictCheck",
    "ConflictingFacts",
    "ContextDigest",
    "Coreference",
    "DigestedItem",
    "DomainDatabase",
    "Embedder",
    "EntityStore",
    "EraseStore",
    "EventStore",
    "ExtractedTriple",
    "ExtractionResult",
    "InsightStore",
    "KeywordIndex",
    "KnownFact",
    "LLMReply",
    "MemoryStore",
    "MentionStore",
    "OutboxStore",
    "PortabilityStore",
    "QueryOutcome",
    "QueryStore",
    "Reference",
    "RelationshipStore",
    "RetrievalStore",
    "SignalStore",
    "Store",
    "SummaryStore",
    "Usage",
    "WebSearch",
    "WindowEvent",
    "Workflows",
    "WrittenSummary",
]
