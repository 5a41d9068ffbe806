"""The capabilities the model may ask for: their parameters and their execution.

Each parameter model says what its capability does (its docstring's first paragraph is the prompt's
line) and each executor runs one validated request; `query/offer.py` registers them, constrains them
to what the context holds each round, and dispatches to them. A request that fails validation is
not run: the loop ends with a forced answer that says what was missing.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Annotated, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from engram.memory.graph import find_entities, find_paths
from engram.model.context import QueryContext
from engram.model.entities import CanonicalEntity, Relationship
from engram.model.memories import SemanticMemory
from engram.model.queries import ContextItem
from engram.model.requests import Capability
from engram.model.search import SearchHit
from engram.model.world import World
from engram.ports import Embedder, EventStore, KeywordIndex, QueryStore, RelationshipStore
from engram.retrieval.search import SearchStore, search


class CapabilityStore(SearchStore, RelationshipStore, EventStore, QueryStore, Protocol):
    """What the capabilities read: the fused search's store, the entity graph and its edges, the conversations, the world's
    definitions, and a user's facts about an entity (of `MemoryStore`)."""

    def facts_about(self, world_id: str, entity_ids: Sequence[str], limit: int, *,
                    user_id: str | None = None, as_of: datetime | None = None,
                    statuses: Sequence[str] = ("active",)) -> list[SemanticMemory]: ...
    def get_semantic(self, world_id: str, memory_ids: Sequence[str]) -> list[SemanticMemory]: ...
    def find_facts(self, world_id: str, subject_entity_id: str, predicate: str | None = None,
                   statuses: Sequence[str] = ("active",), *, user_id: str | None = None) -> list[SemanticMemory]: ...


class CapabilityPorts(Protocol):
    """The ports the capability executors use: the store, and the keyword index and embedder of the search."""

    @property
    def store(self) -> CapabilityStore: ...
    @property
    def index(self) -> KeywordIndex: ...
    @property
    def embedder(self) -> Embedder: ...


class RangeInPrompt:
    """Marks a parameter whose bounds the prompt states (`depth 1-3`): they are how far the capability reaches,
    where a `limit` is only a cap with a sensible default."""


IN_PROMPT = RangeInPrompt()


class CapabilityParams(BaseModel):
    """One validated request: `capability` names it (the union's discriminator), the other fields are its params."""

    model_config = ConfigDict(extra="forbid")

    capability: Capability


class ExpandEntity(CapabilityParams):
    """One entity's full record.

    Its name, definition, description and aliases, the asking user's facts about it and its direct relationships.
    """

    capability: Literal["expand_entity"]
    entity_id: str = Field(description="the entity, one the context holds")


class ExpandEntities(CapabilityParams):
    """Up to five entities' full records."""

    capability: Literal["expand_entities"]
    entity_ids: list[str] = Field(min_length=1, max_length=5, description="the entities, each one the context holds")


class SearchEntities(CapabilityParams):
    """Entities the memories matching a text are about, as summaries."""

    capability: Literal["search_entities"]
    query: str = Field(min_length=1, max_length=500, description="the words to look for")
    limit: int = Field(default=5, ge=1, le=10, description="how many entities at most")


class EntityByName(CapabilityParams):
    """Entities whose name or alias is a near spelling of name.

    As summaries, best first: a name or alias that contains `name` or is a near spelling of it.
    """

    capability: Literal["get_entity_by_name"]
    name: str = Field(min_length=1, max_length=200, description="the name as the question spells it")
    limit: int = Field(default=3, ge=1, le=10, description="how many entities at most")


class Relationships(CapabilityParams):
    """An entity's relationships, either direction."""

    capability: Literal["get_relationships"]
    entity_id: str = Field(description="the entity, one the context holds")
    depth: Annotated[int, IN_PROMPT] = Field(default=1, ge=1, le=3, description="how many hops away")


class ListDefinitions(CapabilityParams):
    """The kinds of entity the world holds, with counts.

    The definitions it lists join the context's, so that entities of each kind may be asked for.
    """

    capability: Literal["list_entity_definitions"]


class EntitiesByDefinition(CapabilityParams):
    """Entities of one kind, as summaries."""

    capability: Literal["get_entities_by_definition"]
    definition: str = Field(description="the kind of entity, one the context holds")
    limit: int = Field(default=10, ge=1, le=20, description="how many entities at most")


