"""Extraction and the memory lifecycle: statements become episodic memories and semantic facts
that are created, reinforced, superseded or put in conflict; then the keyword index catches up."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from datetime import datetime
from typing import Any, Protocol

from engram.enrichment.insights import update_insights
from engram.enrichment.resolve import (
    ResolutionScope,
    ResolvePorts,
    ResolveStore,
    coreference_task,
    link_references,
    resolve_name,
    user_entity,
    window_events,
)
from engram.enrichment.signals import SignalExtractStore, extract_signals
from engram.errors import ExtractionRejected
from engram.model.common import new_id, stable_id, utcnow
from engram.model.entities import EntityAlias, RecordedMention, Relationship
from engram.model.events import StoredEvent
from engram.model.heuristics import Heuristics
from engram.model.memories import (
    ConfidenceFactors,
    ConflictKind,
    EpisodeEntity,
    EpisodicMemory,
    MemoryConflict,
    OntologyPredicate,
    SemanticMemory,
)
from engram.model.search import DocKind, IndexDocument
from engram.model.world import World
from engram.observability import logger
from engram.ports import (
    LLM,
    DomainDatabase,
    Embedder,
    EventStore,
    ExtractedTriple,
    InsightStore,
    KeywordIndex,
    KnownFact,
    OutboxStore,
    Usage,
)
from engram.rules.classify import EXTRACTABLE, classify
from engram.rules.confidence import initial_factors, reinforced, stored_confidence
from engram.rules.conflicts import Side, decide
from engram.rules.mentions import PRONOUNS
from engram.rules.utterance import in_context, utterance


class FactStore(ResolveStore, Protocol):
    """What the fact lifecycle reads and writes: resolution's entities (for a triple's names), and the facts
    (of `MemoryStore`), each step recorded with its conflicts and index outbox rows."""

    def find_facts(self, world_id: str, subject_entity_id: str, predicate: str | None = None,
                   statuses: Sequence[str] = ("active",), *, user_id: str | None = None) -> list[SemanticMemory]: ...
    def record_facts(self, world_id: str, created: Sequence[tuple[SemanticMemory, Sequence[float] | None]],
                     updated: Sequence[SemanticMemory], conflicts: Sequence[MemoryConflict]) -> None: ...


class FactPorts(Protocol):
    """The ports the fact lifecycle uses: the model for cross-predicate conflicts, the embedder for a fact's
    vector, the domain database for resolution's last stage."""

    @property
    def store(self) -> FactStore: ...
    @property
    def llm(self) -> LLM: ...
    @property
    def embedder(self) -> Embedder: ...
    @property
    def domain(self) -> DomainDatabase | None: ...


class EventEmbeddingPorts(Protocol):
    """The ports an event's two vectors need."""

    @property
    def store(self) -> EventStore: ...
    @property
    def embedder(self) -> Embedder: ...


class ExtractStore(FactStore, SignalExtractStore, InsightStore, Protocol):
    """What the extract step reads and writes: the facts, signals and insights, and the windows' episodes."""

    def insert_episodic(self, memory: EpisodicMemory, embedding: Sequence[float] | None) -> None: ...


class ExtractPorts(Protocol):
    """The ports the extract step uses."""

    @property
    def store(self) -> ExtractStore: ...
    @property
    def llm(self) -> LLM: ...
    @property
    def embedder(self) -> Embedder: ...
    @property
    def domain(self) -> DomainDatabase | None: ...


class IndexingStore(EventStore, OutboxStore, Protocol):
    """What the index step reads and writes: the outbox, the rows' documents, the entities' vectors, the
    erasures that may overtake a write, and the batch's status."""

    def erasures(self, world_id: str) -> int: ...
    def documents(self, world_id: str, refs: Sequence[tuple[DocKind, str]]) -> list[IndexDocument]: ...
    def set_entity_embeddings(self, world_id: str, embeddings: dict[str, Sequence[float]]) -> None: ...


class IndexingPorts(Protocol):
    """The ports the index step uses."""

    @property
    def store(self) -> IndexingStore: ...
    @property
    def index(self) -> KeywordIndex: ...
    @property
    def embedder(self) -> Embedder: ...


