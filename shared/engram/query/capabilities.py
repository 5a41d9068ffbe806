"""The six capabilities the model may ask for, their constrained parameters, and their execution.

Every entity id a request names must already be in the query's context: the model can only widen
what it was shown, never reach an id it invented or another world's data.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from engram.errors import CapabilityRejected
from engram.model.queries import ContextItem, InfoRequest
from engram.query.context import QueryContext
from engram.service import Clients


class _Params(BaseModel):
    model_config = ConfigDict(extra="forbid")


class EntityDetails(_Params):
    capability: Literal["get_entity_details"]
    entity_id: str


class Relationships(_Params):
    capability: Literal["get_relationships"]
    entity_id: str
    depth: int = Field(default=1, ge=1, le=3)


class SearchMemories(_Params):
    capability: Literal["search_memories"]
    query: str = Field(min_length=1, max_length=500)
    limit: int = Field(default=10, ge=1, le=20)


class ConversationHistory(_Params):
    capability: Literal["get_conversation_history"]
    conversation_id: str
    limit: int = Field(default=10, ge=1, le=20)


class EntityTimeline(_Params):
    capability: Literal["get_entity_timeline"]
    entity_id: str
    limit: int = Field(default=10, ge=1, le=20)


class FindPath(_Params):
    capability: Literal["find_path"]
    from_entity_id: str
    to_entity_id: str
    max_length: int = Field(default=3, ge=1, le=4)


Request = Annotated[EntityDetails | Relationships | SearchMemories | ConversationHistory | EntityTimeline | FindPath,
                    Field(discriminator="capability")]
_REQUEST = TypeAdapter(Request)


def validate(request: InfoRequest, context: QueryContext, conversation_ids: set[str]) -> Request:
    """The typed request, or CapabilityRejected when its parameters or ids are out of bounds."""
    try:
        typed = _REQUEST.validate_python({"capability": request.capability, **request.params})
    except ValidationError as exc:
        raise CapabilityRejected(f"{request.capability}: invalid parameters",
                                 details=exc.errors(include_url=False, include_context=False)) from exc
    known = set(context.all_entity_ids())
    for field in ("entity_id", "from_entity_id", "to_entity_id"):
        value = getattr(typed, field, None)
        if value is not None and value not in known:
            raise CapabilityRejected(f"{request.capability}: entity {value!r} is not in this query's context")
    if isinstance(typed, ConversationHistory) and typed.conversation_id not in conversation_ids:
        raise CapabilityRejected(f"conversation {typed.conversation_id!r} is not in this query's context")
    return typed


def execute(clients: Clients, world_id: str, user_id: str, request: Request) -> list[ContextItem]:
    """Run a validated request; returns the context items it found."""
    store = clients.store
    if isinstance(request, EntityDetails | EntityTimeline):
        items = [entity_item(e) for e in store.get_entities(world_id, [request.entity_id])]
        facts = store.facts_about(world_id, [request.entity_id], getattr(request, "limit", 20))
        if isinstance(request, EntityTimeline):
            facts.sort(key=lambda f: f.valid_from or f.created_at)
        return items + fact_items(clients, world_id, facts)
    if isinstance(request, Relationships):
        rels = store.relationships(world_id, request.entity_id, request.depth)
        names = {e.entity_id: e.name for e in store.get_entities(
            world_id, list({r.source_entity_id for r in rels} | {r.target_entity_id for r in rels}))}
        return [ContextItem(kind="relationship", id=r.relationship_id, score=r.confidence,
                            text=f"{names.get(r.source_entity_id, r.source_entity_id)} {r.relation.replace('_', ' ')} "
                                 f"{names.get(r.target_entity_id, r.target_entity_id)}",
                            entity_ids=[r.source_entity_id, r.target_entity_id]) for r in rels]
    if isinstance(request, SearchMemories):
        from engram.retrieval.search import search

        result = search(clients, world_id, request.query, user_id=user_id, limit=request.limit)
        return [ContextItem(kind=h.kind, id=h.doc_id, text=h.text, score=h.score, entity_ids=h.entity_ids,
                            occurred_at=h.occurred_at) for h in result.hits]
    if isinstance(request, ConversationHistory):
        events = store.conversation_events(world_id, request.conversation_id, request.limit)
        return [ContextItem(kind="event", id=e.event_id, text=f"{e.role}: {e.content}", score=e.importance,
                            occurred_at=e.occurred_at) for e in events if e.user_id == user_id]
    assert isinstance(request, FindPath)
    rels = store.relationships(world_id, request.from_entity_id, request.max_length)
    on_path = [r for r in rels if request.to_entity_id in (r.source_entity_id, r.target_entity_id)
               or request.from_entity_id in (r.source_entity_id, r.target_entity_id)]
    return [ContextItem(kind="relationship", id=r.relationship_id, score=r.confidence,
                        text=f"{r.source_entity_id} {r.relation} {r.target_entity_id}",
                        entity_ids=[r.source_entity_id, r.target_entity_id]) for r in on_path]


def entity_item(entity: object) -> ContextItem:
    from engram.model.entities import CanonicalEntity

    assert isinstance(entity, CanonicalEntity)
    aliases = [a for a in entity.aliases if a != entity.name]
    text = f"{entity.name} ({entity.entity_type})" + (f", also called {', '.join(aliases)}" if aliases else "")
    return ContextItem(kind="entity", id=entity.entity_id, text=text, score=1.0, entity_ids=[entity.entity_id])


def fact_items(clients: Clients, world_id: str, facts: list) -> list[ContextItem]:  # type: ignore[type-arg]
    names = {e.entity_id: e.name for e in clients.store.get_entities(world_id, list({f.subject_entity_id for f in facts}))}
    return [ContextItem(kind="semantic", id=f.memory_id, score=f.confidence, occurred_at=f.valid_from,
                        text=f"{names.get(f.subject_entity_id, f.subject_entity_id)} {f.predicate.replace('_', ' ')} "
                             f"{f.object_value} (confidence {f.confidence:.2f}; from {', '.join(f.source_event_ids)})",
                        entity_ids=[i for i in (f.subject_entity_id, f.object_entity_id) if i]) for f in facts]