class SearchMemories(CapabilityParams):
    """Memories and events matching a text.

    The fused three-brain search: keywords, embeddings and the entity graph.
    """

    capability: Literal["search_memories"]
    query: str = Field(min_length=1, max_length=500, description="the words to look for")
    limit: int = Field(default=10, ge=1, le=20, description="how many hits at most")


class ConversationHistory(CapabilityParams):
    """A conversation's latest turns."""

    capability: Literal["get_conversation_history"]
    conversation_id: str = Field(description="the conversation, one the context holds")
    limit: int = Field(default=10, ge=1, le=20, description="how many turns at most")


class EntityTimeline(CapabilityParams):
    """An entity's facts in time order.

    In the order they became true (their valid-from time, else when they were recorded).
    """

    capability: Literal["get_entity_timeline"]
    entity_id: str = Field(description="the entity, one the context holds")
    limit: int = Field(default=10, ge=1, le=20, description="how many facts at most")


class FindPath(CapabilityParams):
    """The relationships linking two entities."""

    capability: Literal["find_path"]
    from_entity_id: str = Field(description="where the path starts, an entity the context holds")
    to_entity_id: str = Field(description="where it ends, an entity the context holds")
    max_length: Annotated[int, IN_PROMPT] = Field(default=3, ge=1, le=4, description="how many hops at most")


def expanded_ids(request: CapabilityParams) -> list[str]:
    """The entities whose records a request brings in full."""
    if isinstance(request, ExpandEntities):
        return list(request.entity_ids)
    return [request.entity_id] if isinstance(request, ExpandEntity) else []


def expand(clients: CapabilityPorts, world: World, context: QueryContext, user_id: str,
           request: ExpandEntity | ExpandEntities) -> list[ContextItem]:
    """The full records of the entities a request names."""
    entities = clients.store.get_entities(context.world_id, expanded_ids(request))
    return [entity_record(clients, world, user_id, e, as_of=context.as_of) for e in entities]


def entities_matching(clients: CapabilityPorts, world: World, context: QueryContext, user_id: str,
                      request: SearchEntities) -> list[ContextItem]:
    """The summaries of the entities the search hits for a text are about (or are), best first."""
    store, world_id = clients.store, context.world_id
    h = world.heuristics
    found = search(clients, world, request.query, user_id=user_id, limit=h.query.capability_max_results,
                   as_of=context.as_of)
    ids = list(dict.fromkeys([e.entity_id for e in found.entities] + [e for hit in found.hits for e in hit.entity_ids]
                             + [hit.doc_id for hit in found.hits if hit.kind == "entity"]))[: request.limit]
    return [entity_summary(e) for e in store.get_entities(world_id, ids)]


def entities_named(clients: CapabilityPorts, world: World, context: QueryContext, user_id: str,
                   request: EntityByName) -> list[ContextItem]:
    """The summaries of the entities whose name or an alias contains, or nearly spells, the one asked for."""
    return [entity_summary(e) for e in find_entities(clients, world, request.name, None, request.limit)]


def list_definitions(clients: CapabilityPorts, world: World, context: QueryContext, user_id: str,
                     request: ListDefinitions) -> list[ContextItem]:
    """One summary item listing the world's definitions with their counts (they join the context's definitions)."""
    world_id = context.world_id
    h = world.heuristics
    definitions = clients.store.entity_definitions(world_id, h.query.capability_max_results * 2)
    context.definitions = list(dict.fromkeys([*context.definitions, *(d.definition for d in definitions)]))
    return [ContextItem(kind="summary", id=f"definitions:{world_id}", score=0.5, text="Entity definitions: " + "; ".join(
        f"{d.definition} ({d.entities})" + (f": {d.description}" if d.description else "") for d in definitions))]


def entities_of_definition(clients: CapabilityPorts, world: World, context: QueryContext, user_id: str,
                           request: EntitiesByDefinition) -> list[ContextItem]:
    """The summaries of entities of one definition."""
    return [entity_summary(e) for e in find_entities(clients, world, None, request.definition, request.limit)]


def relationships_of(clients: CapabilityPorts, world: World, context: QueryContext, user_id: str,
                     request: Relationships) -> list[ContextItem]:
    """The entity's relationships within the requested hops, those the asking user may read."""
    world_id = context.world_id
    return relationship_items(clients, world_id, made_by(clients.store.relationships(
        world_id, request.entity_id, request.depth, user_id=user_id), context.as_of))


def memories_matching(clients: CapabilityPorts, world: World, context: QueryContext, user_id: str,
                      request: SearchMemories) -> list[ContextItem]:
    """The fused search's hits for a text, as context items."""
    result = search(clients, world, request.query, user_id=user_id, limit=request.limit, as_of=context.as_of)
    return hit_items(clients, context.world_id, result.hits, as_of=context.as_of)