def extract_events(clients: ExtractPorts, world: World, event_ids: Sequence[str], *,
                   now: datetime | None = None) -> dict[str, int]:
    """Extract memories from a batch: one model call per conversation window of extractable events;
    then the batch's signals (no model call: the offline rules)."""
    now = now or utcnow()
    world_id, h = world.world_id, world.heuristics
    events = sorted(clients.store.get_events(world_id, event_ids), key=lambda e: e.occurred_at)
    _embed_events(clients, world_id, events, h)
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


def _embed_events(clients: EventEmbeddingPorts, world_id: str, events: list[StoredEvent], h: Heuristics) -> None:
    """Each event's vector, of who said what; and, unless turned off, its vector in context: read after
    the turn before it in its conversation (what it replies to). One embedding call for the batch."""
    if not events:
        return
    texts = [utterance(e) for e in events]
    if h.extract.event_context_embedding:
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
                                       dict(zip(ids, vectors[len(ids):], strict=True))
                                       if h.extract.event_context_embedding else None)


def _extract_window(clients: ExtractPorts, world: World, window: list[StoredEvent], now: datetime,
                    counts: dict[str, int], ontology: Sequence[OntologyPredicate] = ()) -> None:
    store, world_id, h = clients.store, world.world_id, world.heuristics
    speakers = {e.user_id: user_entity(clients, world_id, e.user_id) for e in window}
    known = sorted({ent.name for ent in speakers.values()})
    # Coreference rides on this call: the window's waiting pronouns and descriptions, and the only entities
    # they may point at. Linked before the triples, so "She" as a triple's subject finds who she is.
    scope = ResolutionScope.read(clients, world)
    task = coreference_task(clients, scope, window)
    reply = clients.llm.extract(window_events(window), known, references=task.references, candidates=task.candidates,
                                predicates=ontology)
    _count_call(counts, reply.usage)
    counts["coreferences"] = counts.get("coreferences", 0) + link_references(
        clients, scope, window, task, reply.value.coreferences)
    by_id = {e.event_id: e for e in window}
    names = _MentionNames(scope, store.recorded_mentions(world_id, list(by_id)))
    roles: dict[str, set[str]] = defaultdict(set)
    for ent in speakers.values():
        roles[ent.entity_id].add("speaker")
    # The model may cite a message outside the window: such triples are ignored.
    triples = [t for t in reply.value.triples if t.event_id in by_id]
    episode_content = " ".join(e.content for e in window)
    # One embedding call per window: every fact it may create, and its episode.
    *fact_vectors, episode_vector = clients.embedder.embed([*(_fact_text(t) for t in triples), episode_content])
    stated: list[SemanticMemory] = []
    for triple, vector in zip(triples, fact_vectors, strict=True):
        outcome = _apply_triple(clients, world_id, by_id[triple.event_id], triple, h, now, counts, names,
                                vector=vector)
        if outcome is None:
            continue
        roles[outcome.subject_entity_id].add("subject")
        if outcome.object_entity_id is not None:
            roles[outcome.object_entity_id].add("object")
        if outcome.memory_id not in {f.memory_id for f in stated}:
            stated.append(outcome)
    _cross_predicate_conflicts(clients, world_id, stated, by_id, h, now, counts)
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


def _count_call(counts: dict[str, int], usage: Usage) -> None:
    """One call through the model port; its requests (a retry of invalid output is a second) and tokens."""
    counts["model_calls"] = counts.get("model_calls", 0) + 1
    counts["model_requests"] = counts.get("model_requests", 0) + usage.calls
    counts["input_tokens"] = counts.get("input_tokens", 0) + usage.input_tokens
    counts["output_tokens"] = counts.get("output_tokens", 0) + usage.output_tokens


def _fact_text(triple: ExtractedTriple) -> str:
    """What a fact's vector is made of: subject, predicate in words, object."""
    return f"{triple.subject} {triple.predicate.replace('_', ' ')} {triple.object}"


def _same_value(a: str, b: str) -> bool:
    return " ".join(a.lower().split()) == " ".join(b.lower().split())


