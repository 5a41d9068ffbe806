"""Submitting and reading world queries (what the HTTP routes call)."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from engram.errors import NotFound, UnknownWorld
from engram.model.common import new_id, utcnow
from engram.model.queries import QueryRequest, QueryResponse, WorldQuery
from engram.ports.events import EventStore
from engram.ports.queries import QueryStore
from engram.ports.workflows import Workflows


class SubmitStore(QueryStore, EventStore, Protocol):
    """The queries, and the events that say whether the world exists."""


class SubmitPorts(Protocol):
    """The ports submitting and reading queries use: the queries, and the workflow that runs them."""

    @property
    def store(self) -> SubmitStore: ...
    @property
    def workflows(self) -> Workflows: ...


def submit_query(clients: SubmitPorts, world_id: str, request: QueryRequest, *,
                 now: datetime | None = None) -> WorldQuery:
    """Persist a pending query, then run the loop to completion (sync) or start it (async). A research
    query is always started, never waited for: its rounds of model calls outlast an HTTP request. A world
    with no event is refused with UnknownWorld."""
    if not clients.store.has_events(world_id):  # nothing to answer from: most often a misspelt world
        raise UnknownWorld(f"world {world_id!r} holds no event: send events to it before asking")
    query = WorldQuery(world_id=world_id, query_id=new_id("qry"), user_id=request.user_id,
                       question=request.question, conversation_id=request.conversation_id,
                       config=request.config, mode="research" if request.mode == "research" else "answer",
                       created_at=now or utcnow())
    clients.store.save_query(query)
    if request.mode in ("async", "research"):
        clients.workflows.start_query(world_id, query.query_id)
        return query
    clients.workflows.run_query(world_id, query.query_id)
    return get_query(clients, world_id, query.query_id)


def get_query(clients: SubmitPorts, world_id: str, query_id: str) -> WorldQuery:
    query = clients.store.get_query(world_id, query_id)
    if query is None:
        raise NotFound(f"no query {query_id!r} in world {world_id!r}")
    return query


def list_queries(clients: SubmitPorts, world_id: str, user_id: str | None, limit: int) -> list[WorldQuery]:
    return clients.store.list_queries(world_id, user_id, limit)


def response(query: WorldQuery) -> QueryResponse:
    return QueryResponse(query_id=query.query_id, status=query.status, answer=query.answer,
                         iterations=max((t.iteration for t in query.trace), default=0),
                         info_requests_used=query.info_requests_used, model=query.model, trace=query.trace,
                         user_id=query.user_id, question=query.question, conversation_id=query.conversation_id,
                         config=query.config, mode=query.mode, research=query.research,
                         remaining_info_requests=query.remaining_info_requests,
                         model_calls=query.model_calls, input_tokens=query.input_tokens,
                         output_tokens=query.output_tokens, timings=query.timings, signals=query.signals,
                         error=query.error, created_at=query.created_at, completed_at=query.completed_at)
