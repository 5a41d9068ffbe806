"""The steps of the engram-query state machine. Each takes and returns the small loop state the
state machine carries; the WorldQuery and its QueryContext live in the store under the query id.
Express workflows run at least once, so every step is idempotent on (query id, iteration)."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any, Literal, Protocol

from pydantic import BaseModel

from engram.errors import CapabilityRejected, NotFound
from engram.model.common import utcnow
from engram.model.context import QueryContext
from engram.model.entities import CanonicalEntity
from engram.model.heuristics import Heuristics
from engram.model.queries import Answer, ContextItem, NeedsMoreInfo, QueryMode, Source, TraceStep, WorldQuery
from engram.model.world import World
from engram.ports import LLM, Embedder, KeywordIndex, Usage, WebSearch
from engram.query import budget, capabilities
from engram.query import offer as offers
from engram.query.capabilities import CapabilityStore
from engram.retrieval.conversation import ConversationStore, conversation_context
from engram.retrieval.search import search

Outcome = Literal["answer", "needs_more_info", "invalid_request"]


class LoopStore(CapabilityStore, ConversationStore, Protocol):
    """What the loop's steps read and write: the query and its context, and what the first context and the
    capabilities read."""


class LoopPorts(Protocol):
    """The ports the loop's steps use."""

    @property
    def store(self) -> LoopStore: ...
    @property
    def index(self) -> KeywordIndex: ...
    @property
    def embedder(self) -> Embedder: ...
    def llm_for(self, world_id: str) -> LLM:
        """The model as the world may use it today (metered, the offline engine once its budget is spent)."""
        ...
    @property
    def web(self) -> WebSearch | None: ...


class LoopState(BaseModel):
    world_id: str
    query_id: str
    iteration: int = 0
    outcome: Outcome | None = None  # the Choice state routes on it: answer, fulfil, or force
    remaining_info_requests: int = 0
    mode: QueryMode = "answer"  # after init, a Choice sends research queries to plan instead of ask


class FinalState(BaseModel):
    world_id: str
    query_id: str
    status: str
    iterations: int
    info_requests_used: int


def _load(clients: LoopPorts, state: LoopState) -> tuple[WorldQuery, QueryContext | None]:
    query = clients.store.get_query(state.world_id, state.query_id)
    if query is None:
        raise NotFound(f"query {state.query_id} not found")
    return query, clients.store.load_context(state.world_id, state.query_id)


@contextmanager
def _traced(query: WorldQuery, iteration: int, step: str) -> Iterator[dict[str, Any]]:
    """Time a step into the query's trace; a step that calls the model adds its wait to `model_ms`."""
    record: dict[str, Any] = {"outcome": "", "detail": {}, "model_ms": 0.0}
    started = time.perf_counter()
    yield record
    query.trace.append(TraceStep(iteration=iteration, step=step, outcome=record["outcome"],  # type: ignore[arg-type]
                                 detail=record["detail"], elapsed_ms=round((time.perf_counter() - started) * 1000, 2),
                                 model_ms=round(record["model_ms"], 2)))


@contextmanager
def _model_wait(record: dict[str, Any]) -> Iterator[None]:
    started = time.perf_counter()
    try:
        yield
    finally:
        record["model_ms"] += (time.perf_counter() - started) * 1000


def _done(query: WorldQuery, iteration: int, step: str) -> TraceStep | None:
    return next((t for t in query.trace if t.iteration == iteration and t.step == step), None)


def _state(query: WorldQuery, iteration: int, outcome: str | None) -> LoopState:
    return LoopState(world_id=query.world_id, query_id=query.query_id, iteration=iteration, mode=query.mode,
                     outcome=outcome, remaining_info_requests=query.remaining_info_requests)  # type: ignore[arg-type]


