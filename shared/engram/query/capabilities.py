"""The capabilities the model may ask for, their parameters, their validation and their execution.

The offer is rebuilt from the context every round (`offer`): every id a request names (an entity, a
conversation, a definition) must be one the context holds, so the model can only widen what it was
shown, never reach an id it invented or another world's data. A request that fails validation is
not run: the loop ends with a forced answer that says what was missing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from engram.errors import CapabilityRejected
from engram.memory.graph import find_entities, find_paths
from engram.model.context import QueryContext
from engram.model.entities import CanonicalEntity, Relationship
from engram.model.memories import SemanticMemory
from engram.model.queries import ContextItem, InfoRequest
from engram.model.search import SearchHit
from engram.ports.clients import Clients
from engram.retrieval.search import search


class _Params(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ExpandEntity(_Params):
    """The entity's full record: aliases, facts, direct relationships."""

    capability: Literal["expand_entity"]
    entity_id: str


class ExpandEntities(_Params):
    """Several entities' full records at once."""

    capability: Literal["expand_entities"]
    entity_ids: list[str] = Field(min_length=1, max_length=5)


class SearchEntities(_Params):
    """Entities that the memories matching a text are about (as summaries)."""

    capability: Literal["search_entities"]
    query: str = Field(min_length=1, max_length=500)
    limit: int = Field(default=5, ge=1, le=10)


class EntityByName(_Params):
    """Entities whose name or an alias is a near spelling of `name` (as summaries, best first)."""

    capability: Literal["get_entity_by_name"]
    name: str = Field(min_length=1, max_length=200)
    limit: int = Field(default=3, ge=1, le=10)


class Relationships(_Params):
    """The entity's relationships within `depth` hops, either direction."""

    capability: Literal["get_relationships"]
    entity_id: str
    depth: int = Field(default=1, ge=1, le=3)


class ListDefinitions(_Params):
    """The kinds of entity the world holds, with how many of each."""

    capability: Literal["list_entity_definitions"]


class EntitiesByDefinition(_Params):
    """Entities of one definition (as summaries)."""

    capability: Literal["get_entities_by_definition"]
    definition: str
    limit: int = Field(default=10, ge=1, le=20)


class SearchMemories(_Params):
    """Memories and events matching a text (the fused three-brain search)."""

    capability: Literal["search_memories"]
    query: str = Field(min_length=1, max_length=500)
    limit: int = Field(default=10, ge=1, le=20)


class ConversationHistory(_Params):
    """The latest turns of one conversation of the context."""

    capability: Literal["get_conversation_history"]
    conversation_id: str
    limit: int = Field(default=10, ge=1, le=20)


class EntityTimeline(_Params):
    """The entity's facts in the order they became true."""

    capability: Literal["get_entity_timeline"]
    entity_id: str
    limit: int = Field(default=10, ge=1, le=20)


class FindPath(_Params):
    """The relationships on the way from one entity to another."""

    capability: Literal["find_path"]
    from_entity_id: str
    to_entity_id: str
    max_length: int = Field(default=3, ge=1, le=4)


Request = Annotated[ExpandEntity | ExpandEntities | SearchEntities | EntityByName | Relationships | ListDefinitions
                    | EntitiesByDefinition | SearchMemories | ConversationHistory | EntityTimeline | FindPath,
                    Field(discriminator="capability")]
_REQUEST = TypeAdapter(Request)
_ENTITY_FIELDS = ("entity_id", "from_entity_id", "to_entity_id")