def conversation_turns(clients: CapabilityPorts, world: World, context: QueryContext, user_id: str,
                       request: ConversationHistory) -> list[ContextItem]:
    """The asking user's latest turns of one conversation, as event items."""
    events = clients.store.conversation_events(context.world_id, request.conversation_id, request.limit,
                                               user_id=user_id)
    return [ContextItem(kind="event", id=e.event_id, text=f"{e.role}: {e.content}", score=e.importance,
                        occurred_at=e.occurred_at) for e in events
            if e.user_id == user_id and (context.as_of is None or e.occurred_at <= context.as_of)]


def timeline(clients: CapabilityPorts, world: World, context: QueryContext, user_id: str, request: EntityTimeline) -> list[ContextItem]:
    """The entity's facts the asking user may read, in the order they became true: the values since replaced
    too, each saying until when it held (as of a past time: those true then)."""
    facts = clients.store.facts_about(context.world_id, [request.entity_id], request.limit, user_id=user_id,
                                      as_of=context.as_of, statuses=("active", "superseded"))
    facts.sort(key=lambda f: f.valid_from or f.created_at)
    return fact_items(clients, context.world_id, facts, as_of=context.as_of)  # as held then, with an as_of


def path_between(clients: CapabilityPorts, world: World, context: QueryContext, user_id: str, request: FindPath) -> list[ContextItem]:
    """The relationships on up to three paths from one entity to the other, each once."""
    world_id = context.world_id
    paths = find_paths(clients, world, request.from_entity_id, request.to_entity_id, request.max_length, limit=3,
                       user_id=user_id)
    return relationship_items(clients, world_id, made_by(
        list({r.relationship_id: r for p in paths for r in p.relationships}.values()), context.as_of))


def hit_items(clients: CapabilityPorts, world_id: str, hits: Sequence[SearchHit], *,
              as_of: datetime | None = None) -> list[ContextItem]:
    """Fused-search hits as context items, in their order; an entity hit arrives as the entity's summary, a fact
    with its parts, followed by the values it superseded (its history; with `as_of`, those true by then), a turn
    with the end of the turn it replies to, as the search read it."""
    entities = {e.entity_id: e for e in clients.store.get_entities(world_id, [h.doc_id for h in hits
                                                                                if h.kind == "entity"])}
    facts = {f.memory_id: f for f in clients.store.get_semantic(world_id, [h.doc_id for h in hits
                                                                             if h.kind == "semantic"])}
    items: list[ContextItem] = []
    # In the context a hit weighs its relevance next to the best hit's (the best 1, like a full entity record): a
    # hit's own score is a probability, small beside a relationship's confidence, and thinning drops the lowest.
    best = max((h.score for h in hits), default=0.0)
    hits = [h.model_copy(update={"score": round(h.score / best, 4)}) for h in hits] if best > 0 else list(hits)
    for hit in hits:
        if hit.doc_id in facts:
            fact = facts[hit.doc_id]
            history = [f for f in clients.store.find_facts(world_id, fact.subject_entity_id, fact.predicate,
                                                           ("superseded",), user_id=fact.user_id)
                       if f.memory_id not in facts and (as_of is None or f.valid_from is None or f.valid_from <= as_of)]
            found, *older = fact_items(clients, world_id, [fact, *history], as_of=as_of)
            items.append(found.model_copy(update={"score": hit.score, "text": hit.text}))
            items += [i.model_copy(update={"score": hit.score / 2}) for i in older]
        elif hit.kind != "entity":
            items.append(ContextItem(kind=hit.kind, id=hit.doc_id, text=hit.text, score=hit.score,
                                     entity_ids=hit.entity_ids, occurred_at=hit.occurred_at,
                                     replying_to=hit.replying_to))
        elif hit.doc_id in entities:
            items.append(entity_summary(entities[hit.doc_id], score=hit.score))
    return items


def entity_summary(entity: CanonicalEntity, score: float = 0.5) -> ContextItem:
    """Name, definition and a line of description: enough to decide whether the full record is worth a request."""
    text = f"{entity.name} ({entity.entity_type})"
    if entity.description:
        text += f": {entity.description.split('. ')[0][:160]}"
    return ContextItem(kind="entity", id=entity.entity_id, text=text + " [summary]",
                       score=score, entity_ids=[entity.entity_id], full=False, name=entity.name)