def _record_usage(query: WorldQuery, record: dict[str, Any], usage: Usage, model: str,
                  fallback: str | None = None) -> None:
    query.model = model
    if fallback:  # the offline engine answered in the model's place: the trace says why
        record["detail"].update(basis="offline", reason=fallback)
    query.model_calls += usage.calls
    query.input_tokens += usage.sent_tokens  # the query's cost in context: cached prefix tokens count too
    query.output_tokens += usage.output_tokens
    record["detail"]["tokens"] = {"input": usage.input_tokens, "output": usage.output_tokens,
                                  "cache_read": usage.cache_read_tokens, "cache_write": usage.cache_write_tokens}


def init(clients: LoopPorts, world: World, state: LoopState) -> LoopState:
    """Build the first context, compact on purpose: the fused search's best hits, the entities they
    touch as summaries (their full records come when asked for; an entity the question names comes in full when its
    record is short), those entities' direct relationships, and the conversation context. With the query's `as_of`,
    all of it as memory stood then."""
    query, existing = _load(clients, state)
    if existing is not None and _done(query, 0, "init"):
        return _state(query, 0, None)
    as_of = query.config.as_of
    now = as_of or utcnow()  # relative times ("3 days ago") are read from the time asked about
    h = world.heuristics
    query.status = "processing"
    with _traced(query, 0, "init") as record:
        context = QueryContext(query_id=query.query_id, world_id=query.world_id, question=query.question,
                               referenced_entities=h.query.query_referenced_entities,
                               memory_capabilities=h.query.query_memory_capabilities, as_of=as_of)
        found = search(clients, world, query.question, user_id=query.user_id, limit=h.query.query_initial_hits,
                       now=now, as_of=as_of)
        context.merge(capabilities.hit_items(clients, query.world_id, found.hits, as_of=as_of))
        entity_ids = list(dict.fromkeys([e.entity_id for e in found.entities]
                                        + [hit.doc_id for hit in found.hits if hit.kind == "entity"]
                                        + [e for hit in found.hits for e in hit.entity_ids]
                                        ))[: query.config.max_initial_entities]
        entities = {e.entity_id: e for e in clients.store.get_entities(query.world_id, entity_ids)}
        named = {e.entity_id for e in found.entities}
        context.merge([_first_record(clients, world, query.user_id, entities[e], as_of) if e in named
                       else capabilities.entity_summary(entities[e]) for e in entity_ids if e in entities])
        context.definitions = sorted({e.entity_type for e in entities.values()})
        if query.config.include_relationships:
            for entity_id in [e for e in entity_ids if e in entities][: h.query.query_relationship_entities]:
                context.merge(capabilities.relationship_items(clients, query.world_id, capabilities.made_by(
                    clients.store.relationships(query.world_id, entity_id, 1, user_id=query.user_id), as_of)))
        conversation = conversation_context(clients, world, query.user_id, query.conversation_id,
                                            query.question, now)
        if as_of is not None:  # what was said after the time asked about is not known then
            conversation = dataclasses.replace(conversation, events=[
                e for e in conversation.events if e.occurred_at <= as_of])
        context.conversation = conversation.lines(query.user_id, now)
        context.conversation_ids = sorted({e.conversation_id for e in conversation.events})
        clients.store.save_context(context)
        stats = context.stats(h.query.chars_per_token)
        record["outcome"] = "context_built"
        record["detail"] = {"items": stats.items, "estimated_tokens": stats.estimated_tokens,
                            "entity_summaries": stats.entity_summaries, "conversation_lines": len(context.conversation),
                            "search_ms": found.search_time_ms}
    clients.store.save_query(query)
    return _state(query, 0, None)


def _first_record(clients: LoopPorts, world: World, user_id: str, entity: CanonicalEntity,
                  as_of: datetime | None) -> ContextItem:
    """An entity the question names, in the first context: its full record when that is no longer than a stripped
    body (`context_summary_body_chars`: a summary would cost the model a round to expand for a few words), else its
    summary."""
    record = capabilities.entity_record(clients, world, user_id, entity, as_of=as_of)
    if len(record.text) <= world.heuristics.query.context_summary_body_chars:
        return record
    return capabilities.entity_summary(entity, score=1.0)


