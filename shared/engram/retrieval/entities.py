"""The entities a query names, found the way resolution finds them (exact name, a confident alias, one
strong trigram neighbour) but read-only: a search never learns an alias or creates an entity."""

from __future__ import annotations

from typing import Protocol

from engram.model.heuristics import Heuristics
from engram.model.search import QueryEntity
from engram.ports.entities import EntityStore
from engram.retrieval.graph import NEAR_SLACK, GraphBrainStore, entity_weights, weights_near
from engram.rules.mentions import detect_mentions


class QuestionEntityStore(EntityStore, GraphBrainStore, Protocol):
    """What finding a question's entities reads: the entity store's fast path, read-only, and the graph's walk."""


class QuestionEntityPorts(Protocol):
    """The ports finding a question's entities uses."""

    @property
    def store(self) -> QuestionEntityStore: ...


def question_entities(clients: QuestionEntityPorts, world_id: str, query: str, user_id: str | None,
                      h: Heuristics) -> tuple[list[QueryEntity], dict[str, float]]:
    """Entities named in the query, in the order named, each once; and their `entity_weights` (the seeds and the
    walk from them, on the edges `user_id` sees), which the graph and expansion brains start from."""
    found: dict[str, QueryEntity] = {}
    users: dict[str, str] = {}
    near: dict[str, tuple[tuple[str, int], ...]] = {}
    names = [mention.text for mention in detect_mentions("query", query) if mention.kind == "name"]
    # Every name in one round trip, each match with its entity's external reference and its own walk: the graph
    # brain waits for them (a walk of its own would be a second round trip).
    looked_up = clients.store.match_names(world_id, names, user_id, fuzzy_min=h.resolve.fuzzy_min,
                                          alias_accept=h.resolve.alias_accept, limit=h.resolve.disambiguation_candidates,
                                          by_confidence=h.resolve.fuzzy_by_alias_confidence,
                                          walk_depth=h.retrieval.graph_depth,
                                          walk_limit=h.retrieval.graph_max_entities + NEAR_SLACK) if names else []
    for name, matches in zip(names, looked_up, strict=True):
        exact = [m for m in matches if m.stage == "exact"]
        aliases = [m for m in matches if m.stage == "alias" and m.score > h.resolve.alias_accept]
        fuzzy = {m.entity_id: m for m in matches if m.stage == "fuzzy"}
        chosen = exact or aliases or ([*fuzzy.values()] if len(fuzzy) == 1 and
                                      next(iter(fuzzy.values())).score > h.resolve.fuzzy_single_accept else [])
        for m in chosen:
            found.setdefault(m.entity_id, QueryEntity(entity_id=m.entity_id, name=name, method=m.stage))
            # An entity standing for a user (external reference "user:<id>") says whose own words to favour.
            if m.external_ref and m.external_ref.startswith("user:"):
                users[m.entity_id] = m.external_ref.removeprefix("user:")
            if m.near is not None:
                near[m.entity_id] = m.near
    entities = [q.model_copy(update={"user_id": users.get(q.entity_id)}) for q in found.values()]
    seeds = [e.entity_id for e in entities]
    weights = weights_near(seeds, near, h)
    return entities, weights if weights is not None else entity_weights(clients, world_id, seeds, h, user_id=user_id)
