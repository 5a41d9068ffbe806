"""The composition root: builds the bundle of clients from settings, once per process.

Handlers call `get_clients()`; tests build a `Clients` of their own (fakes or real parts)
and install it with `set_clients()`.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from engram.config import DEFAULT_HEURISTICS, Heuristics, Settings, get_settings
from engram.observability import logger
from engram.overrides import WorldConfig, world_overrides
from engram.ports import LLM, DomainDatabase, Embedder, KeywordIndex, Store, WebSearch, Workflows


@dataclass
class Clients:
    settings: Settings
    store: Store
    index: KeywordIndex
    embedder: Embedder
    llm: LLM
    workflows: Workflows
    heuristics: Heuristics = DEFAULT_HEURISTICS
    domain: DomainDatabase | None = None  # the world's own records, searched for unknown names (resolve)
    web: WebSearch | None = None  # current information for the conversation context; None: off

    def world_config(self, world_id: str) -> WorldConfig:
        """A world's overrides (its `system_config` rows): a stored row that no longer validates is logged and
        ignored, never a failure of the world's every request."""
        config, ignored = world_overrides(self.store.world_config(world_id))
        if ignored:
            logger.warning("stored world config ignored: it does not validate",
                           extra={"world_id": world_id, "ignored": ignored})
        return config

    def heuristics_for(self, world_id: str, config: WorldConfig | None = None) -> Heuristics:
        """The heuristics in force for a world: defaults with its overrides (read here unless the caller
        already holds the world's config)."""
        overrides = (self.world_config(world_id) if config is None else config).heuristics
        return self.heuristics.with_overrides(overrides) if overrides else self.heuristics


_lock = threading.Lock()
_clients: Clients | None = None


def set_clients(clients: Clients | None) -> None:
    global _clients
    with _lock:
        _clients = clients


def get_clients() -> Clients:
    """The process-wide clients, built from settings on first use."""
    global _clients
    with _lock:
        if _clients is None:
            _clients = build_clients(get_settings())
        return _clients


def build_clients(settings: Settings, *, workflows: Workflows | None = None) -> Clients:
    """Every adapter from settings; `workflows` replaces Step Functions by ARN (the local runtime)."""
    # Imported here so the domain never imports adapters at module load.
    from engram.adapters.factory import (
        build_domain,
        build_embedder,
        build_index,
        build_llm,
        build_store,
        build_web_search,
        build_workflows,
    )

    embedder = build_embedder(settings)
    store = build_store(settings, embedder.dim)
    return Clients(
        settings=settings,
        store=store,
        index=build_index(settings, store),
        embedder=embedder,
        llm=build_llm(settings),
        workflows=workflows or build_workflows(settings),
        domain=build_domain(settings),
        web=build_web_search(settings),
    )
