"""Extraction and the memory lifecycle: statements become episodic memories and semantic facts
that are created, reinforced, superseded or put in conflict; then the keyword index catches up."""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from engram.config import Heuristics
from engram.errors import ExtractionRejected
from engram.model.common import new_id, utcnow
from engram.model.entities import EntityAlias, Relationship
from engram.model.events import StoredEvent
from engram.model.memories import EpisodicMemory, MemoryConflict, SemanticMemory
from engram.observability import logger
from engram.ports import ExtractedTriple, WindowEvent
from engram.resolution import resolve_name, user_entity
from engram.rules.classify import EXTRACTABLE, classify
from engram.service import Clients
from engram.signals import extract_signals

# Predicates that hold one value at a time: a different object is a conflict, not a second fact.
SINGLE_VALUED = frozenset({"name", "lives_in", "works_at", "works_as", "age", "birthday", "married_to"})


def _stable_id(prefix: str, *parts: str) -> str:
    return f"{prefix}_" + hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:32]


def extract_events(clients: Clients, world_id: str, event_ids: Sequence[str], *,
                   now: datetime | None = None) -> dict[str, int]:
    """Extract memories from a batch: one model call per conversation window of extractable events;
    then the batch's signals (no model call: the offline rules)."""
    now = now or utcnow()
    h = clients.heuristics_for(world_id)
    events = sorted(clients.store.get_events(world_id, event_ids), key=lambda e: e.occurred_at)
    _embed_events(clients, world_id, events)
    counts = {"windows": 0, "facts_created": 0, "facts_reinforced": 0, "conflicts": 0, "episodes": 0,
              "failed_events": 0}
    by_conversation: dict[str, list[StoredEvent]] = defaultdict(list)
    for e in events:
        if e.role == "user" and classify(e.content) in EXTRACTABLE:
            by_conversation[e.conversation_id].append(e)
    for conversation_events in by_conversation.values():
        for start in range(0, len(conversation_events), h.extraction_window):
            window = conversation_events[start:start + h.extraction_window]
            try:
                _extract_window(clients, world_id, window, h, now, counts)
            except ExtractionRejected as exc:
                # The window's events stay stored and are marked failed for a later retry; the rest go on.
                clients.store.set_enrichment(world_id, [e.event_id for e in window], "failed", error=str(exc))
                counts["failed_events"] += len(window)
                logger.warning("extraction rejected for a window", extra={"world_id": world_id, "error": str(exc)})
            counts["windows"] += 1
    # Signals read the whole batch once, per conversation window, after the memories are in place.
    counts["signals"] = extract_signals(clients, world_id, events, h=h, now=now)["signals"]
    return counts


def _embed_events(clients: Clients, world_id: str, events: list[StoredEvent]) -> None:
    if events:
        vectors = clients.embedder.embed([e.content for e in events])
        clients.store.set_event_embeddings(world_id, {e.event_id: v for e, v in zip(events, vectors, strict=True)})


def _extract_window(clients: Clients, world_id: str, window: list[StoredEvent], h: Heuristics, now: datetime,
                    counts: dict[str, int]) -> None:
    store = clients.store
    speakers = {e.user_id: user_entity(clients, world_id, e.user_id) for e in window}
    known = sorted({ent.name for ent in speakers.values()})
    reply = clients.llm.extract([WindowEvent(event_id=e.event_id, role=e.role, content=e.content,
                                             occurred_at=e.occurred_at, speaker=e.user_id) for e in window], known)
    by_id = {e.event_id: e for e in window}
    touched_entities: set[str] = {ent.entity_id for ent in speakers.values()}
    for triple in reply.value.triples:
        event = by_id.get(triple.event_id)
        if event is None:  # the model cited a message outside the window: ignore the triple
            continue
        entity_ids = _apply_triple(clients, world_id, event, triple, h, now, counts)
        touched_entities.update(entity_ids)
    mentioned = store.event_entity_ids(world_id, list(by_id))
    for ids in mentioned.values():
        touched_entities.update(ids)
    episode = EpisodicMemory(
        world_id=world_id, memory_id=_stable_id("epi", world_id, *sorted(by_id)), user_id=window[0].user_id,
        conversation_id=window[0].conversation_id, content=" ".join(e.content for e in window),
        event_ids=list(by_id), entity_ids=sorted(touched_entities), importance=max(e.importance for e in window),
        occurred_at=window[0].occurred_at,
    )
    [vector] = clients.embedder.embed([episode.content])
    store.insert_episodic(episode, vector)
    counts["episodes"] += 1


