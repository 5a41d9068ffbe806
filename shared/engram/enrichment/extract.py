"""Extraction: one model call per conversation window of a batch's extractable events reads its facts (and links
its waiting references); the facts go through their lifecycle (`facts`) and each window is kept as an episode;
then the batch's signals and insights. The events' vectors are `indexing`'s."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

from engram.enrichment.facts import (
    FactPorts,
    FactStore,
    MentionNames,
    apply_triple,
    count_call,
    cross_predicate_conflicts,
    fact_text,
)
from engram.enrichment.indexing import embed_events
from engram.enrichment.insights import update_insights
from engram.enrichment.resolve import (
    ResolutionScope,
    coreference_task,
    link_references,
    user_entity,
    window_events,
)
from engram.enrichment.signals import SignalExtractStore, extract_signals
from engram.errors import ExtractionRejected
from engram.model.common import stable_id, utcnow
from engram.model.events import StoredEvent
from engram.model.memories import EpisodeEntity, EpisodicMemory, OntologyPredicate, SemanticMemory
from engram.model.world import World
from engram.observability import logger
from engram.ports import InsightStore
from engram.rules.classify import EXTRACTABLE, classify


class ExtractStore(FactStore, SignalExtractStore, InsightStore, Protocol):
    """What the extract step reads and writes: the facts, signals and insights, and the windows' episodes."""

    def insert_episodic(self, memory: EpisodicMemory, embedding: Sequence[float] | None) -> None: ...


class ExtractPorts(FactPorts, Protocol):
    """The ports the extract step uses: the fact lifecycle's, with a store for the signals, insights and episodes."""

    @property
    def store(self) -> ExtractStore: ...


def extract_events(clients: ExtractPorts, world: World, event_ids: Sequence[str], *,
                   now: datetime | None = None) -> dict[str, int]:
    """Extract memories from a batch: one model call per conversation window of extractable events;
    then the batch's signals (no model call: the offline rules)."""
    now = now or utcnow()
    world_id, h = world.world_id, world.heuristics
    events = sorted(clients.store.get_events(world_id, event_ids), key=lambda e: e.occurred_at)
    embed_events(clients, world_id, events, h)
    counts = {"windows": 0, "facts_created": 0, "facts_reinforced": 0, "conflicts": 0, "conflicts_open": 0,
              "episodes": 0, "failed_events": 0, "model_calls": 0, "model_requests": 0, "input_tokens": 0,
              "output_tokens": 0}
    by_conversation: dict[str, list[StoredEvent]] = defaultdict(list)
    ontology = clients.store.ontology_predicates(world_id)
    for e in events:
        if e.role == "user" and classify(e.content) in EXTRACTABLE:
            by_conversation[e.conversation_id].append(e)
    for conversation_events in by_conversation.values():
        for start in range(0, len(conversation_events), h.extract.extraction_window):
            window = conversation_events[start:start + h.extract.extraction_window]
            try:
                _extract_window(clients, world, window, now, counts, ontology)
            except ExtractionRejected as exc:
                # The window's events stay stored and are marked failed for a later retry; the rest go on.
                clients.store.set_enrichment(world_id, [e.event_id for e in window], "failed", error=str(exc))
                counts["failed_events"] += len(window)
                logger.warning("extraction rejected for a window", extra={"world_id": world_id, "error": str(exc)})
            counts["windows"] += 1
    # Signals read the whole batch once, per conversation window, after the memories are in place.
    counts["signals"] = extract_signals(clients, world, events, now=now)["signals"]
    # Then insights over the signals now stored: an inflection on every few turns, an intervention.
    counts.update(update_insights(clients, world, events, now=now))
    return counts


def _extract_window(clients: ExtractPorts, world: World, window: list[StoredEvent], now: datetime,
                    counts: dict[str, int], ontology: Sequence[OntologyPredicate] = ()) -> None:
    store, world_id, h = clients.store, world.world_id, world.heuristics
    speakers = {e.user_id: user_entity(clients, world_id, e.user_id) for e in window}
    known = sorted({ent.name for ent in speakers.values()})
    # Coreference rides on this call: the window's waiting pronouns and descriptions, and the only entities
    # they may point at. Linked before the triples, so "She" as a triple's subject finds who she is.
    scope = ResolutionScope.read(clients, world)
    task = coreference_task(clients, scope, window)
    reply = clients.llm_for(world_id).extract(window_events(window), known, references=task.references,
                                              candidates=task.candidates, predicates=ontology)
    count_call(counts, reply.usage, reply.fallback)
    counts["coreferences"] = counts.get("coreferences", 0) + link_references(
        clients, scope, window, task, reply.value.coreferences)
    by_id = {e.event_id: e for e in window}
    names = MentionNames(scope, store.recorded_mentions(world_id, list(by_id)))
    roles: dict[str, set[str]] = defaultdict(set)
    for ent in speakers.values():
        roles[ent.entity_id].add("speaker")
    # The model may cite a message outside the window: such triples are ignored.
    # Stated ends after the values stated: "Porto, not Lisbon" records Lisbon's end as the conflict Porto settled.
    triples = sorted((t for t in reply.value.triples if t.event_id in by_id), key=lambda t: t.negated)
    episode_content = " ".join(e.content for e in window)
    # One embedding call per window: every fact it may create, and its episode.
    *fact_vectors, episode_vector = clients.embedder.embed([*(fact_text(t) for t in triples), episode_content])
    stated: list[SemanticMemory] = []
    for triple, vector in zip(triples, fact_vectors, strict=True):
        outcome = apply_triple(clients, world_id, by_id[triple.event_id], triple, h, now, counts, names,
                                vector=vector)
        if outcome is None:
            continue
        roles[outcome.subject_entity_id].add("subject")
        if outcome.object_entity_id is not None:
            roles[outcome.object_entity_id].add("object")
        if outcome.memory_id not in {f.memory_id for f in stated}:
            stated.append(outcome)
    cross_predicate_conflicts(clients, world_id, stated, by_id, h, now, counts)
    for ids in store.event_entity_ids(world_id, list(by_id)).values():
        for entity_id in ids:
            roles[entity_id].add("mentioned")
    entities = {e.entity_id: e for e in store.get_entities(world_id, list(roles))}
    episode = EpisodicMemory(
        world_id=world_id, memory_id=stable_id("epi", world_id, *sorted(by_id)), user_id=window[0].user_id,
        conversation_id=window[0].conversation_id, content=episode_content,
        event_ids=list(by_id), entity_ids=sorted(roles), importance=max(e.importance for e in window),
        occurred_at=window[0].occurred_at,
        entities=[EpisodeEntity(entity_id=i, name=entities[i].name, entity_type=entities[i].entity_type,
                                roles=sorted(roles[i])) for i in sorted(roles) if i in entities],
    )
    store.insert_episodic(episode, episode_vector)
    counts["episodes"] += 1
