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
from engram.insights import update_insights
from engram.model.common import new_id, utcnow
from engram.model.entities import EntityAlias, RecordedMention, Relationship
from engram.model.events import StoredEvent
from engram.model.memories import EpisodicMemory, MemoryConflict, SemanticMemory
from engram.observability import logger
from engram.ports import ExtractedTriple
from engram.resolution import (
    ResolutionScope,
    coreference_task,
    link_references,
    resolve_name,
    user_entity,
    window_events,
)
from engram.rules.classify import EXTRACTABLE, classify
from engram.rules.mentions import PRONOUNS
from engram.rules.utterance import in_context, utterance
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
    _embed_events(clients, world_id, events, h)
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
    # Then insights over the signals now stored: an inflection on every few turns, an intervention.
    counts.update(update_insights(clients, world_id, events, h=h, now=now))
    return counts


def _embed_events(clients: Clients, world_id: str, events: list[StoredEvent], h: Heuristics) -> None:
    """Each event's vector, of who said what; and, unless turned off, its vector in context: read after
    the turn before it in its conversation (what it replies to). One embedding call for the batch."""
    if not events:
        return
    texts = [utterance(e) for e in events]
    if h.event_context_embedding:
        previous: dict[str, StoredEvent | None] = {}
        for e in events:  # sorted by time: the batch's own turns, else the stored turn before the first
            if e.conversation_id not in previous:
                before = clients.store.conversation_events(world_id, e.conversation_id, 1, before=e.occurred_at)
                previous[e.conversation_id] = before[-1] if before else None
            texts.append(in_context(previous[e.conversation_id], e))
            previous[e.conversation_id] = e
    vectors = clients.embedder.embed(texts)
    ids = [e.event_id for e in events]
    clients.store.set_event_embeddings(world_id, dict(zip(ids, vectors[:len(ids)], strict=True)),
                                       dict(zip(ids, vectors[len(ids):], strict=True)) if h.event_context_embedding
                                       else None)


def _extract_window(clients: Clients, world_id: str, window: list[StoredEvent], h: Heuristics, now: datetime,
                    counts: dict[str, int]) -> None:
    store = clients.store
    speakers = {e.user_id: user_entity(clients, world_id, e.user_id) for e in window}
    known = sorted({ent.name for ent in speakers.values()})
    # Coreference rides on this call: the window's waiting pronouns and descriptions, and the only entities
    # they may point at. Linked before the triples, so "She" as a triple's subject finds who she is.
    scope = ResolutionScope.read(clients, world_id, h)
    task = coreference_task(clients, scope, window)
    reply = clients.llm.extract(window_events(window), known, references=task.references, candidates=task.candidates)
    counts["coreferences"] = counts.get("coreferences", 0) + link_references(
        clients, scope, window, task, reply.value.coreferences)
    by_id = {e.event_id: e for e in window}
    names = _MentionNames(scope, store.recorded_mentions(world_id, list(by_id)))
    touched_entities: set[str] = {ent.entity_id for ent in speakers.values()}
    # The model may cite a message outside the window: such triples are ignored.
    triples = [t for t in reply.value.triples if t.event_id in by_id]
    episode_content = " ".join(e.content for e in window)
    # One embedding call per window: every fact it may create, and its episode.
    *fact_vectors, episode_vector = clients.embedder.embed([*(_fact_text(t) for t in triples), episode_content])
    for triple, vector in zip(triples, fact_vectors, strict=True):
        entity_ids = _apply_triple(clients, world_id, by_id[triple.event_id], triple, h, now, counts, names,
                                   vector=vector)
        touched_entities.update(entity_ids)
    mentioned = store.event_entity_ids(world_id, list(by_id))
    for ids in mentioned.values():
        touched_entities.update(ids)
    episode = EpisodicMemory(
        world_id=world_id, memory_id=_stable_id("epi", world_id, *sorted(by_id)), user_id=window[0].user_id,
        conversation_id=window[0].conversation_id, content=episode_content,
        event_ids=list(by_id), entity_ids=sorted(touched_entities), importance=max(e.importance for e in window),
        occurred_at=window[0].occurred_at,
    )
    store.insert_episodic(episode, episode_vector)
    counts["episodes"] += 1


def _fact_text(triple: ExtractedTriple) -> str:
    """What a fact's vector is made of: subject, predicate in words, object."""
    return f"{triple.subject} {triple.predicate.replace('_', ' ')} {triple.object}"


