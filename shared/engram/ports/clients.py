"""The bundle of clients every use case receives: one value holding an adapter for each port.

The composition root (`engram.app.compose`) builds it from settings; tests build one of their own from
fakes or real parts. It satisfies every narrow port a use case declares."""

from __future__ import annotations

from dataclasses import dataclass

from engram.config import Settings
from engram.model.heuristics import DEFAULT_HEURISTICS, Heuristics
from engram.model.overrides import WorldConfig, world_overrides
from engram.model.world import World
from engram.observability import logger
from engram.ports import LLM, DomainDatabase, Embedder, KeywordIndex, Store, WebSearch, Workflows
from engram.ports.language import LanguageEngine
from engram.ports.usage import MeteredLLM


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
    language: LanguageEngine | None = None  # the parser (named entities for mentions); None: the rules alone
    # The offline engine a world's stages fall back to once its daily model budget is spent; None: `llm` unmetered.
    offline: LLM | None = None

    def world_config(self, world_id: str) -> WorldConfig:
        """A world's overrides (its `system_config` rows): a stored row that no longer validates is logged and
        ignored, never a failure of the world's every request."""
        config, ignored = world_overrides(self.store.world_config(world_id))
        if ignored:
            logger.warning("stored world config ignored: it does not validate",
                           extra={"world_id": world_id, "ignored": ignored})
        return config

    def llm_for(self, world_id: str) -> LLM:
        """The model as the world may use it today: each call counted in the usage ledger, and once the world's daily
        token budget (its `llm_budget`, else ENGRAM_LLM_DAILY_TOKENS) is spent, the offline engine in its place."""
        if self.offline is None:
            return self.llm
        budget = self.world_config(world_id).llm_budget
        return MeteredLLM(self.llm, self.offline, self.store, world_id,
                          budget if budget is not None else self.settings.llm_daily_tokens)

    def world(self, world_id: str) -> World:
        """The world as this invocation sees it: its config read once, its heuristics resolved from it."""
        config = self.world_config(world_id)
        heuristics = self.heuristics.with_overrides(config.heuristics) if config.heuristics else self.heuristics
        return World(world_id, heuristics, config)
