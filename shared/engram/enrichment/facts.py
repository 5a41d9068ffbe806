"""The fact lifecycle: a triple the model read becomes a fact that is created, reinforced, superseded or put in
conflict (by the rules, or left to the user), and a fact whose object is an entity an edge of the graph. Over time:
a new value of a single-valued predicate closes the old one's valid time, an older value becomes history, and a
stated end ("I no longer work at X", a negated triple) closes the fact without a new value."""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from datetime import datetime
from typing import Protocol

from engram.enrichment.resolve import ResolutionScope, ResolvePorts, ResolveStore, resolve_name
from engram.errors import ExtractionRejected
from engram.model.common import new_id, stable_id
from engram.model.entities import EntityAlias, RecordedMention, Relationship
from engram.model.events import StoredEvent
from engram.model.heuristics import Heuristics
from engram.model.memories import ConfidenceFactors, MemoryConflict, SemanticMemory
from engram.observability import logger
from engram.ports import LLM, DomainDatabase, Embedder, ExtractedTriple, KnownFact, Usage
from engram.rules.classify import classify
from engram.rules.confidence import initial_factors, reinforced, stored_confidence
from engram.rules.conflicts import Decision, Side, conflict_kind, decide, older_news, states_change
from engram.rules.mentions import PRONOUNS
from engram.rules.names import is_short_form


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
    def llm_for(self, world_id: str) -> LLM:
        """The model as the world may use it today (metered, the offline engine once its budget is spent)."""
        ...
    @property
    def embedder(self) -> Embedder: ...
    @property
    def domain(self) -> DomainDatabase | None: ...


def count_call(counts: dict[str, int], usage: Usage, fallback: str | None = None) -> None:
    """One call through the model port; its requests (a retry of invalid output is a second) and tokens."""
    counts["model_calls"] = counts.get("model_calls", 0) + 1
    counts["model_requests"] = counts.get("model_requests", 0) + usage.calls
    counts["input_tokens"] = counts.get("input_tokens", 0) + usage.input_tokens
    counts["output_tokens"] = counts.get("output_tokens", 0) + usage.output_tokens
    if fallback:  # the offline engine read it in the model's place (basis offline): counted by why
        counts[f"offline_{fallback}_calls"] = counts.get(f"offline_{fallback}_calls", 0) + 1


def fact_text(triple: ExtractedTriple) -> str:
    """What a fact's vector is made of: subject, predicate in words, object."""
    return f"{triple.subject} {triple.predicate.replace('_', ' ')} {triple.object}"


def _same_value(a: str, b: str) -> bool:
    return " ".join(a.lower().split()) == " ".join(b.lower().split())


def _says_the_same(predicate: str, known: str, new: str) -> bool:
    """The same value; for a name, also the known name said shorter ("Alice" of "Alice Moreau" keeps it)."""
    return _same_value(known, new) or (predicate == "name" and is_short_form(new, known))


def apply_triple(clients: FactPorts, world_id: str, event: StoredEvent, triple: ExtractedTriple, h: Heuristics,
                  now: datetime, counts: dict[str, int], names: MentionNames, *,
                  vector: Sequence[float] | None = None) -> SemanticMemory | None:
    """The lifecycle of one triple: the same value reinforces; a different value of a single-valued predicate
    (of any predicate with `conflict_every_predicate`) is a conflict the rules settle or leave to the user; otherwise a new fact. Returns the fact this event
    stated (None when its subject is no entity). Each step is one transaction, outbox included."""
    store = clients.store
    cap = h.extract.max_confidence
    if triple.negated:  # a stated end is no new fact: it closes the fact it ends
        return close_facts(clients, world_id, event, triple, counts, names)
    subject_id = names.entity_for(clients, event, triple.subject, triple.subject_type)
    if subject_id is None:
        return None
    object_id = names.entity_for(clients, event, triple.object, triple.object_type) if triple.object_is_entity else None
    speaker_id = names.scope.user_entity_id(clients, event.user_id)
    if triple.predicate == "name" and subject_id == speaker_id:
        store.add_alias(EntityAlias(world_id=world_id, entity_id=subject_id, alias=triple.object,
                                    user_id=None, confidence=min(cap, triple.confidence), source="user",
                                    origin_event_id=event.event_id))
    if triple.predicate in h.extract.ending_predicates:  # "quit Acme": its own fact, and the end of working there
        close_facts(clients, world_id, event, triple, counts, names, ends=h.extract.single_valued_predicates)
    # Each user's facts live their own lifecycle: another user's words neither reinforce nor supersede them.
    known = store.find_facts(world_id, subject_id, triple.predicate, statuses=("active", "superseded"),
                             user_id=event.user_id)
    for f in known:
        if event.event_id in f.source_event_ids and _says_the_same(triple.predicate, f.object_value, triple.object):
            if f.status == "active" and f.object_entity_id is not None:
                relate_fact(clients, f, event.event_id, now)  # a re-run: make sure the edge stands, change nothing else
            return f
    active = [f for f in known if f.status == "active"]
    same = [f for f in active if _says_the_same(triple.predicate, f.object_value, triple.object)]
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
        [vector] = clients.embedder.embed([fact_text(triple)])
    superseded: list[SemanticMemory] = []
    conflicts: list[MemoryConflict] = []
    if h.extract.single_valued(triple.predicate):
        correction = classify(event.content) == "correction"
        # Words of the value itself say nothing of a change ("New Zealand", "Started Ltd").
        change = states_change(_without(event.content, triple.object), h.extract.conflict_change_phrases)
        # When each known value was first said: a valid time that is only that is no date of its own.
        said = {e.event_id: e.occurred_at for e in store.get_events(
            world_id, [f.source_event_ids[0] for f in active if f.source_event_ids])}
        said[event.event_id] = event.occurred_at
        for old in active:
            loser, conflict = _settle(old, fact, True, correction, h, now, is_change=change, said=said)
            conflicts.append(conflict)
            if loser is old:
                superseded.append(old)
            if fact.status != "active":
                break  # the new value lost: the others it differs from stand as they are
        if conflicts and conflicts[-1].strategy == "history":
            # Older news held until the first value known to follow it began.
            fact.valid_to = min((_valid_at(f) for f in known if _valid_at(f) > _valid_at(fact)),
                                default=fact.valid_to)
    store.record_facts(world_id, [(fact, vector)], superseded, conflicts)
    counts["facts_created"] += 1
    counts["conflicts"] += len(conflicts)
    counts["conflicts_open"] = counts.get("conflicts_open", 0) + sum(c.status == "open" for c in conflicts)
    for old in superseded:
        store.drop_relationship_source(world_id, old.memory_id)
    if object_id is not None and fact.status == "active":
        relate_fact(clients, fact, event.event_id, now)
    return fact