def _apply_triple(clients: FactPorts, world_id: str, event: StoredEvent, triple: ExtractedTriple, h: Heuristics,
                  now: datetime, counts: dict[str, int], names: _MentionNames, *,
                  vector: Sequence[float] | None = None) -> SemanticMemory | None:
    """The lifecycle of one triple: the same value reinforces; a different value of a single-valued predicate
    is a conflict the rules settle or leave to the user; otherwise a new fact. Returns the fact this event
    stated (None when its subject is no entity). Each step is one transaction, outbox included."""
    store = clients.store
    cap = h.extract.max_confidence
    subject_id = names.entity_for(clients, event, triple.subject)
    if subject_id is None:
        return None
    object_id = names.entity_for(clients, event, triple.object) if triple.object_is_entity else None
    speaker_id = names.scope.user_entity_id(clients, event.user_id)
    if triple.predicate == "name" and subject_id == speaker_id:
        store.add_alias(EntityAlias(world_id=world_id, entity_id=subject_id, alias=triple.object,
                                    user_id=None, confidence=min(cap, triple.confidence), source="user",
                                    origin_event_id=event.event_id))
    # Each user's facts live their own lifecycle: another user's words neither reinforce nor supersede them.
    known = store.find_facts(world_id, subject_id, triple.predicate, statuses=("active", "superseded"),
                             user_id=event.user_id)
    for f in known:
        if event.event_id in f.source_event_ids and _same_value(f.object_value, triple.object):
            if f.status == "active" and f.object_entity_id is not None:
                relate_fact(clients, f, event.event_id, now)  # a re-run: make sure the edge stands, change nothing else
            return f
    active = [f for f in known if f.status == "active"]
    same = [f for f in active if _same_value(f.object_value, triple.object)]
    if same:
        fact = same[0]
        fact.factors = reinforced(fact.factors or ConfidenceFactors(base=fact.confidence), cap,
                                  h.extract.reinforce_gain)
        fact.confidence = stored_confidence(fact.factors, cap)
        fact.reinforcement_count += 1
        fact.source_event_ids = [*fact.source_event_ids, event.event_id]
        fact.last_validated_at = max(fact.last_validated_at, event.occurred_at)
        store.record_facts(world_id, [], [fact], [])
        counts["facts_reinforced"] += 1
        if fact.object_entity_id is not None:  # the edge stands as sure as its fact
            relate_fact(clients, fact, event.event_id, now)
        return fact
    factors = initial_factors(triple.confidence, "user" if subject_id == speaker_id else "reported",
                              h.extract.fact_source_weights, cap)
    fact = SemanticMemory(
        world_id=world_id, memory_id=stable_id("sem", world_id, subject_id, triple.predicate,
                                                 triple.object.lower(), event.event_id),
        user_id=event.user_id, subject_entity_id=subject_id, predicate=triple.predicate,
        object_value=triple.object, object_entity_id=object_id, confidence=stored_confidence(factors, cap),
        source_event_ids=[event.event_id], valid_from=triple.valid_from or event.occurred_at,
        created_at=now, last_validated_at=event.occurred_at, factors=factors,
    )
    if vector is None:
        [vector] = clients.embedder.embed([_fact_text(triple)])
    superseded: list[SemanticMemory] = []
    conflicts: list[MemoryConflict] = []
    if triple.predicate in h.extract.single_valued_predicates:
        correction = classify(event.content) == "correction"
        for old in active:
            loser, conflict = _settle(old, fact, "same_predicate", correction, h, now)
            conflicts.append(conflict)
            if loser is old:
                superseded.append(old)
            if fact.status != "active":
                break  # the new value lost: the others it differs from stand as they are
    store.record_facts(world_id, [(fact, vector)], superseded, conflicts)
    counts["facts_created"] += 1
    counts["conflicts"] += len(conflicts)
    counts["conflicts_open"] = counts.get("conflicts_open", 0) + sum(c.status == "open" for c in conflicts)
    for old in superseded:
        store.drop_relationship_source(world_id, old.memory_id)
    if object_id is not None and fact.status == "active":
        relate_fact(clients, fact, event.event_id, now)
    return fact


