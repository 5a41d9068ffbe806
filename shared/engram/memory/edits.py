"""The user corrects or deletes a fact. A correction is the user's word: its value, confidence or valid time change,
its factors say so (source user), its vector, keyword document and edge follow. A deletion takes the fact out of
memory, the keyword index and the graph. Each leaves an audit row (the fact before, and after)."""

from __future__ import annotations

from engram.enrichment.facts import relate_fact
from engram.enrichment.indexing import index_pending
from engram.errors import InvalidInput, NotFound
from engram.memory.lifecycle import explained
from engram.model.common import new_id, utcnow
from engram.model.memories import (
    ConfidenceFactors,
    ExplainedFact,
    MemoryAudit,
    MemoryCorrection,
    MemoryDeletion,
    SemanticMemory,
)
from engram.model.world import World
from engram.ports.clients import Clients


def _fact(clients: Clients, world_id: str, memory_id: str) -> SemanticMemory:
    found = clients.store.get_semantic(world_id, [memory_id])
    if not found:  # another world's id is as unknown here as one never made (isolation is absolute)
        raise NotFound(f"no memory {memory_id!r} in world {world_id!r}")
    return found[0]


def correct_memory(clients: Clients, world: World, memory_id: str, correction: MemoryCorrection, *,
                   request_id: str | None = None) -> ExplainedFact:
    """Apply the user's correction. A new value is a plain value (the fact no longer points at an entity, so its
    edge goes); a confidence given is the user's, capped at the world's `max_confidence` like every stored one,
    and without one the fact keeps its confidence; either way the user has vouched for it now (decay restarts)."""
    now, world_id, h = utcnow(), world.world_id, world.heuristics
    before = _fact(clients, world_id, memory_id)
    given = correction.model_fields_set
    fact = before.model_copy(deep=True)
    if "object_value" in given and correction.object_value is not None \
            and correction.object_value != before.object_value:
        fact.object_value, fact.object_entity_id = correction.object_value, None
    if "valid_from" in given:
        fact.valid_from = correction.valid_from
    if "valid_to" in given:
        fact.valid_to = correction.valid_to
    if fact.valid_from is not None and fact.valid_to is not None and fact.valid_to < fact.valid_from:
        raise InvalidInput("valid_to must not be before valid_from",
                           details={"valid_from": fact.valid_from.isoformat(), "valid_to": fact.valid_to.isoformat()})
    stated = correction.confidence if correction.confidence is not None else before.confidence
    cap = h.extract.max_confidence
    fact.factors = ConfidenceFactors(base=stated, source="user", source_weight=1.0)
    fact.confidence = min(cap, stated)
    fact.last_validated_at = max(before.last_validated_at, now)
    embedding = None
    if fact.object_value != before.object_value:
        subject = clients.store.get_entity(world_id, fact.subject_entity_id)
        [embedding] = clients.embedder.embed([fact.statement(subject.name if subject else fact.subject_entity_id)])
    audit = MemoryAudit(world_id=world_id, audit_id=new_id("aud"), memory_id=memory_id, user_id=before.user_id,
                        action="correct", before=before.model_dump(mode="json"), after=fact.model_dump(mode="json"),
                        note=correction.note, request_id=request_id, at=now)
    if not clients.store.correct_semantic(fact, embedding, audit):
        raise NotFound(f"no memory {memory_id!r} in world {world_id!r}")
    # The edge stands for the fact as it is now: gone with an entity value, as sure as the fact otherwise.
    clients.store.drop_relationship_source(world_id, memory_id)
    if fact.status == "active" and fact.object_entity_id is not None:
        relate_fact(clients, fact, fact.source_event_ids[-1] if fact.source_event_ids else "", now)
    index_pending(clients, world_id)
    return explained(fact, h, now)


def delete_memory(clients: Clients, world: World, memory_id: str, *, note: str | None = None,
                  request_id: str | None = None) -> MemoryDeletion:
    """Delete a fact: its row, the conflicts naming it, its keyword document and its edges; the audit row keeps
    the fact as it was. 404 when the world holds no such fact."""
    now, world_id = utcnow(), world.world_id
    audit = clients.store.delete_semantic(MemoryAudit(
        world_id=world_id, audit_id=new_id("aud"), memory_id=memory_id, user_id="", action="delete", before={},
        note=note, request_id=request_id, at=now))
    if audit is None:
        raise NotFound(f"no memory {memory_id!r} in world {world_id!r}")
    removed = clients.store.drop_relationship_source(world_id, memory_id)
    clients.index.delete(world_id, [("semantic", memory_id)])
    index_pending(clients, world_id)
    return MemoryDeletion(world_id=world_id, memory_id=memory_id, audit_id=audit.audit_id, deleted_at=now,
                          relationships_removed=removed, conflicts_removed=len(audit.before.get("conflicts", [])))


def memory_audit(clients: Clients, world: World, memory_id: str) -> list[MemoryAudit]:
    """A fact's corrections and deletion, oldest first (kept after the fact is deleted); 404 when there are none
    and no such fact."""
    rows = clients.store.memory_audit(world.world_id, memory_id)
    if not rows:
        _fact(clients, world.world_id, memory_id)
    return rows
