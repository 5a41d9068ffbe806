"""A fact's history: the values one user's fact about a subject and predicate has had, in the order they became
true, with their valid times, which hold now and the conflicts that closed the others. Read from the facts and
conflicts the lifecycle keeps (a superseded value is never deleted), nothing stored besides."""

from __future__ import annotations

from datetime import datetime

from engram.errors import NotFound
from engram.memory.lifecycle import explained
from engram.model.common import utcnow
from engram.model.memories import FactHistory, FactVersion, MemoryConflict, SemanticMemory
from engram.model.world import World
from engram.ports.clients import Clients


def fact_history(clients: Clients, world: World, memory_id: str, *, now: datetime | None = None) -> FactHistory:
    """The history of the fact `memory_id` belongs to (404 when the world holds no such fact: another world's id
    is as unknown here as one never made). Each version explained as of now."""
    now, world_id, store = now or utcnow(), world.world_id, clients.store
    found = store.get_semantic(world_id, [memory_id])
    if not found:
        raise NotFound(f"no memory {memory_id!r} in world {world_id!r}")
    fact = found[0]
    facts = store.find_facts(world_id, fact.subject_entity_id, fact.predicate,
                             statuses=("active", "superseded", "archived"), user_id=fact.user_id)
    facts.sort(key=lambda f: (f.valid_from or f.created_at, f.created_at))
    conflicts = store.memory_conflicts(world_id, [f.memory_id for f in facts])
    subject = store.get_entity(world_id, fact.subject_entity_id)
    return FactHistory(
        world_id=world_id, memory_id=memory_id, user_id=fact.user_id, subject_entity_id=fact.subject_entity_id,
        subject=subject.name if subject else fact.subject_entity_id, predicate=fact.predicate,
        current=[f.memory_id for f in facts if f.status == "active"],
        versions=[_version(f, conflicts, world, now) for f in facts], conflicts=conflicts)


def _version(fact: SemanticMemory, conflicts: list[MemoryConflict], world: World, now: datetime) -> FactVersion:
    """The fact explained, with the last settled conflict it lost (a rules' or a user's), if it is not active."""
    lost = [c for c in conflicts if c.status == "resolved" and c.winner_memory_id not in (None, fact.memory_id)
            and fact.memory_id in (c.memory_id, c.conflicting_memory_id)] if fact.status != "active" else []
    closed = max(lost, key=lambda c: (c.resolved_at or c.created_at, c.conflict_id), default=None)
    return FactVersion(**explained(fact, world.heuristics, now).model_dump(), closed_by=closed,
                       superseded_by=closed.winner_memory_id if closed else None)
