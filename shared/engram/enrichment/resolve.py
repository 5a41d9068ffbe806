"""Entity resolution: every mention to a canonical entity, cheaply and deterministically first.

The cascade, each stage recorded as the resolution's `method`:

- exact: the normalized canonical name (confidence 1.0);
- alias: a known alias above `alias_accept`, the user's own before the world's global ones; a name the text
  states ("call me Dee", "X, known as Y"), which it teaches; a part or variant of a known name: a first name
  alone ("Robert" is Robert Lang), a company whatever its suffix or without its kind (`rules.names.name_key`,
  `brand`: "Acme Corporation" is Acme Corp, "Northwind" Northwind Labs), a full name of a first name known alone;
- fuzzy: trigram neighbours (similarity above `fuzzy_min`): one above `fuzzy_single_accept` resolves and is
  learned as the user's alias; several are `disambiguation_required` until the user settles it
  (`settle_disambiguation`, which learns the alias); one at or under it resolves nothing and is never created;
- llm_coreference: pronouns and descriptions, linked by the model inside the extraction call (never a call of
  its own) to one of the conversation's recent entities, at whatever confidence the model gives (unless a world
  sets `coreference_min`); a description above `coreference_accept` is learned as the user's alias;
- domain_db: the world's domain database; its first match creates the entity lazily with its external reference;
- created: without a domain database (`create_unknown_names`), an unknown proper noun becomes an entity, typed
  by the parser where one read it; never a date, a number or a sentence start the parser did not read as a
  name; any other name is `not_found`, a pronoun or description no coreference linked `no_candidates`.

Several candidates for one name are ranked by alias confidence, recency, usage and source.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import NamedTuple, Protocol

from engram.enrichment.aliases import first_named_person, name_part_matches, named_spans, stated_resolution
from engram.errors import Conflict, NotFound
from engram.model.common import utcnow
from engram.model.entities import (
    Candidate,
    CanonicalEntity,
    DomainSource,
    EntityAlias,
    EntitySighting,
    Mention,
    NameMatch,
    RecordedMention,
    Resolution,
    ResolutionMethod,
    Settlement,
    SettleRequest,
    unresolved_method,
)
from engram.model.events import StoredEvent
from engram.model.heuristics import Heuristics
from engram.model.world import World
from engram.ports import Coreference, Reference, WindowEvent
from engram.ports.domain import DomainDatabase
from engram.ports.entities import EntityStore
from engram.ports.events import EventStore
from engram.ports.language import LanguageEngine
from engram.ports.mentions import MentionStore
from engram.ports.relationships import RelationshipStore
from engram.rules.mentions import alias_phrases, detect_mentions
from engram.rules.names import guess_entity_type, stated_aliases
from engram.rules.ranking import CandidateEvidence, clear_winner, rank_candidates


class ResolveStore(EventStore, EntityStore, MentionStore, RelationshipStore, Protocol):
    """What resolution reads and writes: the events, the entities and aliases, the mentions, and the edges
    (the speaker's relations, for coreference; the fact lifecycle's edges)."""


class ResolvePorts(Protocol):
    """The ports resolution uses (the resolve step, coreference inside extraction, a user's settlement)."""

    @property
    def store(self) -> ResolveStore: ...
    @property
    def domain(self) -> DomainDatabase | None: ...


class MentionPorts(ResolvePorts, Protocol):
    """The resolve step's ports: resolution's, and the parser that reads names and their types (None: rules)."""

    @property
    def language(self) -> LanguageEngine | None: ...


class NameResolution(NamedTuple):
    entity_id: str | None
    method: ResolutionMethod
    confidence: float
    candidates: list[Candidate]
    learned: EntityAlias | None = None  # the alias this resolution teaches, for the caller to keep


@dataclass
class ResolutionScope:
    """What a batch reads once: the heuristics, the world's domain tables, the users' entities."""

    world_id: str
    h: Heuristics
    domain_sources: list[DomainSource] = field(default_factory=list)
    users: dict[str, str] = field(default_factory=dict)
    now: datetime = field(default_factory=utcnow)

    @classmethod
    def read(cls, clients: ResolvePorts, world: World) -> ResolutionScope:
        sources = clients.store.domain_sources(world.world_id) if clients.domain is not None else []
        return cls(world.world_id, world.heuristics, sources)

    def user_entity_id(self, clients: ResolvePorts, user_id: str) -> str:
        if user_id not in self.users:
            self.users[user_id] = user_entity(clients, self.world_id, user_id).entity_id
        return self.users[user_id]


# ---------------------------------------------------------------- the resolve step
def resolve_events(clients: MentionPorts, world: World, event_ids: Sequence[str]) -> dict[str, int]:
    """Resolve the mentions of a batch of events (the parser reads the batch in one call). Idempotent: a
    mention already recorded (by its span) is left as it is, so a retried step neither re-learns nor overwrites
    what a user settled. Pronouns and descriptions no alias explains wait, `no_candidates`, for the coreference of
    the extraction call."""
    world_id, scope = world.world_id, ResolutionScope.read(clients, world)
    store = clients.store
    events = store.get_events(world_id, event_ids)
    store.set_enrichment(world_id, [e.event_id for e in events], "enriching")
    recorded = {(m.event_id, m.start, m.end) for m in store.recorded_mentions(world_id, [e.event_id for e in events])}
    counts = {"mentions": 0, "resolved": 0, "created": 0, "disambiguation": 0, "awaiting_coreference": 0}
    events = sorted(events, key=lambda e: e.occurred_at)
    named = named_spans(clients.language, events)
    for event in events:
        speaker_id = scope.user_entity_id(clients, event.user_id)
        spans = None if named is None else named[event.event_id]
        mentions = detect_mentions(event.event_id, event.content, known_aliases(clients, scope, event), spans)
        stated = stated_aliases(event.content, spans)
        learned: list[EntityAlias] = []
        resolved: dict[tuple[int, int], str | None] = {}  # what each name resolved to: "X, known as Y" needs X
        resolutions = []
        for m in mentions:
            if (m.event_id, m.start, m.end) in recorded:
                continue
            resolution = (stated_resolution(event, m, stated, speaker_id, resolved, scope.h, learned)
                          or resolve_mention(clients, scope, event, m, learned))
            resolved[(m.start, m.end)] = resolution.entity_id
            resolutions.append(resolution)
        # What the event taught is kept with its resolutions, in one transaction: learned iff recorded.
        store.record_resolutions(world_id, resolutions, learned)
        counts["mentions"] += len(resolutions)
        counts["resolved"] += sum(r.entity_id is not None for r in resolutions)
        counts["created"] += sum(r.method == "created" for r in resolutions)
        counts["disambiguation"] += sum(r.method == "disambiguation_required" for r in resolutions)
        counts["awaiting_coreference"] += sum(r.entity_id is None and r.mention.kind != "name" for r in resolutions)
    return counts


def known_aliases(clients: ResolvePorts, scope: ResolutionScope, event: StoredEvent) -> list[str]:
    """The world's aliases (global and the speaker's own) that occur in the event in lowercase: one lookup."""
    phrases = alias_phrases(event.content, scope.h.resolve.alias_ngram_max_words,
                            scope.h.resolve.alias_lookup_max_phrases)
    return clients.store.known_aliases_in(scope.world_id, phrases, event.user_id)


def resolve_mention(clients: ResolvePorts, scope: ResolutionScope, event: StoredEvent, mention: Mention,
                    learned: list[EntityAlias]) -> Resolution:
    """One mention through the deterministic stages of the cascade; an alias it teaches goes to `learned`."""
    if mention.kind == "name":
        proper = mention.may_create and (mention.entity_type is not None or mention.text[:1].isupper())
        found = resolve_name(clients, scope, mention.text, event.user_id, create=proper,
                             entity_type=mention.entity_type or guess_entity_type(event.content[: mention.start],
                                                                                  mention.text),
                             origin_event_id=event.event_id)
        if found.learned is not None:
            learned.append(found.learned)
        return Resolution(mention=mention, method=found.method, entity_id=found.entity_id,
                          confidence=found.confidence, candidates=found.candidates)
    if mention.kind == "description":
        # "my boss", once learned for this user (or the world), is an alias: the fast path.
        known = [a for a in clients.store.find_alias(scope.world_id, mention.text, event.user_id)
                 if a.confidence > scope.h.resolve.alias_accept]
        if known:
            return Resolution(mention=mention, method="alias", entity_id=known[0].entity_id,
                              confidence=known[0].confidence)
    return Resolution(mention=mention, method=unresolved_method(mention.kind), entity_id=None, confidence=0.0)


def resolve_name(clients: ResolvePorts, scope: ResolutionScope, name: str, user_id: str | None, *, create: bool = True,
                 entity_type: str = "thing", origin_event_id: str | None = None) -> NameResolution:
    """A name through exact, alias, fuzzy, domain and creation. A close single misspelling comes back with
    the alias it teaches (`learned`), for the caller to keep with what it records. `origin_event_id`: the event
    the name was read in (what it creates or teaches goes with an erasure of that event's user)."""
    h = scope.h
    matches = clients.store.match_name(scope.world_id, name, user_id, fuzzy_min=h.resolve.fuzzy_min,
                                       alias_accept=h.resolve.alias_accept, limit=h.resolve.disambiguation_candidates,
                                       by_confidence=h.resolve.fuzzy_by_alias_confidence)
    exact = [m for m in matches if m.stage == "exact"]
    confident = [m for m in matches if m.stage == "alias" and m.score > h.resolve.alias_accept]
    own = [m for m in confident if m.user_id is not None]
    if exact:
        # Two entities of that very name: the user's own alias for one of them settles it.
        mine = [m for m in exact if m.entity_id in {a.entity_id for a in own}]
        return _choose(clients, scope, mine or exact, "exact")
    if confident:
        return _choose(clients, scope, own or confident, "alias")
    parts = name_part_matches(clients.store, scope.world_id, name, entity_type)
    if parts:  # "Robert" for Robert Lang, "Acme Corporation" for Acme Corp: one resolves, several are ranked
        return _choose(clients, scope, [NameMatch(entity_id=i, stage="alias", score=h.resolve.derived_alias_confidence)
                                        for i in parts], "alias")
    fuzzy = _best_per_entity([m for m in matches if m.stage == "fuzzy"])
    if len(fuzzy) == 1 and (fuzzy[0].score > h.resolve.fuzzy_single_accept or h.resolve.fuzzy_weak_single_resolves):
        match = fuzzy[0]
        score = round(match.score, 3)
        learned = EntityAlias(world_id=scope.world_id, entity_id=match.entity_id, alias=name, user_id=user_id,
                              confidence=score, source="fuzzy", origin_event_id=origin_event_id,
                              ) if match.score > h.resolve.fuzzy_single_accept else None
        return NameResolution(match.entity_id, "fuzzy", score, [], learned)
    if len(fuzzy) > 1:
        candidates = _ranked(clients, scope, fuzzy)
        return NameResolution(None, "disambiguation_required", round(fuzzy[0].score, 3), candidates)
    from_domain = _from_domain(clients, scope, name)
    if from_domain is not None:
        return from_domain
    if not create or fuzzy:  # a near miss of a known name is no new entity
        return NameResolution(None, "not_found", 0.0, [])
    if (known := first_named_person(clients.store, scope.world_id, name, entity_type)) is not None:
        return NameResolution(known, "alias", h.resolve.derived_alias_confidence, [], EntityAlias(
            world_id=scope.world_id, entity_id=known, alias=name, user_id=user_id,
            confidence=h.resolve.derived_alias_confidence, source="alias", origin_event_id=origin_event_id))
    policy = h.resolve.create_unknown_names
    if policy == "never" or (policy == "without_domain" and clients.domain is not None and scope.domain_sources):
        return NameResolution(None, "not_found", 0.0, [])
    created = clients.store.create_entity(scope.world_id, name, entity_type, origin_event_id=origin_event_id)
    return NameResolution(created.entity_id, "created", 1.0, [])


def _best_per_entity(matches: Sequence[NameMatch]) -> list[NameMatch]:
    best: dict[str, NameMatch] = {}
    for m in matches:
        if m.entity_id not in best or m.score > best[m.entity_id].score:
            best[m.entity_id] = m
    return sorted(best.values(), key=lambda m: -m.score)


def _choose(clients: ResolvePorts, scope: ResolutionScope, matches: Sequence[NameMatch],
            method: ResolutionMethod) -> NameResolution:
    """One entity resolves; several resolve to a clear winner of the ranking, else ask the user."""
    distinct = _best_per_entity(matches)
    if len(distinct) == 1:
        return NameResolution(distinct[0].entity_id, method, round(distinct[0].score, 3), [])
    candidates = _ranked(clients, scope, distinct)
    winner = clear_winner([(c.entity_id, c.score) for c in candidates], scope.h.resolve.rank_margin)
    if winner is not None:
        score = next(m.score for m in distinct if m.entity_id == winner)
        return NameResolution(winner, method, round(score, 3), candidates)
    return NameResolution(None, "disambiguation_required", round(distinct[0].score, 3), candidates)


def _ranked(clients: ResolvePorts, scope: ResolutionScope, matches: Sequence[NameMatch]) -> list[Candidate]:
    usage = clients.store.entity_usage(scope.world_id, [m.entity_id for m in matches])
    evidence = [CandidateEvidence(entity_id=m.entity_id, match=m.score, source=m.source,
                                  mentions=usage.get(m.entity_id, ("", 0, None))[1],
                                  last_seen=usage.get(m.entity_id, ("", 0, None))[2]) for m in matches]
    ranked = rank_candidates(evidence, scope.now, scope.h)[: scope.h.resolve.disambiguation_candidates]
    return [Candidate(entity_id=i, name=usage.get(i, (i, 0, None))[0], score=round(s, 3)) for i, s in ranked]


def _from_domain(clients: ResolvePorts, scope: ResolutionScope, name: str) -> NameResolution | None:
    """The domain database's rows named so: the first (of `domain_search_limit`) becomes (or already is) an entity
    with its reference; with `domain_ask_between_rows`, each does and several wait for the user's choice."""
    if clients.domain is None or not scope.domain_sources:
        return None
    rules = scope.h.resolve
    ask = rules.domain_ask_between_rows
    rows = clients.domain.find(scope.world_id, scope.domain_sources, name,
                               rules.disambiguation_candidates if ask else rules.domain_search_limit)
    if not rows:
        return None
    entities = [clients.store.create_entity_with_ref(scope.world_id, r.name, r.entity_type, r.external_ref,
                                                     alias_source="domain_db") for r in (rows if ask else rows[:1])]
    confidence = rules.domain_create_confidence
    if len(entities) > 1:  # two customers of that name: the user says which
        return NameResolution(None, "disambiguation_required", confidence,
                              [Candidate(entity_id=e.entity_id, name=e.name, score=confidence) for e in entities])
    clients.store.add_alias(EntityAlias(world_id=scope.world_id, entity_id=entities[0].entity_id, alias=name,
                                        confidence=confidence, source="domain_db"))
    return NameResolution(entities[0].entity_id, "domain_db", confidence, [])


def user_entity(clients: ResolvePorts, world_id: str, user_id: str) -> CanonicalEntity:
    """The entity standing for a user (what "I" and "my" refer to), created on first sight. A person the
    world already knew by exactly that name, before the user spoke, becomes the user's entity."""
    ref = f"user:{user_id}"
    store = clients.store
    entity = store.find_entity_by_external_ref(world_id, ref)
    if entity is not None:
        return entity
    named = store.find_entity_by_name(world_id, user_id)
    if named is not None and named.external_ref is None and named.entity_type == "person":
        return store.set_external_ref(world_id, named.entity_id, ref) or named
    return store.create_entity_with_ref(world_id, user_id, "person", ref, description=f"user {user_id}")


# ---------------------------------------------------------------- coreference (inside the extraction call)
@dataclass(frozen=True)
class CoreferenceTask:
    """What the extraction call is given to link: the window's waiting references and the only entities
    they may point at (the conversation's recent ones and the speakers' relations)."""

    references: list[Reference]
    candidates: list[EntitySighting]
    mention_ids: dict[str, str]  # reference id -> mention id


NO_COREFERENCE = CoreferenceTask([], [], {})


def coreference_task(clients: ResolvePorts, scope: ResolutionScope, window: Sequence[StoredEvent]) -> CoreferenceTask:
    """The references of a window (one conversation) still unresolved, and their candidates; empty when
    there is nothing to link, so the prompt stays as it was."""
    if not window:
        return NO_COREFERENCE
    by_id = {e.event_id: e for e in window}
    waiting = [m for m in clients.store.recorded_mentions(scope.world_id, list(by_id))
               if m.kind != "name" and m.entity_id is None and m.method == "no_candidates"]
    if not waiting:
        return NO_COREFERENCE
    h = scope.h
    speakers = {e.user_id: scope.user_entity_id(clients, e.user_id) for e in window}
    sightings = clients.store.conversation_sightings(scope.world_id, window[0].conversation_id,
                                                     max(e.occurred_at for e in window),
                                                     h.resolve.coreference_max_sightings)
    # A speaker's relations as that speaker knows them: "my boss" is never resolved through another user's words.
    relations = [r for user_id in sorted(speakers)
                 for r in clients.store.relations_of(scope.world_id, [speakers[user_id]], user_id=user_id)]
    keep = list(dict.fromkeys(s.entity_id for s in [*sightings, *relations]))[: h.resolve.coreference_max_candidates]
    references = [Reference(reference_id=f"{m.event_id}@{m.start}", event_id=m.event_id, text=m.text,
                            kind="pronoun" if m.kind == "pronoun" else "description", start=m.start,
                            speaker_entity_id=speakers[by_id[m.event_id].user_id]) for m in waiting]
    return CoreferenceTask(references, [s for s in [*sightings, *relations] if s.entity_id in keep],
                           {r.reference_id: m.mention_id for r, m in zip(references, waiting, strict=True)})


def link_references(clients: ResolvePorts, scope: ResolutionScope, window: Sequence[StoredEvent], task: CoreferenceTask,
                    coreferences: Sequence[Coreference]) -> int:
    """Apply the model's coreferences: only to a reference it was given, only to a candidate it was offered,
    only above `coreference_min`; a description above `coreference_accept` becomes the user's alias.
    Pronouns are never learned: "she" is someone else in every conversation. Returns the links made."""
    h = scope.h
    allowed = {c.entity_id for c in task.candidates}
    references = {r.reference_id: r for r in task.references}
    users = {e.event_id: e.user_id for e in window}
    updates: list[tuple[str, str, str, float]] = []
    for link in coreferences:
        ref = references.pop(link.reference_id, None)  # one link per reference: the first the model gave
        if ref is None or link.entity_id not in allowed or link.entity_id == ref.speaker_entity_id:
            continue
        if link.confidence < h.resolve.coreference_min:
            continue
        updates.append((task.mention_ids[link.reference_id], link.entity_id, "llm_coreference", round(link.confidence, 3)))
        if ref.kind == "description" and link.confidence > h.resolve.coreference_accept:
            clients.store.add_alias(EntityAlias(world_id=scope.world_id, entity_id=link.entity_id, alias=ref.text,
                                                user_id=users[ref.event_id], confidence=round(link.confidence, 3),
                                                source="coreference", origin_event_id=ref.event_id))
    clients.store.set_mention_entities(scope.world_id, updates)
    return len(updates)


def window_events(window: Sequence[StoredEvent]) -> list[WindowEvent]:
    return [WindowEvent(event_id=e.event_id, role=e.role, content=e.content, occurred_at=e.occurred_at,
                        speaker=e.user_id) for e in window]


# ---------------------------------------------------------------- the user settles a disambiguation
def settle_disambiguation(clients: ResolvePorts, world: World, mention_id: str, request: SettleRequest) -> Settlement:
    """The user's choice for a mention that had several candidates: the mention resolves, the user's alias
    is learned (so the next mention takes the fast path), and the user's other mentions of the same words
    still waiting are settled alike."""
    world_id, h = world.world_id, world.heuristics
    store = clients.store
    mention = store.get_mention(world_id, mention_id)
    if mention is None:
        raise NotFound(f"no mention {mention_id} in world {world_id!r}")
    if mention.method != "disambiguation_required":
        raise Conflict(f"mention {mention_id} is not waiting for a choice (it was resolved by {mention.method})")
    if request.entity_id is not None:
        entity = store.get_entity(world_id, request.entity_id)
        if entity is None:
            raise NotFound(f"no entity {request.entity_id!r} in world {world_id!r}")
    else:
        entity = store.create_entity(world_id, mention.text, "person" if mention.text[:1].isupper() else "thing")
    alias = EntityAlias(world_id=world_id, entity_id=entity.entity_id, alias=mention.text, user_id=mention.user_id,
                        confidence=h.resolve.settled_alias_confidence, source="user")
    store.add_alias(alias)
    same = [m for m in store.pending_disambiguations(world_id, mention.user_id, h.resolve.settle_max_mentions)
            if m.mention_id != mention_id and m.text.lower() == mention.text.lower()]
    store.set_mention_entities(world_id, [(m.mention_id, entity.entity_id, "user", h.resolve.settled_alias_confidence)
                                          for m in [mention, *same]])
    settled = store.get_mention(world_id, mention_id)
    assert settled is not None
    return Settlement(mention=settled, entity=entity, alias=alias, also_settled=[m.mention_id for m in same])


def pending_disambiguations(clients: ResolvePorts, world_id: str, user_id: str | None,
                            limit: int) -> list[RecordedMention]:
    """Mentions waiting for their user to choose among candidates, oldest first."""
    return clients.store.pending_disambiguations(world_id, user_id, limit)
