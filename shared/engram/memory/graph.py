"""The entity graph as users and capabilities read it: entities by name or definition, one entity with its
aliases, facts and edges, and the shortest chains of relationships between two entities."""

from __future__ import annotations

from typing import Protocol

from engram.errors import NotFound
from engram.model.entities import CanonicalEntity, EntityDetail, EntityPath, Relationship
from engram.model.world import World
from engram.ports.clients import Clients
from engram.ports.entities import EntityStore
from engram.ports.relationships import RelationshipStore


class EntityGraphStore(EntityStore, RelationshipStore, Protocol):
    """The entities and the edges between them."""


class EntityGraphPorts(Protocol):
    """The ports reading entities by name or definition, and the paths between two, use."""

    @property
    def store(self) -> EntityGraphStore: ...


def find_entities(clients: EntityGraphPorts, world: World, name: str | None, definition: str | None,
                  limit: int) -> list[CanonicalEntity]:
    """Entities whose name or an alias contains `name` or is a near spelling of it (best match first), and
    whose type or description names `definition`."""
    world_id, h = world.world_id, world.heuristics
    return clients.store.list_entities(world_id, name, limit, definition=definition,
                                       min_similarity=h.graph.entity_search_min_similarity)


def require_entity(clients: EntityGraphPorts, world_id: str, entity_id: str) -> CanonicalEntity:
    entity = clients.store.get_entity(world_id, entity_id)
    if entity is None:
        raise NotFound(f"no entity {entity_id!r} in world {world_id!r}")
    return entity


def entity_detail(clients: Clients, world: World, entity_id: str, user_id: str | None = None) -> EntityDetail:
    """An entity, every alias (global, and the users' own), its facts (as subject or object, strongest first)
    and its direct relationships; for `user_id`, only the user's own aliases, facts and edges and the world's."""
    world_id, h = world.world_id, world.heuristics
    entity = require_entity(clients, world_id, entity_id)
    store = clients.store
    return EntityDetail(**entity.model_dump(),
                        alias_details=store.entity_aliases(world_id, entity_id, user_id),
                        facts=store.facts_about(world_id, [entity_id], h.graph.entity_detail_max_facts,
                                                user_id=user_id),
                        relationships=store.relationships(world_id, entity_id, 1, user_id=user_id))


def find_paths(clients: EntityGraphPorts, world: World, from_id: str, to_id: str, max_length: int,
               limit: int, user_id: str | None = None) -> list[EntityPath]:
    """The shortest chains of relationships (either direction) from one entity to another, at most
    `max_length` edges and `limit` chains; none when they are not connected that closely. For `user_id`, on
    the edges that user sees only; for a world-level caller, on every edge."""
    world_id, h = world.world_id, world.heuristics
    require_entity(clients, world_id, from_id)
    require_entity(clients, world_id, to_id)
    # Breadth first, one query per hop; each entity keeps every edge that reached it at its first hop.
    reached: dict[str, list[tuple[str, Relationship]]] = {from_id: []}
    frontier = [from_id]
    for _hop in range(max_length):
        if to_id in reached or not frontier:
            break
        level: dict[str, list[tuple[str, Relationship]]] = {}
        ends = set(frontier)
        for rel in clients.store.neighbours(world_id, frontier, user_id=user_id):
            for near, far in ((rel.source_entity_id, rel.target_entity_id), (rel.target_entity_id, rel.source_entity_id)):
                if near in ends and far not in reached:
                    level.setdefault(far, []).append((near, rel))
        reached.update(level)
        frontier = list(level)[: h.graph.path_max_frontier]
    if to_id not in reached or to_id == from_id:
        return [] if to_id != from_id else [_path(clients, world_id, [from_id], [])]
    chains: list[tuple[list[str], list[Relationship]]] = []
    stack: list[tuple[str, list[str], list[Relationship]]] = [(to_id, [to_id], [])]
    while stack and len(chains) < limit:
        node, ids, rels = stack.pop()
        if node == from_id:
            chains.append((ids[::-1], rels[::-1]))
            continue
        for previous, rel in reversed(reached[node]):
            stack.append((previous, [*ids, previous], [*rels, rel]))
    return [_path(clients, world_id, ids, rels) for ids, rels in chains]


def _path(clients: EntityGraphPorts, world_id: str, ids: list[str], rels: list[Relationship]) -> EntityPath:
    names = {e.entity_id: e.name for e in clients.store.get_entities(world_id, ids)}
    confidence = 1.0
    for rel in rels:
        confidence *= rel.confidence
    return EntityPath(entity_ids=ids, names=[names.get(i, i) for i in ids], relationships=rels,
                      confidence=round(confidence, 4))
