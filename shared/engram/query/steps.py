"""The steps of the engram-query state machine. Each takes and returns the small loop state the
state machine carries; the WorldQuery and its QueryContext live in the store under the query id.
Express workflows run at least once, so every step is idempotent on (query id, iteration)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Literal

from pydantic import BaseModel

from engram.errors import CapabilityRejected, NotFound
from engram.model.common import utcnow
from engram.model.queries import Answer, ContextItem, NeedsMoreInfo, TraceStep, WorldQuery
from engram.ports import Usage
from engram.query import budget, capabilities
from engram.query.context import QueryContext
from engram.retrieval.conversation import conversation_context
from engram.retrieval.search import search
from engram.service import Clients


class LoopState(BaseModel):
    world_id: str
    query_id: str
    iteration: int = 0
    outcome: Literal["answer", "needs_more_info"] | None = None
    remaining_info_requests: int = 0


class FinalState(BaseModel):
    world_id: str
    query_id: str
    status: str
    iterations: int
    info_requests_used: int


def _load(clients: Clients, state: LoopState) -> tuple[WorldQuery, QueryContext | None]:
    query = clients.store.get_query(state.world_id, state.query_id)
    if query is None:
        raise NotFound(f"query {state.query_id} not found")
    return query, clients.store.load_context(state.world_id, state.query_id)


@contextmanager
def _traced(query: WorldQuery, iteration: int, step: str) -> Iterator[dict[str, Any]]:
    record: dict[str, Any] = {"outcome": "", "detail": {}}
    started = time.perf_counter()
    yield record
    query.trace.append(TraceStep(iteration=iteration, step=step, outcome=record["outcome"],  # type: ignore[arg-type]
                                 detail=record["detail"], elapsed_ms=round((time.perf_counter() - started) * 1000, 2)))


def _done(query: WorldQuery, iteration: int, step: str) -> TraceStep | None:
    return next((t for t in query.trace if t.iteration == iteration and t.step == step), None)


def _state(query: WorldQuery, iteration: int, outcome: str | None) -> LoopState:
    return LoopState(world_id=query.world_id, query_id=query.query_id, iteration=iteration,
                     outcome=outcome, remaining_info_requests=query.remaining_info_requests)  # type: ignore[arg-type]


def _record_usage(query: WorldQuery, usage: Usage, model: str) -> None:
    query.model = model
    query.model_calls += usage.calls
    query.input_tokens += usage.input_tokens
    query.output_tokens += usage.output_tokens


def init(clients: Clients, state: LoopState) -> LoopState:
    """Build the initial context: fused search, the entities it touches with their facts and
    relationships, and the conversation context."""
    query, existing = _load(clients, state)
    if existing is not None and _done(query, 0, "init"):
        return _state(query, 0, None)
    now = utcnow()
    query.status = "processing"
    with _traced(query, 0, "init") as record:
        context = QueryContext(query_id=query.query_id, world_id=query.world_id, question=query.question)
        found = search(clients, query.world_id, query.question, user_id=query.user_id, limit=10, now=now)
        hits = found.hits
        context.merge([ContextItem(kind=h.kind, id=h.doc_id, text=h.text, score=h.score, entity_ids=h.entity_ids,
                                   occurred_at=h.occurred_at) for h in hits])
        entity_ids = list(dict.fromkeys([e.entity_id for e in found.entities]
                                        + [e for h in hits for e in h.entity_ids]))[: query.config.max_initial_entities]
        entities = clients.store.get_entities(query.world_id, entity_ids)
        context.merge([capabilities.entity_item(e) for e in entities])
        facts = [f for f in clients.store.facts_about(query.world_id, entity_ids, 20) if f.user_id == query.user_id]
        context.merge(capabilities.fact_items(clients, query.world_id, facts))
        if query.config.include_relationships:
            for entity_id in entity_ids[:3]:
                request = capabilities.Relationships(capability="get_relationships", entity_id=entity_id, depth=1)
                context.merge(capabilities.execute(clients, query.world_id, query.user_id, request))
        conversation = conversation_context(clients, query.world_id, query.user_id, query.conversation_id,
                                            query.question, now)
        context.conversation = conversation.lines(query.user_id, now)
        context.conversation_ids = sorted({e.conversation_id for e in conversation.events})
        clients.store.save_context(context)
        stats = context.stats()
        record["outcome"] = "context_built"
        record["detail"] = {"items": stats.items, "estimated_tokens": stats.estimated_tokens,
                            "entities": len(entity_ids), "conversation_lines": len(context.conversation)}
    clients.store.save_query(query)
    return _state(query, 0, None)


def ask(clients: Clients, state: LoopState) -> LoopState:
    """Ask the model: an Answer ends the loop; NeedsMoreInfo is kept for `fulfil`, or, with no
    info requests left, leads to `force`."""
    query, context = _load(clients, state)
    iteration = state.iteration + 1
    previous = _done(query, iteration, "ask")
    if previous is not None:
        return _state(query, iteration, previous.outcome)
    assert context is not None, "init stores the context before ask runs"
    h = clients.heuristics_for(query.world_id)
    with _traced(query, iteration, "ask") as record:
        measures = budget.thin(context, h.context_token_budget, h.chars_per_token)
        reply = clients.llm.answer(context, can_request_more=query.can_request_more_info,
                                   remaining_info_requests=query.remaining_info_requests,
                                   temperature=query.config.temperature)
        _record_usage(query, reply.usage, reply.model)
        if isinstance(reply.value, NeedsMoreInfo):
            # With no requests left nothing is kept to fulfil: the state machine's Choice sends it to Force.
            context.pending_requests = list(reply.value.info_requests) if query.can_request_more_info else []
            record["outcome"] = "needs_more_info"
            record["detail"] = {"requests": [r.model_dump() for r in reply.value.info_requests]}
        else:
            query.answer = _grounded(reply.value, context)
            record["outcome"] = "answer"
            record["detail"] = {"confidence": query.answer.confidence, "sources": len(query.answer.sources)}
        if measures:
            record["detail"]["thinned"] = measures
    clients.store.save_context(context)
    clients.store.save_query(query)
    return _state(query, iteration, record["outcome"])


def fulfil(clients: Clients, state: LoopState) -> LoopState:
    """Validate and run the pending info requests, merge what they find into the context."""
    query, context = _load(clients, state)
    if _done(query, state.iteration, "fulfil"):
        return _state(query, state.iteration, "needs_more_info")
    assert context is not None
    with _traced(query, state.iteration, "fulfil") as record:
        added, rejected = 0, []
        for request in context.pending_requests:
            try:
                typed = capabilities.validate(request, context, set(context.conversation_ids))
            except CapabilityRejected as exc:
                rejected.append({"capability": request.capability, "reason": exc.message})
                continue
            added += context.merge(capabilities.execute(clients, query.world_id, query.user_id, typed))
            for field in ("entity_id", "from_entity_id", "to_entity_id"):
                if getattr(typed, field, None):
                    context.mark_expanded(getattr(typed, field))
        context.pending_requests = []
        query.info_requests_used += 1
        record["outcome"] = "fulfilled" if not rejected else "fulfilled_with_rejections"
        record["detail"] = {"items_added": added, "rejected": rejected}
    clients.store.save_context(context)
    clients.store.save_query(query)
    return _state(query, state.iteration, "needs_more_info")


def force(clients: Clients, state: LoopState) -> LoopState:
    """Out of info requests: the model must answer with what it has."""
    query, context = _load(clients, state)
    if _done(query, state.iteration, "force"):
        return _state(query, state.iteration, "answer")
    assert context is not None
    with _traced(query, state.iteration, "force") as record:
        reply = clients.llm.force_answer(context, temperature=query.config.temperature)
        _record_usage(query, reply.usage, reply.model)
        query.answer = _grounded(reply.value.model_copy(update={"forced": True}), context)
        record["outcome"] = "answer"
        record["detail"] = {"confidence": query.answer.confidence}
    clients.store.save_query(query)
    return _state(query, state.iteration, "answer")


def finish(clients: Clients, state: LoopState) -> FinalState:
    query, _ = _load(clients, state)
    if query.status != "completed":
        with _traced(query, state.iteration, "finish") as record:
            query.status = "completed"
            query.completed_at = utcnow()
            record["outcome"] = "completed"
        clients.store.save_query(query)
    return FinalState(world_id=query.world_id, query_id=query.query_id, status=query.status,
                      iterations=state.iteration, info_requests_used=query.info_requests_used)


def fail(clients: Clients, world_id: str, query_id: str, error: dict[str, Any]) -> FinalState:
    query = clients.store.get_query(world_id, query_id)
    if query is None:
        raise NotFound(f"query {query_id} not found")
    query.status = "failed"
    query.error = f"{error.get('Error', 'Error')}: {str(error.get('Cause', ''))[:500]}"
    query.completed_at = utcnow()
    clients.store.save_query(query)
    return FinalState(world_id=world_id, query_id=query_id, status="failed",
                      iterations=max((t.iteration for t in query.trace), default=0),
                      info_requests_used=query.info_requests_used)


def _grounded(answer: Answer, context: QueryContext) -> Answer:
    """Only sources present in the context survive: an answer cannot cite what it was not shown."""
    known = context.cited_ids()
    return answer.model_copy(update={"sources": [s for s in answer.sources if s.id in known]})
