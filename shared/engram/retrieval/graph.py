"""The graph brain: what the question's entities lead to, and the traversals behind it.

The entities a query names (found by resolution's cascade, read-only) seed a walk of the relationship
graph in PostgreSQL; each reached entity weighs less per hop. The brain returns what those entities
touch (themselves, their facts, the events that name them or that they said, their episodes), ranked by
similarity to the query times the entity's weight. The traversals are also served on their own:
relationships to a depth, connected entities, shortest path, shared connections, statistics.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from engram.model.entities import Relationship
from engram.model.heuristics import Heuristics
from engram.model.search import DocKind, SemanticHit
from engram.ports.clients import Clients


class GraphBrainStore(Protocol):
    """What the graph brain reads (of `RetrievalStore`): the walk from the seeds, and what the entities reached
    touch."""

    def connected_entities(self, world_id: str, seeds: Sequence[str], depth: int, limit: int, *,
                           user_id: str | None = None) -> list[tuple[str, int]]: ...
    def entity_documents(self, world_id: str, entity_weights: dict[str, float], embedding: Sequence[float], *,
                         user_id: str | None, kinds: Sequence[DocKind], limit: int,
                         context_weight: float = 0.0) -> list[SemanticHit]: ...


class GraphBrainPorts(Protocol):
    """The ports the graph brain uses."""

    @property
    def store(self) -> GraphBrainStore: ...


def entity_weights(clients: GraphBrainPorts, world_id: str, seeds: Sequence[str], h: Heuristics, *,
                   user_id: str | None = None) -> dict[str, float]:
    """The seeds at weight 1 and the entities within `graph_depth` hops at `graph_hop_decay` per hop (over the
    edges `user_id` sees when given: another user's edges lead a user nowhere)."""
    if not seeds:
        return {}
    weights = dict.fromkeys(seeds, 1.0)
    retrieval = h.retrieval
    for entity_id, hops in clients.store.connected_entities(world_id, seeds, retrieval.graph_depth,
                                                            retrieval.graph_max_entities, user_id=user_id):
        weights.setdefault(entity_id, retrieval.graph_hop_decay ** hops)
    return weights


# Each seed's own walk, read with its name (`EntityStore.match_names`), is cut at the graph's limit plus this many: the
# nearest `graph_max_entities` of all the seeds are then in their lists unless more seeds than this take places there.
NEAR_SLACK = 16


def weights_near(seeds: Sequence[str], near: Mapping[str, Sequence[tuple[str, int]]], h: Heuristics
                 ) -> dict[str, float] | None:
    """Pure: `entity_weights` from each seed's own walk (`near`: within `graph_depth` hops, nearest first by (hops,
    id), at most `graph_max_entities` + `NEAR_SLACK`), the same weights with no read of their own; None when a seed
    was not walked, or when so many seeds could have pushed the nearest out of a list cut short (walk then)."""
    retrieval = h.retrieval
    fewest: dict[str, int] = {}
    for seed in seeds:
        walked = near.get(seed)
        if walked is None or (len(walked) >= retrieval.graph_max_entities + NEAR_SLACK and len(seeds) > NEAR_SLACK + 1):
            return None
        for entity_id, hops in walked:
            fewest[entity_id] = min(hops, fewest.get(entity_id, hops))
    weights = dict.fromkeys(seeds, 1.0)
    reached = sorted((e for e in fewest if e not in weights), key=lambda e: (fewest[e], e))
    for entity_id in reached[: retrieval.graph_max_entities]:
        weights[entity_id] = retrieval.graph_hop_decay ** fewest[entity_id]
    return weights


def graph_brain(clients: GraphBrainPorts, world_id: str, weights: dict[str, float], vector: Sequence[float], *,
                user_id: str | None, kinds: Sequence[DocKind], limit: int, h: Heuristics) -> list[SemanticHit]:
    """What the weighted entities touch, best first (empty when the query names no known entity)."""
    if not weights:
        return []
    return clients.store.entity_documents(world_id, weights, vector, user_id=user_id, kinds=kinds, limit=limit,
                                          context_weight=h.retrieval.search_context_weight)


# The traversals below walk the edges `user_id` sees when one is given, every edge of the world otherwise.
def relationships(clients: Clients, world_id: str, entity_id: str, depth: int, *,
                  user_id: str | None = None) -> list[Relationship]:
    """Relationships reachable from an entity within `depth` hops, either direction."""
    return clients.store.relationships(world_id, entity_id, depth, user_id=user_id)


def connected(clients: Clients, world_id: str, entity_ids: Sequence[str], depth: int,
              limit: int, *, user_id: str | None = None) -> list[tuple[str, int]]:
    """(entity id, hops) of the entities within `depth` hops, nearest first."""
    return clients.store.connected_entities(world_id, entity_ids, depth, limit, user_id=user_id)


def shortest_path(clients: Clients, world_id: str, from_entity_id: str, to_entity_id: str,
                  max_length: int, *, user_id: str | None = None) -> list[Relationship] | None:
    """The relationships of a shortest chain between two entities, or None past `max_length` edges."""
    return clients.store.shortest_path(world_id, from_entity_id, to_entity_id, max_length, user_id=user_id)


def shared_connections(clients: Clients, world_id: str, entity_id: str, limit: int, *,
                       user_id: str | None = None) -> list[tuple[str, int, list[str]]]:
    """Entities related to this one only through neighbours they share, most shared first."""
    return clients.store.shared_connections(world_id, entity_id, limit, user_id=user_id)


def statistics(clients: Clients, world_id: str, entity_id: str | None = None, *,
               user_id: str | None = None) -> dict[str, Any]:
    """Relationship counts in total and by relation, average confidence, the most connected entities."""
    return clients.store.relationship_stats(world_id, entity_id, user_id=user_id)
