"""Memory as read and as the user settles it: facts with their confidence explained (passive decay applied at
read time, never by a background job), conflicts with both sides, and the user's answer to a conflict."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from engram.enrichment.facts import relate_fact
from engram.errors import Conflict, InvalidInput, NotFound
from engram.model.common import utcnow
from engram.model.heuristics import Heuristics
from engram.model.memories import ConflictDetail, ConflictResolution, ExplainedFact, MemoryLayer, SemanticMemory
from engram.model.world import World
from engram.ports.clients import Clients
from engram.rules.confidence import explain


def explained(fact: SemanticMemory, h: Heuristics, now: datetime) -> ExplainedFact:
    """The fact with its effective confidence as of `now` and the factors behind it."""
    why = explain(fact.factors, fact.confidence, fact.last_validated_at, now, h.extract.decay_half_life_days,
                  h.extract.max_confidence)
    return ExplainedFact(**fact.model_dump(), effective_confidence=why.effective, explanation=why)


def user_memories(clients: Clients, world: World, user_id: str, layer: MemoryLayer, limit: int, *,
                  now: datetime | None = None, as_of: datetime | None = None) -> list[dict[str, Any]]:
    """A user's memories of one layer, the newest first; facts explained as of now. With `as_of`, those memory
    held then: the facts true then (superseded since, or not), explained as of then; what existed by then."""
    now, world_id = as_of or now or utcnow(), world.world_id
    if layer == "summary":
        return [s.model_dump(mode="json") for s in clients.store.list_summaries(world_id, user_id, limit)
                if as_of is None or s.created_at <= as_of]
    rows = clients.store.user_memories(world_id, user_id, layer, limit, as_of=as_of)
    if layer == "semantic":
        rows = [explained(r, world.heuristics, now) for r in rows]
    return [r.model_dump(mode="json") for r in rows]


def list_conflicts(clients: Clients, world: World, status: str | None, *,
                   now: datetime | None = None) -> list[ConflictDetail]:
    """A world's conflicts, the newest first, each with both facts explained."""
    now, world_id, h = now or utcnow(), world.world_id, world.heuristics
    conflicts = clients.store.list_conflicts(world_id, status)
    ids = {i for c in conflicts for i in (c.memory_id, c.conflicting_memory_id)}
    facts = {f.memory_id: explained(f, h, now) for f in clients.store.get_semantic(world_id, sorted(ids))}
    return [ConflictDetail(**c.model_dump(), memory=facts.get(c.memory_id),
                           conflicting_memory=facts.get(c.conflicting_memory_id)) for c in conflicts]


def resolve_conflict(clients: Clients, world: World, conflict_id: str, answer: ConflictResolution, *,
                     now: datetime | None = None) -> ConflictDetail:
    """The user's answer: keep one side (the other is superseded, not deleted) or both (they do not conflict).
    A settlement by the rules may be overturned; the user's own is final (409)."""
    now, world_id, store = now or utcnow(), world.world_id, clients.store
    conflict = store.get_conflict(world_id, conflict_id)
    if conflict is None:
        raise NotFound(f"no conflict {conflict_id!r} in world {world_id!r}")
    if conflict.resolved_by == "user":
        raise Conflict(f"conflict {conflict_id!r} was settled by the user already",
                       details={"winner_memory_id": conflict.winner_memory_id})
    sides = [conflict.memory_id, conflict.conflicting_memory_id]
    if answer.winner_memory_id is not None and answer.winner_memory_id not in sides:
        raise InvalidInput("winner_memory_id must be one of the conflict's two memories", details={"memories": sides})
    facts = {f.memory_id: f for f in store.get_semantic(world_id, sides)}
    if len(facts) != 2:
        raise Conflict(f"a memory of conflict {conflict_id!r} no longer exists")
    keep = set(sides) if answer.keep_both else {answer.winner_memory_id}
    changed: list[SemanticMemory] = []
    for memory_id, fact in facts.items():
        if memory_id in keep:
            fact.status, fact.valid_to = "active", None
            fact.last_validated_at = max(fact.last_validated_at, now)  # the user vouched for it: decay restarts
        elif fact.status == "active":
            fact.status, fact.valid_to = "superseded", now
        changed.append(fact)
    settled = conflict.model_copy(update={"status": "resolved", "resolved_by": "user", "resolved_at": now,
                                          "winner_memory_id": answer.winner_memory_id, "note": answer.note})
    if not store.settle_conflict(settled, changed):
        raise Conflict(f"conflict {conflict_id!r} was settled by the user already")
    _edges(clients, world_id, changed, now)
    by_id = {f.memory_id: explained(f, world.heuristics, now) for f in changed}
    return ConflictDetail(**settled.model_dump(), memory=by_id.get(conflict.memory_id),
                          conflicting_memory=by_id.get(conflict.conflicting_memory_id))


def _edges(clients: Clients, world_id: str, facts: Sequence[SemanticMemory], now: datetime) -> None:
    """A fact kept brings its edge back; a fact set aside takes its edge away."""
    for fact in facts:
        if fact.status == "active" and fact.object_entity_id is not None:
            relate_fact(clients, fact, fact.source_event_ids[-1] if fact.source_event_ids else "", now)
        elif fact.status != "active":
            clients.store.drop_relationship_source(world_id, fact.memory_id)