def _apply_triple(clients: Clients, world_id: str, event: StoredEvent, triple: ExtractedTriple, h: Heuristics,
                  now: datetime, counts: dict[str, int], names: _MentionNames, *,
                  vector: Sequence[float] | None = None) -> list[str]:
    """Create, reinforce, supersede or conflict one fact; returns the entity ids it touched."""
    store = clients.store
    subject_id = names.entity_for(clients, event, triple.subject)
    if subject_id is None:
        return []
    object_id = names.entity_for(clients, event, triple.object) if triple.object_is_entity else None
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
            if fact.object_entity_id is not None:  # the edge stands as sure as its fact
                _relate(clients, fact, event, now)
        return [i for i in (subject_id, object_id) if i]
    fact = SemanticMemory(
        world_id=world_id, memory_id=_stable_id("sem", world_id, subject_id, triple.predicate,
                                                 triple.object.lower(), event.event_id),
        user_id=event.user_id, subject_entity_id=subject_id, predicate=triple.predicate,
        object_value=triple.object, object_entity_id=object_id, confidence=confidence,
        source_event_ids=[event.event_id], valid_from=triple.valid_from or event.occurred_at,
        created_at=now, last_validated_at=now,
    )
    if vector is None:
        [vector] = clients.embedder.embed([_fact_text(triple)])
    store.insert_semantic(fact, vector)
    counts["facts_created"] += 1
    if object_id is not None:
        _relate(clients, fact, event, now)
    if triple.predicate in SINGLE_VALUED:
        for old in existing:
            _settle(clients, world_id, old, fact, classify(event.content) == "correction", h, now, counts)
    return [i for i in (subject_id, object_id) if i]


def _relate(clients: Clients, fact: SemanticMemory, event: StoredEvent, now: datetime) -> None:
    """A fact whose object is an entity is an edge of the graph: typed by its predicate, as sure as the fact,
    pointing back at the fact (and the event) it stands for."""
    assert fact.object_entity_id is not None
    clients.store.upsert_relationship(Relationship(
        world_id=fact.world_id, relationship_id=new_id("rel"), source_entity_id=fact.subject_entity_id,
        relation=fact.predicate, target_entity_id=fact.object_entity_id, confidence=fact.confidence,
        evidence_event_ids=[event.event_id], created_at=now, source_memory_ids=[fact.memory_id]))


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
    clients.store.drop_relationship_source(world_id, loser.memory_id)
    clients.store.insert_conflict(MemoryConflict(
        world_id=world_id, conflict_id=_stable_id("cfl", world_id, old.memory_id, new.memory_id),
        memory_id=old.memory_id, conflicting_memory_id=new.memory_id, status="resolved", strategy=strategy,
        reason=reason, created_at=now, resolved_at=now))


class _MentionNames:
    """Names in triples to entities: the speaker; else what the resolve step (or the coreference just made)
    decided for those very words in that event, user settlements included; else the cascade."""

    def __init__(self, scope: ResolutionScope, mentions: Sequence[RecordedMention]) -> None:
        self.scope = scope
        self.by_event: dict[tuple[str, str], str | None] = {}
        for m in mentions:
            self.by_event.setdefault((m.event_id, m.text.lower()), m.entity_id)

    def entity_for(self, clients: Clients, event: StoredEvent, name: str) -> str | None:
        if name == event.user_id:
            return self.scope.user_entity_id(clients, event.user_id)
        key = (event.event_id, name.lower())
        if key in self.by_event:
            return self.by_event[key]  # None: waiting for the user's choice, or a reference nobody could link
        if name.lower() in PRONOUNS:
            return None  # never an entity named "She"
        found = resolve_name(clients, self.scope, name, event.user_id)
        if found.learned is not None:
            clients.store.add_alias(found.learned)
        return found.entity_id


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
        documents = clients.store.documents(world_id, upserts)
        clients.index.upsert(documents)
        clients.index.delete(world_id, deletes)
        # An entity's vector is of what its document says (name, aliases, description): kept current with it.
        entities = [d for d in documents if d.kind == "entity"]
        if entities:
            vectors = clients.embedder.embed([d.text for d in entities])
            clients.store.set_entity_embeddings(world_id, {d.doc_id: v for d, v in zip(entities, vectors, strict=True)})
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