def ask(clients: LoopPorts, world: World, state: LoopState) -> LoopState:
    """Ask the model: an Answer ends the loop; NeedsMoreInfo is validated against this round's offer
    and kept for `fulfil`; an invalid request, or one with no info requests left, leads to `force`."""
    query, context = _load(clients, state)
    iteration = state.iteration + 1
    previous = _done(query, iteration, "ask")
    if previous is not None:
        return _state(query, iteration, previous.outcome)
    assert context is not None, "init stores the context before ask runs"
    h = world.heuristics
    with _traced(query, iteration, "ask") as record:
        measures = budget.thin(context, h)
        with _model_wait(record):
            reply = clients.llm_for(query.world_id).answer(
                context, can_request_more=query.can_request_more_info,
                remaining_info_requests=query.remaining_info_requests, temperature=query.config.temperature)
        _record_usage(query, record, reply.usage, reply.model, reply.fallback)
        if reply.signals and not query.signals:
            query.signals = list(reply.signals)
        if isinstance(reply.value, NeedsMoreInfo):
            requests = list(reply.value.info_requests)
            record["detail"]["requests"] = [r.model_dump() for r in requests]
            offer = offers.offer(context)
            for request in requests if query.can_request_more_info else []:
                try:
                    offer.validate(request)
                except CapabilityRejected as exc:
                    context.missing.append(f"{request.reason or 'more information'} ({exc.message})")
            if context.missing:
                record["outcome"] = "invalid_request"
                record["detail"]["rejected"] = context.missing
            else:
                # With no requests left nothing is kept to fulfil: the state machine's Choice sends it to Force.
                context.pending_requests = requests if query.can_request_more_info else []
                record["outcome"] = "needs_more_info"
        else:
            query.answer = _grounded(offline_labelled(reply.value, reply.fallback), context, h)
            record["outcome"] = "answer"
            record["detail"].update(confidence=query.answer.confidence, sources=len(query.answer.sources))
        if measures:
            record["detail"]["thinned"] = measures
    clients.store.save_context(context)
    clients.store.save_query(query)
    return _state(query, iteration, record["outcome"])


def fulfil(clients: LoopPorts, world: World, state: LoopState) -> LoopState:
    """Run the pending (validated) info requests and merge what they find into the context."""
    query, context = _load(clients, state)
    if _done(query, state.iteration, "fulfil"):
        return _state(query, state.iteration, "needs_more_info")
    assert context is not None
    with _traced(query, state.iteration, "fulfil") as record:
        offer = offers.offer(context)
        added, served = 0, []
        for request in context.pending_requests:
            typed = offer.validate(request)  # validated by ask against the same context: cannot fail here
            added += context.merge(offers.execute(clients, world, context, query.user_id, typed))
            for entity_id in capabilities.expanded_ids(typed):
                context.mark_expanded(entity_id)
            served.append(request.capability)
        context.pending_requests = []
        query.info_requests_used += 1
        stats = context.stats(world.heuristics.query.chars_per_token)
        record["outcome"] = "fulfilled"
        record["detail"] = {"served": served, "items_added": added, "items": stats.items,
                            "estimated_tokens": stats.estimated_tokens}
    clients.store.save_context(context)
    clients.store.save_query(query)
    return _state(query, state.iteration, "needs_more_info")


def force(clients: LoopPorts, world: World, state: LoopState) -> LoopState:
    """Out of info requests, or a request was invalid: the model must answer with what it has, its confidence
    capped low (at the limit only while the world's `query_forced_answer_low` holds, the default). After an
    invalid request the answer also says what was missing."""
    query, context = _load(clients, state)
    if _done(query, state.iteration, "force"):
        return _state(query, state.iteration, "answer")
    assert context is not None
    h = world.heuristics
    with _traced(query, state.iteration, "force") as record:
        with _model_wait(record):
            reply = clients.llm_for(query.world_id).force_answer(context, temperature=query.config.temperature)
        _record_usage(query, record, reply.usage, reply.model, reply.fallback)
        answer = offline_labelled(reply.value, reply.fallback).model_copy(update={"forced": True})
        if context.missing or h.query.query_forced_answer_low:
            answer = answer.model_copy(update={"confidence": min(answer.confidence, h.query.answer_degraded_confidence)})
        if context.missing:
            answer = answer.model_copy(update={
                "content": f"{answer.content} I could not get everything needed: " + "; ".join(context.missing) + "."})
        query.answer = _grounded(answer, context, h)
        record["outcome"] = "answer"
        record["detail"].update(confidence=query.answer.confidence, reason="invalid_request" if context.missing
                                else "no_info_requests_left")
    clients.store.save_query(query)
    return _state(query, state.iteration, "answer")