def entity_record(clients: CapabilityPorts, world: World, user_id: str, entity: CanonicalEntity, *,
                  as_of: datetime | None = None) -> ContextItem:
    """The full record: name, definition, description, aliases, and the asking user's facts and direct edges
    (users of one world do not read each other's memories, nor the edges those memories made); with `as_of`,
    the facts true then and the edges there were."""
    world_id, h = world.world_id, world.heuristics
    facts = clients.store.facts_about(world_id, [entity.entity_id], h.query.entity_record_max_facts, user_id=user_id,
                                      as_of=as_of)
    relationships = made_by(clients.store.relationships(world_id, entity.entity_id, 1, user_id=user_id), as_of)
    names = _names(clients, world_id, [f.subject_entity_id for f in facts]
                   + [i for r in relationships for i in (r.source_entity_id, r.target_entity_id)])
    lines = [f"{entity.name} ({entity.entity_type})" + (f": {entity.description}" if entity.description else "")]
    aliases = [a for a in entity.aliases if a.lower() != entity.name.lower()]
    if aliases:
        lines.append("also called " + ", ".join(aliases))
    lines += [f"{f.statement(names.get(f.subject_entity_id, f.subject_entity_id))} (confidence {f.confidence:.2f}; "
              f"from {', '.join(f.source_event_ids) or 'no event'})" for f in facts]
    lines += [_edge(r, names) for r in relationships]
    related = {i for f in facts for i in (f.subject_entity_id, f.object_entity_id) if i}
    related |= {i for r in relationships for i in (r.source_entity_id, r.target_entity_id)}
    return ContextItem(kind="entity", id=entity.entity_id, text=". ".join(lines), score=1.0, name=entity.name,
                       entity_ids=[entity.entity_id, *sorted(related - {entity.entity_id})], full=True)


def made_by(edges: Sequence[Relationship], as_of: datetime | None) -> list[Relationship]:
    """The edges there were at `as_of` (all without one). An edge stands for current facts: one made later is
    today's, and the facts true then come with their own items."""
    return [r for r in edges if as_of is None or r.created_at <= as_of]


def relationship_items(clients: CapabilityPorts, world_id: str, edges: Sequence[Relationship]) -> list[ContextItem]:
    names = _names(clients, world_id, [i for r in edges for i in (r.source_entity_id, r.target_entity_id)])
    return [ContextItem(kind="relationship", id=r.relationship_id, score=r.confidence, text=_edge(r, names),
                        entity_ids=[r.source_entity_id, r.target_entity_id]) for r in edges]


def fact_items(clients: CapabilityPorts, world_id: str, facts: list[SemanticMemory], *,
               as_of: datetime | None = None) -> list[ContextItem]:
    """Facts as context items, as memory held them at `as_of` (now without one): a value since replaced says until
    when it held."""
    facts = [f.as_held_at(as_of) for f in facts]
    names = _names(clients, world_id, [f.subject_entity_id for f in facts])
    return [ContextItem(kind="semantic", id=f.memory_id, score=f.confidence, occurred_at=f.valid_from,
                        text=f"{f.statement(names.get(f.subject_entity_id, f.subject_entity_id))} "
                             f"(confidence {f.confidence:.2f}; from {', '.join(f.source_event_ids)}{_held(f)})",
                        entity_ids=[i for i in (f.subject_entity_id, f.object_entity_id) if i],
                        subject=names.get(f.subject_entity_id, f.subject_entity_id), predicate=f.predicate,
                        object=f.object_value, valid_from=f.valid_from, valid_to=f.valid_to, status=f.status)
            for f in facts]


def _held(fact: SemanticMemory) -> str:
    """How long a value no longer held did hold: said in its item, so that no one reads it as current."""
    if fact.status == "active" or fact.valid_to is None:
        return ""
    since = f"from {fact.valid_from:%Y-%m-%d} " if fact.valid_from else ""
    return f"; held {since}until {fact.valid_to:%Y-%m-%d}, since replaced"


def _names(clients: CapabilityPorts, world_id: str, ids: Sequence[str]) -> dict[str, str]:
    unique = list(dict.fromkeys(ids))
    return {e.entity_id: e.name for e in clients.store.get_entities(world_id, unique)} if unique else {}


def _edge(r: Relationship, names: dict[str, str]) -> str:
    return (f"{names.get(r.source_entity_id, r.source_entity_id)} {r.relation.replace('_', ' ')} "
            f"{names.get(r.target_entity_id, r.target_entity_id)}")