@dataclass(frozen=True)
class Offer:
    """The capabilities of one round, with the ids each parameter may take (those the context holds)."""

    entity_ids: tuple[str, ...]
    expandable_ids: tuple[str, ...]
    conversation_ids: tuple[str, ...]
    definitions: tuple[str, ...]

    def describe(self) -> list[str]:
        """The values this round's id parameters may take, each list said once."""
        return [f"- entity ids (entity_id, entity_ids, from_entity_id, to_entity_id): [{', '.join(self.entity_ids)}]",
                f"- of those, held only as summaries or not at all (worth expanding): [{', '.join(self.expandable_ids)}]",
                f"- definitions (get_entities_by_definition): [{', '.join(self.definitions)}]",
                f"- conversations (get_conversation_history): [{', '.join(self.conversation_ids)}]"]

    def validate(self, request: InfoRequest) -> Request:
        """The typed request, or CapabilityRejected saying which parameter is out of bounds and why."""
        try:
            typed = _REQUEST.validate_python({"capability": request.capability, **request.params})
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(str(p) for p in e['loc'][1:]) or 'request'}: {e['msg']}"
                                 for e in exc.errors(include_url=False))
            raise CapabilityRejected(f"{request.capability}: {problems}",
                                     details=exc.errors(include_url=False, include_context=False)) from exc
        known = set(self.entity_ids)
        named = [getattr(typed, f) for f in _ENTITY_FIELDS if getattr(typed, f, None) is not None]
        named += getattr(typed, "entity_ids", [])
        for value in named:
            if value not in known:
                raise CapabilityRejected(f"{request.capability}: entity {value!r} is not in this query's context")
        if isinstance(typed, ConversationHistory) and typed.conversation_id not in self.conversation_ids:
            raise CapabilityRejected(f"get_conversation_history: conversation {typed.conversation_id!r} "
                                     "is not in this query's context")
        if isinstance(typed, EntitiesByDefinition) and typed.definition not in self.definitions:
            raise CapabilityRejected(f"get_entities_by_definition: definition {typed.definition!r} is not one "
                                     f"the context holds ({', '.join(self.definitions) or 'none'})")
        return typed


def offer(context: QueryContext) -> Offer:
    """This round's capabilities, constrained to what `context` holds."""
    return Offer(entity_ids=tuple(context.all_entity_ids()), expandable_ids=tuple(context.expandable_entity_ids()),
                 conversation_ids=tuple(context.conversation_ids), definitions=tuple(context.definitions))


def expanded_ids(request: Request) -> list[str]:
    """The entities whose records a request brings in full."""
    if isinstance(request, ExpandEntities):
        return list(request.entity_ids)
    return [request.entity_id] if isinstance(request, ExpandEntity) else []


def execute(clients: Clients, context: QueryContext, user_id: str, request: Request) -> list[ContextItem]:
    """Run a validated request; returns the context items it found (new definitions go into the context)."""
    store, world_id = clients.store, context.world_id
    h = clients.heuristics_for(world_id)
    if isinstance(request, ExpandEntity | ExpandEntities):
        entities = store.get_entities(world_id, expanded_ids(request))
        return [entity_record(clients, world_id, user_id, e) for e in entities]
    if isinstance(request, SearchEntities):
        found = search(clients, world_id, request.query, user_id=user_id, limit=h.query.capability_max_results)
        ids = list(dict.fromkeys([e.entity_id for e in found.entities] + [e for hit in found.hits for e in hit.entity_ids]
                                 + [hit.doc_id for hit in found.hits if hit.kind == "entity"]))[: request.limit]
        return [entity_summary(e) for e in store.get_entities(world_id, ids)]
    if isinstance(request, EntityByName):
        return [entity_summary(e) for e in find_entities(clients, world_id, request.name, None, request.limit)]
    if isinstance(request, ListDefinitions):
        definitions = store.entity_definitions(world_id, h.query.capability_max_results * 2)
        context.definitions = list(dict.fromkeys([*context.definitions, *(d.definition for d in definitions)]))
        return [ContextItem(kind="summary", id=f"definitions:{world_id}", score=0.5, text="Entity definitions: " + "; ".join(
            f"{d.definition} ({d.entities})" + (f": {d.description}" if d.description else "") for d in definitions))]
    if isinstance(request, EntitiesByDefinition):
        return [entity_summary(e) for e in find_entities(clients, world_id, None, request.definition, request.limit)]
    if isinstance(request, Relationships):
        return relationship_items(clients, world_id, store.relationships(world_id, request.entity_id, request.depth,
                                                                         user_id=user_id))
    if isinstance(request, SearchMemories):
        result = search(clients, world_id, request.query, user_id=user_id, limit=request.limit)
        return hit_items(clients, world_id, result.hits)
    if isinstance(request, ConversationHistory):
        events = store.conversation_events(world_id, request.conversation_id, request.limit, user_id=user_id)
        return [ContextItem(kind="event", id=e.event_id, text=f"{e.role}: {e.content}", score=e.importance,
                            occurred_at=e.occurred_at) for e in events if e.user_id == user_id]
    if isinstance(request, EntityTimeline):
        facts = store.facts_about(world_id, [request.entity_id], request.limit, user_id=user_id)
        facts.sort(key=lambda f: f.valid_from or f.created_at)
        return fact_items(clients, world_id, facts)
    assert isinstance(request, FindPath)
    paths = find_paths(clients, world_id, request.from_entity_id, request.to_entity_id, request.max_length, limit=3,
                       user_id=user_id)
    return relationship_items(clients, world_id, list({r.relationship_id: r for p in paths for r in p.relationships}.values()))