def fallback(clients: LoopPorts, world: World, state: LoopState, error: dict[str, Any]) -> LoopState:
    """The model stayed unavailable through the state machine's retries: answer from retrieval alone,
    with low confidence, and say so."""
    query, context = _load(clients, state)
    iteration = max((t.iteration for t in query.trace), default=0) + 1
    if _done(query, iteration - 1, "fallback"):
        return _state(query, iteration - 1, "answer")
    assert context is not None
    h = world.heuristics
    with _traced(query, iteration, "fallback") as record:
        query.answer = _grounded(_from_retrieval(context, h), context, h)
        record["outcome"] = "answer"
        record["detail"] = {"error": str(error.get("Error", "LLMUnavailable")), "sources": len(query.answer.sources)}
    clients.store.save_query(query)
    return _state(query, iteration, "answer")


def finish(clients: LoopPorts, state: LoopState) -> FinalState:
    query, _ = _load(clients, state)
    if query.status != "completed":
        with _traced(query, state.iteration, "finish") as record:
            query.status = "completed"
            query.completed_at = utcnow()
            record["outcome"] = "completed"
        clients.store.save_query(query)
    return FinalState(world_id=query.world_id, query_id=query.query_id, status=query.status,
                      iterations=state.iteration, info_requests_used=query.info_requests_used)


def fail(clients: LoopPorts, world_id: str, query_id: str, error: dict[str, Any]) -> FinalState:
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


def offline_labelled(answer: Answer, fallback: str | None) -> Answer:
    """The answer saying the offline engine wrote it, and why, when it did (`LLMReply.fallback`)."""
    return answer.model_copy(update={"basis": "offline", "reason": fallback}) if fallback else answer


def _grounded(answer: Answer, context: QueryContext, h: Heuristics) -> Answer:
    """Only sources present in the context survive (an answer cannot cite what it was not shown), their
    contributions share the answer between them, and the confidence gets its level."""
    known = context.cited_ids()
    sources = [s for s in answer.sources if s.id in known]
    weights = [s.contribution if s.contribution is not None else 1.0 for s in sources]
    total = sum(weights) or 1.0
    sources = [s.model_copy(update={"contribution": round(w / total, 3)}) for s, w in zip(sources, weights, strict=True)]
    level = ("high" if answer.confidence >= h.query.answer_high_confidence
             else "medium" if answer.confidence >= h.query.answer_medium_confidence else "low")
    return answer.model_copy(update={"sources": sources, "confidence_level": level})


def _from_retrieval(context: QueryContext, h: Heuristics) -> Answer:
    """What retrieval found, best first, named as such: no model wrote it."""
    best = sorted((i for i in context.items if i.kind != "entity" or i.full), key=lambda i: i.score,
                  reverse=True)[: h.query.fallback_answer_items]
    if not best:
        content = "The language model is unavailable and retrieval found nothing about this in memory."
    else:
        content = ("The language model is unavailable, so this is retrieval alone, not an answer: the most relevant "
                   "memories are: " + " | ".join(" ".join(i.text.split())[:200] for i in best))
    return Answer(content=content, confidence=h.query.answer_degraded_confidence if best else 0.0,
                  sources=[Source(kind="semantic" if i.kind == "relationship" else i.kind, id=i.id,  # type: ignore[arg-type]
                                  excerpt=i.text[:200], score=i.score) for i in best], basis="retrieval")