def cross_predicate_conflicts(clients: FactPorts, world_id: str, stated: list[SemanticMemory],
                               by_id: dict[str, StoredEvent], h: Heuristics, now: datetime,
                               counts: dict[str, int]) -> None:
    """Facts with different predicates that cannot both hold ("prefers email", "hates electronic
    communication"): asked of the model once per window, and only when a subject it stated facts about
    has other active facts. A rejected check leaves the facts as they are (nothing is lost)."""
    store = clients.store
    stated = [f for f in stated if f.status == "active"]
    stated_ids = {f.memory_id for f in stated}
    others: dict[str, list[SemanticMemory]] = {}
    for subject_id in dict.fromkeys(f.subject_entity_id for f in stated):
        own = {f.predicate for f in stated if f.subject_entity_id == subject_id}
        speakers = sorted({f.user_id for f in stated if f.subject_entity_id == subject_id})
        rest = [f for user_id in speakers for f in store.find_facts(world_id, subject_id, user_id=user_id)
                if f.memory_id not in stated_ids and not (f.predicate in own and h.extract.single_valued(f.predicate))]
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
        reply = clients.llm_for(world_id).find_conflicts([shown(f) for f in candidates], [shown(f) for f in known])
    except ExtractionRejected as exc:
        counts["conflict_checks_rejected"] = counts.get("conflict_checks_rejected", 0) + 1
        logger.warning("cross-predicate conflict check rejected", extra={"world_id": world_id, "error": str(exc)})
        return
    count_call(counts, reply.usage, reply.fallback)
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
        loser, conflict = _settle(old, new, False, correction, h, now,
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


def close_facts(clients: FactPorts, world_id: str, event: StoredEvent, triple: ExtractedTriple,
                counts: dict[str, int], names: MentionNames, *, ends: Collection[str] = ()) -> SemanticMemory | None:
    """A stated end ("I no longer work at Acme"): the speaker's active facts of that subject, predicate and value
    (its words, or the entity the event's mention of it was resolved to) that began before it are closed
    (superseded, valid until the end), with no new value. `ends`: for a predicate that ends a value ("quit
    Acme"), the predicates whose facts with that value it closes, instead of its own. Returns the first closed
    (None when nothing held). A re-run finds them closed already and changes nothing."""
    subject_id = names.entity_for(clients, event, triple.subject, triple.subject_type)
    if subject_id is None:
        return None
    object_id = names.by_event.get((event.event_id, triple.object.lower()))  # resolved, never created, for an end
    ended = triple.valid_from or event.occurred_at
    held = clients.store.find_facts(world_id, subject_id, None if ends else triple.predicate, user_id=event.user_id)
    closed = [f for f in held if (not ends or f.predicate in ends)
              and (_same_value(f.object_value, triple.object) or (object_id and f.object_entity_id == object_id))
              and _valid_at(f) <= ended]
    for f in closed:
        f.status, f.valid_to = "superseded", ended
    if not closed:
        return None
    clients.store.record_facts(world_id, [], closed, [])
    counts["facts_closed"] = counts.get("facts_closed", 0) + len(closed)
    for f in closed:
        clients.store.drop_relationship_source(world_id, f.memory_id)
    return closed[0]


def _without(text: str, value: str) -> str:
    """The text with the value's words taken out, in any case."""
    return re.sub(re.escape(value), " ", text, flags=re.I) if value.strip() else text


def _valid_at(fact: SemanticMemory) -> datetime:
    """When a fact became true: its valid_from, else when it was recorded."""
    return fact.valid_from or fact.created_at


def _side(fact: SemanticMemory, is_correction: bool = False, is_change: bool = False,
          said: Mapping[str, datetime] | None = None) -> Side:
    first = fact.source_event_ids[0] if fact.source_event_ids else None
    return Side(confidence=fact.confidence, source=fact.factors.source if fact.factors else "user",
                valid_at=_valid_at(fact), is_correction=is_correction, is_change=is_change,
                said_at=(said or {}).get(first) if first else None)


def _settle(old: SemanticMemory, new: SemanticMemory, same_predicate: bool, is_correction: bool, h: Heuristics,
            now: datetime, *, reason: str | None = None, is_change: bool = False,
            said: Mapping[str, datetime] | None = None) -> tuple[SemanticMemory | None, MemoryConflict]:
    """Two facts that cannot both hold, settled by the rules (engram.rules.conflicts): the loser is superseded,
    never deleted; with no rule to decide both stay active and the conflict waits for the user. A new value older
    than the current one is history (same predicate only: another predicate's fact is no earlier value of it).
    Returns the loser (None when open) and the conflict record. Mutates the loser."""
    decision: Decision | None = older_news(
        _side(old, said=said), _side(new, said=said),
        undated_slack_days=h.extract.conflict_recency_gap_days) if same_predicate else None
    if decision is None:
        decision = decide(_side(old, said=said), _side(new, is_correction, is_change, said),
                          confidence_gap=h.extract.conflict_confidence_gap,
                          recency_gap_days=h.extract.conflict_recency_gap_days,
                          correction_first=h.extract.conflict_correction_first)
    what = reason or f"'{old.object_value}' and '{new.object_value}' for {old.predicate}"
    conflict = MemoryConflict(
        world_id=old.world_id, conflict_id=stable_id("cfl", old.world_id, old.memory_id, new.memory_id),
        memory_id=old.memory_id, conflicting_memory_id=new.memory_id, status="open", strategy=decision.strategy,
        reason=f"{what}: {decision.reason}", created_at=now,
        kind=conflict_kind(_side(old).source, _side(new).source, same_predicate=same_predicate))
    if decision.winner is None:
        return None, conflict
    winner, loser = (new, old) if decision.winner == "new" else (old, new)
    loser.status = "superseded"
    if loser is old:  # the old value held until the new one became true (if it began before: never, once said)
        loser.valid_to = max(winner.valid_from or now, _valid_at(old))
    elif decision.strategy == "history":  # older news held until the current value began
        loser.valid_to = _valid_at(old)
    else:  # a new value that lost was never believed: its valid time is empty
        loser.valid_to = _valid_at(loser)
    conflict.status, conflict.winner_memory_id, conflict.resolved_by, conflict.resolved_at = \
        "resolved", winner.memory_id, "rules", now
    return loser, conflict


class MentionNames:
    """Names in triples to entities: the speaker; else what the resolve step (or the coreference just made)
    decided for those very words in that event, user settlements included; else the cascade."""

    def __init__(self, scope: ResolutionScope, mentions: Sequence[RecordedMention]) -> None:
        self.scope = scope
        self.by_event: dict[tuple[str, str], str | None] = {}
        # words the resolve step would not make an entity of alone: their mention ids
        self.unresolved: dict[tuple[str, str], str] = {}
        for m in mentions:
            self.by_event.setdefault((m.event_id, m.text.lower()), m.entity_id)
            if m.method == "not_found" and m.kind == "name":
                self.unresolved[m.event_id, m.text.lower()] = m.mention_id

    def entity_for(self, clients: ResolvePorts, event: StoredEvent, name: str,
                   entity_type: str | None = None) -> str | None:
        if name == event.user_id:
            return self.scope.user_entity_id(clients, event.user_id)
        key = (event.event_id, name.lower())
        # A capitalised sentence start the parser named nothing ("Priya is my boss.") stays unresolved in the
        # resolve step; a statement that reads it as a person, an organization or a place makes it one.
        typed = entity_type in ("person", "organization", "place") and key in self.unresolved
        if key in self.by_event and not typed:
            return self.by_event[key]  # None: waiting for the user's choice, or a reference nobody could link
        if name.lower() in PRONOUNS:
            return None  # never an entity named "She"
        found = resolve_name(clients, self.scope, name, event.user_id, entity_type=entity_type or "thing",
                             origin_event_id=event.event_id)
        if found.learned is not None:
            clients.store.add_alias(found.learned)
        if typed and found.entity_id is not None:  # the mention now names the entity the statement made of it
            clients.store.set_mention_entities(event.world_id, [(self.unresolved[key], found.entity_id,
                                                                 found.method, found.confidence)])
            self.by_event[key] = found.entity_id
        return found.entity_id