def _cross_predicate_conflicts(clients: FactPorts, world_id: str, stated: list[SemanticMemory],
                               by_id: dict[str, StoredEvent], h: Heuristics, now: datetime,
                               counts: dict[str, int]) -> None:
    """Facts with different predicates that cannot both hold ("prefers email", "hates electronic
    communication"): asked of the model once per window, and only when a subject it stated facts about
    has other active facts. A rejected check leaves the facts as they are (nothing is lost)."""
    store = clients.store
    stated = [f for f in stated if f.status == "active"]
    stated_ids = {f.memory_id for f in stated}
    single_valued = h.extract.single_valued_predicates
    others: dict[str, list[SemanticMemory]] = {}
    for subject_id in dict.fromkeys(f.subject_entity_id for f in stated):
        own = {f.predicate for f in stated if f.subject_entity_id == subject_id}
        speakers = sorted({f.user_id for f in stated if f.subject_entity_id == subject_id})
        rest = [f for user_id in speakers for f in store.find_facts(world_id, subject_id, user_id=user_id)
                if f.memory_id not in stated_ids and not (f.predicate in own and f.predicate in single_valued)]
        if rest:
            others[subject_id] = rest[-h.extract.cross_conflict_max_facts:]
    if not others:
        return
    candidates = [f for f in stated if f.subject_entity_id in others]
    subjects = {e.entity_id: e.name for e in store.get_entities(world_id, list(others))}
    known = [f for facts in others.values() for f in facts]
    by_memory = {f.memory_id: f for f in [*candidates, *known]}

    def shown(f: SemanticMemory) -> KnownFact:
        return KnownFact(memory_id=f.memory_id, subject=subjects.get(f.subject_entity_id, f.subject_entity_id),
                         predicate=f.predicate, object=f.object_value)

    try:
        reply = clients.llm.find_conflicts([shown(f) for f in candidates], [shown(f) for f in known])
    except ExtractionRejected as exc:
        counts["conflict_checks_rejected"] = counts.get("conflict_checks_rejected", 0) + 1
        logger.warning("cross-predicate conflict check rejected", extra={"world_id": world_id, "error": str(exc)})
        return
    _count_call(counts, reply.usage)
    seen: set[frozenset[str]] = set()
    for pair in reply.value.conflicts:
        new, old = by_memory.get(pair.memory_id), by_memory.get(pair.conflicting_memory_id)
        key = frozenset((pair.memory_id, pair.conflicting_memory_id))
        # Only pairs of the facts offered, a new one among them, about one subject, of one user, each pair once.
        if (new is None or old is None or new is old or key in seen or new.subject_entity_id != old.subject_entity_id
                or new.user_id != old.user_id):
            continue
        if new.memory_id not in stated_ids:
            new, old = old, new
        if new.memory_id not in stated_ids or new.status != "active" or old.status != "active":
            continue
        seen.add(key)
        event = by_id.get(new.source_event_ids[-1])
        correction = event is not None and classify(event.content) == "correction"
        loser, conflict = _settle(old, new, "cross_predicate", correction, h, now,
                                  reason=pair.reason or None)
        store.record_facts(world_id, [], [loser] if loser is not None else [], [conflict])
        if loser is not None:
            store.drop_relationship_source(world_id, loser.memory_id)
        counts["conflicts"] += 1
        counts["conflicts_open"] = counts.get("conflicts_open", 0) + (conflict.status == "open")


def relate_fact(clients: FactPorts, fact: SemanticMemory, event_id: str, now: datetime) -> None:
    """A fact whose object is an entity is an edge of the graph: typed by its predicate, as sure as the fact,
    pointing back at the fact (and the event) it stands for."""
    assert fact.object_entity_id is not None
    clients.store.upsert_relationship(Relationship(
        world_id=fact.world_id, relationship_id=new_id("rel"), source_entity_id=fact.subject_entity_id,
        relation=fact.predicate, target_entity_id=fact.object_entity_id, confidence=fact.confidence,
        evidence_event_ids=[event_id], created_at=now, source_memory_ids=[fact.memory_id]))


def _side(fact: SemanticMemory, is_correction: bool = False) -> Side:
    return Side(confidence=fact.confidence, source=fact.factors.source if fact.factors else "user",
                valid_at=fact.valid_from or fact.created_at, is_correction=is_correction)