def _apply_triple(clients: Clients, world_id: str, event: StoredEvent, triple: ExtractedTriple, h: Heuristics,
                  now: datetime, counts: dict[str, int]) -> list[str]:
    """Create, reinforce, supersede or conflict one fact; returns the entity ids it touched."""
    store = clients.store
    subject_id = _entity_for(clients, world_id, event, triple.subject, h)
    if subject_id is None:
        return []
    object_id = _entity_for(clients, world_id, event, triple.object, h) if triple.object_is_entity else None
    if triple.predicate == "name" and triple.subject == event.user_id:
        store.add_alias(EntityAlias(world_id=world_id, entity_id=subject_id, alias=triple.object,
                                    user_id=None, confidence=min(h.max_confidence, triple.confidence), source="user"))
    confidence = min(h.max_confidence, triple.confidence)
    known = store.find_facts(world_id, subject_id, triple.predicate, statuses=("active", "superseded"))
    if any(event.event_id in f.source_event_ids and f.object_value.lower() == triple.object.lower() for f in known):
        return [i for i in (subject_id, object_id) if i]  # this event's fact was applied already: a re-run
    existing = [f for f in known if f.status == "active"]
    same = [f for f in existing if f.object_value.lower() == triple.object.lower()]
    if same:
        fact = same[0]
        if event.event_id not in fact.source_event_ids:
            fact.confidence = min(h.max_confidence, fact.confidence + h.reinforce_step)
            fact.reinforcement_count += 1
            fact.source_event_ids = [*fact.source_event_ids, event.event_id]
            fact.last_validated_at = now
            store.update_semantic(fact)
            counts["facts_reinforced"] += 1
        return [i for i in (subject_id, object_id) if i]
    fact = SemanticMemory(
        world_id=world_id, memory_id=_stable_id("sem", world_id, subject_id, triple.predicate,
                                                 triple.object.lower(), event.event_id),
        user_id=event.user_id, subject_entity_id=subject_id, predicate=triple.predicate,
        object_value=triple.object, object_entity_id=object_id, confidence=confidence,
        source_event_ids=[event.event_id], valid_from=triple.valid_from or event.occurred_at,
        created_at=now, last_validated_at=now,
    )
    subject_name = triple.subject
    [vector] = clients.embedder.embed([f"{subject_name} {triple.predicate.replace('_', ' ')} {triple.object}"])
    store.insert_semantic(fact, vector)
    counts["facts_created"] += 1
    if triple.predicate in SINGLE_VALUED:
        for old in existing:
            _settle(clients, world_id, old, fact, classify(event.content) == "correction", h, now, counts)
    if object_id is not None:
        store.upsert_relationship(Relationship(
            world_id=world_id, relationship_id=new_id("rel"), source_entity_id=subject_id,
            relation=triple.predicate, target_entity_id=object_id, confidence=confidence,
            evidence_event_ids=[event.event_id], created_at=now))
    return [i for i in (subject_id, object_id) if i]


def _settle(clients: Clients, world_id: str, old: SemanticMemory, new: SemanticMemory, is_correction: bool,
            h: Heuristics, now: datetime, counts: dict[str, int]) -> None:
    """Two values for a single-valued predicate: a correction supersedes; a clear confidence or recency
    gap decides; otherwise both stay and the conflict is left open for the user."""
    old_time = old.valid_from or old.created_at
    new_time = new.valid_from or new.created_at
    if is_correction:
        strategy, reason, loser = "correction", "the user corrected the earlier statement", old
    elif abs(new.confidence - old.confidence) > h.conflict_confidence_gap:
        loser = old if new.confidence > old.confidence else new
        strategy, reason = "confidence_gap", f"confidence {max(new.confidence, old.confidence):.2f} vs " \
                                             f"{min(new.confidence, old.confidence):.2f}"
    elif abs((new_time - old_time).days) > h.conflict_recency_gap_days:
        loser = old if new_time > old_time else new
        strategy, reason = "recency_gap", f"{abs((new_time - old_time).days)} days apart: the newer holds"
    else:
        clients.store.insert_conflict(MemoryConflict(
            world_id=world_id, conflict_id=_stable_id("cfl", world_id, old.memory_id, new.memory_id),
            memory_id=old.memory_id, conflicting_memory_id=new.memory_id, status="open", strategy="ask_user",
            reason=f"'{old.object_value}' and '{new.object_value}' for {old.predicate}", created_at=now))
        counts["conflicts"] += 1
        return
    loser.status = "superseded"
    loser.valid_to = now
    clients.store.update_semantic(loser)
    clients.store.insert_conflict(MemoryConflict(
        world_id=world_id, conflict_id=_stable_id("cfl", world_id, old.memory_id, new.memory_id),
        memory_id=old.memory_id, conflicting_memory_id=new.memory_id, status="resolved", strategy=strategy,
        reason=reason, created_at=now, resolved_at=now))


def _entity_for(clients: Clients, world_id: str, event: StoredEvent, name: str, h: Heuristics) -> str | None:
    if name == event.user_id:
        return str(user_entity(clients, world_id, event.user_id).entity_id)
    entity_id, _method, _conf, _cands = resolve_name(clients, world_id, name, event.user_id, h)
    return entity_id


def index_pending(clients: Clients, world_id: str, event_ids: Sequence[str] = (), *, batch: int = 500) -> int:
    """Apply the world's pending outbox operations to the keyword index, then mark the batch enriched.
    Safe to re-run: an upsert replaces and a delete of a missing document is a no-op."""
    done = 0
    while True:
        ops = clients.store.pending_index_ops(world_id, batch)
        if not ops:
            break
        upserts = list(dict.fromkeys((kind, doc_id) for _id, _w, kind, doc_id, op in ops if op == "upsert"))
        deletes = [doc_id for _id, _w, _kind, doc_id, op in ops if op == "delete"]
        clients.index.upsert(clients.store.documents(world_id, upserts))
        clients.index.delete(world_id, deletes)
        clients.store.mark_index_ops_done([op[0] for op in ops])
        done += len(ops)
    if event_ids:
        still_processing = [e.event_id for e in clients.store.get_events(world_id, event_ids)
                            if e.enrichment_status != "failed"]
        clients.store.set_enrichment(world_id, still_processing, "enriched")
    return done


def mark_failed(clients: Clients, world_id: str, event_ids: Sequence[str], error: dict[str, Any]) -> dict[str, Any]:
    """The enrichment failed for good: the events stay stored, marked failed with the cause."""
    cause = f"{error.get('Error', 'Error')}: {str(error.get('Cause', ''))[:500]}"
    clients.store.set_enrichment(world_id, event_ids, "failed", error=cause)
    return {"world_id": world_id, "event_ids": list(event_ids), "status": "failed"}
