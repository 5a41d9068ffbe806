"""World: one world as a request sees it, resolved once per invocation and passed down."""

from __future__ import annotations

from dataclasses import dataclass, field

from engram.model.heuristics import DEFAULT_HEURISTICS, Heuristics
from engram.model.overrides import WorldConfig


@dataclass(frozen=True)
class World:
    """A world's id, its overrides as stored, and the heuristics in force (the defaults with those overrides).
    A handler builds it once (`Clients.world`), so no step of an invocation reads the world's config twice."""

    world_id: str
    heuristics: Heuristics = DEFAULT_HEURISTICS
    config: WorldConfig = field(default_factory=WorldConfig)