def _settle(old: SemanticMemory, new: SemanticMemory, kind: ConflictKind, is_correction: bool, h: Heuristics,
            now: datetime, *, reason: str | None = None) -> tuple[SemanticMemory | None, MemoryConflict]:
    """Two facts that cannot both hold, settled by the rules (engram.rules.conflicts): the loser is superseded,
    never deleted; with no rule to decide both stay active and the conflict waits for the user. Returns the
    loser (None when open) and the conflict record. Mutates the loser."""
    decision = decide(_side(old), _side(new, is_correction), confidence_gap=h.extract.conflict_confidence_gap,
                      recency_gap_days=h.extract.conflict_recency_gap_days)
    what = reason or f"'{old.object_value}' and '{new.object_value}' for {old.predicate}"
    conflict = MemoryConflict(
        world_id=old.world_id, conflict_id=stable_id("cfl", old.world_id, old.memory_id, new.memory_id),
        memory_id=old.memory_id, conflicting_memory_id=new.memory_id, status="open", strategy=decision.strategy,
        reason=f"{what}: {decision.reason}", created_at=now, kind=kind)
    if decision.winner is None:
        return None, conflict
    winner, loser = (new, old) if decision.winner == "new" else (old, new)
    loser.status = "superseded"
    # The old value held until the new one became true; a new value that lost was never believed.
    loser.valid_to = winner.valid_from if loser is old and winner.valid_from else now
    conflict.status, conflict.winner_memory_id, conflict.resolved_by, conflict.resolved_at = \
        "resolved", winner.memory_id, "rules", now
    return loser, conflict


class _MentionNames:
    """Names in triples to entities: the speaker; else what the resolve step (or the coreference just made)
    decided for those very words in that event, user settlements included; else the cascade."""

    def __init__(self, scope: ResolutionScope, mentions: Sequence[RecordedMention]) -> None:
        self.scope = scope
        self.by_event: dict[tuple[str, str], str | None] = {}
        for m in mentions:
            self.by_event.setdefault((m.event_id, m.text.lower()), m.entity_id)

    def entity_for(self, clients: ResolvePorts, event: StoredEvent, name: str) -> str | None:
        if name == event.user_id:
            return self.scope.user_entity_id(clients, event.user_id)
        key = (event.event_id, name.lower())
        if key in self.by_event:
            return self.by_event[key]  # None: waiting for the user's choice, or a reference nobody could link
        if name.lower() in PRONOUNS:
            return None  # never an entity named "She"
        found = resolve_name(clients, self.scope, name, event.user_id, origin_event_id=event.event_id)
        if found.learned is not None:
            clients.store.add_alias(found.learned)
        return found.entity_id


def index_pending(clients: IndexingPorts, world_id: str, event_ids: Sequence[str] = (), *, batch: int = 500) -> int:
    """Apply the world's pending outbox operations to the keyword index, then mark the batch enriched.
    Safe to re-run: an upsert replaces and a delete of a missing document is a no-op."""
    done = 0
    while True:
        ops = clients.store.pending_index_ops(world_id, batch)
        if not ops:
            break
        # By kind and id: an event may carry the id of a fact or an entity, and each is its own document.
        upserts = list(dict.fromkeys((kind, doc_id) for _id, _w, kind, doc_id, op in ops if op == "upsert"))
        deletes = [(kind, doc_id) for _id, _w, kind, doc_id, op in ops if op == "delete"]
        erasures = clients.store.erasures(world_id)
        documents = clients.store.documents(world_id, upserts)
        clients.index.upsert(documents)
        clients.index.delete(world_id, deletes)
        if clients.store.erasures(world_id) != erasures:  # an erasure came in between the read and the write
            documents = _reindex_after_erasure(clients, world_id, documents)
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


def _reindex_after_erasure(clients: IndexingPorts, world_id: str,
                           documents: Sequence[IndexDocument]) -> list[IndexDocument]:
    """Documents written to the index from rows read before an erasure: those it removed go again (its own
    deletion of them may have come first), those it changed are written as they are now."""
    current = clients.store.documents(world_id, [(d.kind, d.doc_id) for d in documents])
    kept = {(d.kind, d.doc_id) for d in current}
    clients.index.delete(world_id, [(d.kind, d.doc_id) for d in documents if (d.kind, d.doc_id) not in kept])
    clients.index.upsert(current)
    return current


def mark_failed(clients: IndexingPorts, world_id: str, event_ids: Sequence[str],
                error: dict[str, Any]) -> dict[str, Any]:
    """The enrichment failed for good: the events stay stored, marked failed with the cause."""
    cause = f"{error.get('Error', 'Error')}: {str(error.get('Cause', ''))[:500]}"
    clients.store.set_enrichment(world_id, event_ids, "failed", error=cause)
    return {"world_id": world_id, "event_ids": list(event_ids), "status": "failed"}