def hit_items(clients: Clients, world_id: str, hits: Sequence[SearchHit]) -> list[ContextItem]:
    """Fused-search hits as context items, in their order; an entity hit arrives as the entity's summary."""
    entities = {e.entity_id: e for e in clients.store.get_entities(world_id, [h.doc_id for h in hits
                                                                                if h.kind == "entity"])}
    items = []
    for hit in hits:
        if hit.kind != "entity":
            items.append(ContextItem(kind=hit.kind, id=hit.doc_id, text=hit.text, score=hit.score,
                                     entity_ids=hit.entity_ids, occurred_at=hit.occurred_at))
        elif hit.doc_id in entities:
            items.append(entity_summary(entities[hit.doc_id], score=hit.score))
    return items


def entity_summary(entity: CanonicalEntity, score: float = 0.5) -> ContextItem:
    """Name, definition and a line of description: enough to decide whether the full record is worth a request."""
    text = f"{entity.name} ({entity.entity_type})"
    if entity.description:
        text += f": {entity.description.split('. ')[0][:160]}"
    return ContextItem(kind="entity", id=entity.entity_id, text=text + " [summary: expand for the full record]",
                       score=score, entity_ids=[entity.entity_id], full=False, name=entity.name)


def entity_record(clients: Clients, world_id: str, user_id: str, entity: CanonicalEntity) -> ContextItem:
    """The full record: name, definition, description, aliases, and the asking user's facts and direct edges
    (users of one world do not read each other's memories, nor the edges those memories made)."""
    h = clients.heuristics_for(world_id)
    facts = clients.store.facts_about(world_id, [entity.entity_id], h.query.entity_record_max_facts, user_id=user_id)
    relationships = clients.store.relationships(world_id, entity.entity_id, 1, user_id=user_id)
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


def relationship_items(clients: Clients, world_id: str, edges: Sequence[Relationship]) -> list[ContextItem]:
    names = _names(clients, world_id, [i for r in edges for i in (r.source_entity_id, r.target_entity_id)])
    return [ContextItem(kind="relationship", id=r.relationship_id, score=r.confidence, text=_edge(r, names),
                        entity_ids=[r.source_entity_id, r.target_entity_id]) for r in edges]


def fact_items(clients: Clients, world_id: str, facts: list[SemanticMemory]) -> list[ContextItem]:
    names = _names(clients, world_id, [f.subject_entity_id for f in facts])
    return [ContextItem(kind="semantic", id=f.memory_id, score=f.confidence, occurred_at=f.valid_from,
                        text=f"{f.statement(names.get(f.subject_entity_id, f.subject_entity_id))} "
                             f"(confidence {f.confidence:.2f}; from {', '.join(f.source_event_ids)})",
                        entity_ids=[i for i in (f.subject_entity_id, f.object_entity_id) if i]) for f in facts]


def _names(clients: Clients, world_id: str, ids: Sequence[str]) -> dict[str, str]:
    unique = list(dict.fromkeys(ids))
    return {e.entity_id: e.name for e in clients.store.get_entities(world_id, unique)} if unique else {}


def _edge(r: Relationship, names: dict[str, str]) -> str:
    return (f"{names.get(r.source_entity_id, r.source_entity_id)} {r.relation.replace('_', ' ')} "
            f"{names.get(r.target_entity_id, r.target_entity_id)}")
