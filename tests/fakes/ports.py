"""Every port as an in-memory fake, in one bundle shaped like `engram.ports.clients.Clients`: what a unit test
passes to a use case where a handler passes the real clients. A test annotates it as the use case's ports
Protocol (`ports: ResolvePorts = FakePorts()`), so that mypy checks the fakes against what the use case
declares it needs."""

from __future__ import annotations

from dataclasses import dataclass, field

from engram.adapters.embedders import HashEmbedder
from engram.adapters.offline.llm import OfflineLLM
from engram.model.heuristics import DEFAULT_HEURISTICS, Heuristics
from engram.model.world import World
from engram.ports import LLM, DomainDatabase, Embedder, WebSearch
from engram.ports.language import LanguageEngine
from tests.fakes.index import InMemoryIndex
from tests.fakes.store import InMemoryStore
from tests.fakes.workflows import RecordingWorkflows

EMBEDDING_DIM = 64  # the hash embedder is pure and deterministic; small vectors keep the unit suite fast


@dataclass
class FakePorts:
    store: InMemoryStore = field(default_factory=InMemoryStore)
    index: InMemoryIndex = field(default_factory=InMemoryIndex)
    embedder: Embedder = field(default_factory=lambda: HashEmbedder(EMBEDDING_DIM))
    llm: LLM = field(default_factory=OfflineLLM)
    workflows: RecordingWorkflows = field(default_factory=RecordingWorkflows)
    heuristics: Heuristics = DEFAULT_HEURISTICS
    domain: DomainDatabase | None = None
    web: WebSearch | None = None
    language: LanguageEngine | None = None  # None: mentions by the rules alone

    def llm_for(self, world_id: str) -> LLM:
        """The model unmetered: these fakes keep no usage ledger."""
        return self.llm

    def world(self, world_id: str) -> World:
        """The world as a step resolves it: these fakes' heuristics (no stored overrides)."""
        return World(world_id, self.heuristics)
