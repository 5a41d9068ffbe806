"""Routes. Each validates its input through type hints (Powertools) and calls one domain function."""

from __future__ import annotations

from typing import Annotated, Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Path, Query

from engram.app.compose import get_clients
from engram.enrichment.ingest import WAIT_DEFAULT_S, WAIT_MAX_S, await_enrichment, ingest_events, sweep_stalled
from engram.enrichment.insights import conversation_insights, dismiss_intervention
from engram.enrichment.resolve import pending_disambiguations, settle_disambiguation
from engram.enrichment.signals import dismiss_signal, list_signals, set_assumption_status
from engram.errors import NotFound
from engram.http.app import caller_worlds
from engram.http.params import (
    ID,
    MENTION_ID,
    AsOf,
    Id,
    UserId,
    WorldId,
    api_router,
    ingest_router,
)
from engram.http.params import at as _at
from engram.http.params import json_response as _json
from engram.memory import graph, lifecycle
from engram.memory.config import (
    WorldConfigPatch,
    WorldConfigView,
    patch_config,
    read_config,
    replace_config,
    reset_config,
)
from engram.memory.context import prompt_context
from engram.memory.erase import erase_user
from engram.memory.usage import MAX_DAYS, usage_report
from engram.model.common import as_utc
from engram.model.entities import (
    CanonicalEntity,
    EntityDetail,
    EntityPath,
    RecordedMention,
    Relationship,
    Settlement,
    SettleRequest,
)
from engram.model.events import (
    Erasure,
    IngestRequest,
    IngestResponse,
    StoredEvent,
    SweepRequest,
    SweepResult,
    WorldSummary,
    WorldUser,
)
from engram.model.insights import ConversationInsights, Intervention
from engram.model.memories import (
    ConflictDetail,
    ConflictResolution,
)
from engram.model.overrides import WorldConfig
from engram.model.prompt_context import PromptContext
from engram.model.queries import QueryAccepted, QueryRequest, QueryResponse
from engram.model.search import SearchHit, SearchResponse
from engram.model.signals import SIGNAL_TYPES, AssumptionStatusChange, Signal
from engram.model.steps import ConsolidationRun
from engram.model.usage import UsageReport
from engram.query import submit as queries
from engram.retrieval.search import find_similar
from engram.retrieval.search import search as fused_search

SIGNAL_TYPE = f"^({'|'.join(SIGNAL_TYPES)})$"

Wait = Annotated[bool, Query(description="answer once the batch's enrichment has finished (200), so a question asked "
                                         "next reads it; 202 if `wait_timeout_s` passes first")]
WaitTimeout = Annotated[float, Query(gt=0, le=WAIT_MAX_S, description="with `wait`: the longest wait, in seconds")]


@ingest_router.post("/v1/worlds/<world>/events", summary="Store 1..100 events and start their enrichment",
                    responses={202: {"description": "accepted (with `wait`: the wait timed out, enrichment goes on)",
                                     "content": {"application/json": {"model": IngestResponse}}},
                               200: {"description": "with `wait`: stored and enriched (or failed, see "
                                                    "`enrichment_status`)",
                                     "content": {"application/json": {"model": IngestResponse}}}}, tags=["events"])
def post_events(world: WorldId, request: IngestRequest, wait: Wait = False,
                wait_timeout_s: WaitTimeout = WAIT_DEFAULT_S) -> Response[IngestResponse]:
    clients, at = _at(world)
    accepted = ingest_events(clients, at, request)
    if not wait:
        return _json(202, accepted)
    waited = await_enrichment(clients, accepted, wait_timeout_s)
    return _json(202 if waited.enrichment_status in ("pending", "enriching") else 200, waited)


@api_router.get("/v1/worlds", summary="The worlds the caller may read that hold events, the most recently active "
                                     "first, with their event, user and conversation counts", tags=["worlds"])
def list_worlds() -> list[WorldSummary]:
    allowed = caller_worlds(api_router.current_event.raw_event)
    return get_clients().store.worlds(None if allowed is None else sorted(allowed))


@api_router.get("/v1/worlds/<world>/events/<event_id>", summary="A stored event and its enrichment status",
                tags=["events"])
def get_event(world: WorldId, event_id: Id) -> StoredEvent:
    event = get_clients().store.get_event(world, event_id)
    if event is None:
        raise NotFound(f"no event {event_id!r} in world {world!r}")
    return event


@api_router.post("/v1/worlds/<world>/queries",
                 summary="Ask a question (sync answers; async and research answer 202 with the query id)",
                 responses={200: {"description": "answered", "content": {"application/json": {"model": QueryResponse}}},
                            202: {"description": "started (mode async or research)",
                                  "content": {"application/json": {"model": QueryAccepted}}}}, tags=["queries"])
def post_query(world: WorldId, request: QueryRequest) -> Response[QueryResponse | QueryAccepted]:
    query = queries.submit_query(get_clients(), world, request)
    if request.mode in ("async", "research"):
        return _json(202, QueryAccepted(query_id=query.query_id, status=query.status))
    return _json(200, queries.response(query))


@api_router.get("/v1/worlds/<world>/queries/<query_id>", summary="One query and its lifecycle", tags=["queries"])
def get_query(world: WorldId, query_id: Id) -> QueryResponse:
    return queries.response(queries.get_query(get_clients(), world, query_id))


@api_router.get("/v1/worlds/<world>/queries", summary="Recent queries", tags=["queries"])
def list_queries(world: WorldId, user_id: Annotated[str | None, Query(pattern=ID)] = None,
                 limit: Annotated[int, Query(ge=1, le=100)] = 20) -> list[QueryResponse]:
    return [queries.response(q) for q in queries.list_queries(get_clients(), world, user_id, limit)]


@api_router.get("/v1/worlds/<world>/search", summary="Fused keyword, semantic and graph search", tags=["search"])
def search(world: WorldId, q: Annotated[str, Query(min_length=1, max_length=1000)],
           user_id: UserId = None, limit: Annotated[int, Query(ge=1, le=50)] = 10, as_of: AsOf = None
           ) -> SearchResponse:
    return fused_search(*_at(world), q, user_id=user_id, limit=limit, as_of=as_utc(as_of))


@api_router.get("/v1/worlds/<world>/similar", summary="Memories or entities nearest one memory or entity by meaning",
                tags=["search"])
def similar(world: WorldId, kind: Annotated[str, Query(pattern="^(event|episodic|semantic|summary|procedural|entity)$")],
            id: Annotated[str, Query(pattern=ID)], user_id: UserId = None,
            limit: Annotated[int, Query(ge=1, le=50)] = 10) -> list[SearchHit]:
    return find_similar(*_at(world), kind, id, limit=limit, user_id=user_id)  # type: ignore[arg-type]


@api_router.get("/v1/worlds/<world>/entities",
                summary="Entities by name or alias (contained or near in spelling) and by definition (type or description)",
                tags=["entities"])
def list_entities(world: WorldId, name: Annotated[str | None, Query(max_length=200)] = None,
                  definition: Annotated[str | None, Query(max_length=200)] = None,
                  limit: Annotated[int, Query(ge=1, le=200)] = 50) -> list[CanonicalEntity]:
    return graph.find_entities(*_at(world), name, definition, limit)


@api_router.get("/v1/worlds/<world>/entities/<entity_id>",
                summary="One entity with its aliases (whose, how sure, learned how), facts and relationships",
                tags=["entities"])
def get_entity(world: WorldId, entity_id: Id, user_id: UserId = None) -> EntityDetail:
    return graph.entity_detail(*_at(world), entity_id, user_id)


@api_router.get("/v1/worlds/<world>/entities/<entity_id>/relationships", summary="Relationships to a depth",
                tags=["entities"])
def relationships(world: WorldId, entity_id: Id, depth: Annotated[int, Query(ge=1, le=3)] = 1,
                  user_id: UserId = None) -> list[Relationship]:
    graph.require_entity(get_clients(), world, entity_id)
    return get_clients().store.relationships(world, entity_id, depth, user_id=user_id)


@api_router.get("/v1/worlds/<world>/conflicts",
                summary="Conflicting facts, each with both sides and their confidence explained", tags=["conflicts"])
def conflicts(world: WorldId, status: Annotated[str | None, Query(pattern="^(open|resolved)$")] = None
              ) -> list[ConflictDetail]:
    return lifecycle.list_conflicts(*_at(world), status)


@api_router.post("/v1/worlds/<world>/conflicts/<conflict_id>/resolution",
                 summary="Settle a conflict: keep one memory (the other is superseded) or both; 409 once the user has",
                 tags=["conflicts"])
def conflict_resolution(world: WorldId, conflict_id: Id, request: ConflictResolution) -> ConflictDetail:
    return lifecycle.resolve_conflict(*_at(world), conflict_id, request)


@api_router.get("/v1/worlds/<world>/conversations/<conversation>/signals",
                summary="A conversation's signals in the order they were said, optionally of one type; with `q`, "
                        "the closest in meaning first", tags=["signals"])
def signals(world: WorldId, conversation: Id, type: Annotated[str | None, Query(pattern=SIGNAL_TYPE)] = None,
            limit: Annotated[int, Query(ge=1, le=500)] = 200,
            include_dismissed: Annotated[bool, Query(description="list the dismissed signals too")] = False,
            q: Annotated[str | None, Query(min_length=1, max_length=2000,
                                           description="rank by cosine similarity to this text")] = None
            ) -> list[Signal]:
    return list_signals(get_clients(), world, conversation, type, limit, include_dismissed=include_dismissed, q=q)


@api_router.post("/v1/worlds/<world>/signals/<signal_id>/status",
                 summary="Set an assumption's status: untested, confirmed, challenged or refuted", tags=["signals"])
def signal_status(world: WorldId, signal_id: Id, change: AssumptionStatusChange) -> Signal:
    return set_assumption_status(get_clients(), world, signal_id, change.status)


@api_router.post("/v1/worlds/<world>/signals/<signal_id>/dismissal",
                 summary="Dismiss a signal: it leaves the conversation's lists and insights, and said again it is "
                         "stored anew (dismissing twice keeps the first time)", tags=["signals"])
def signal_dismissal(world: WorldId, signal_id: Id) -> Signal:
    return dismiss_signal(get_clients(), world, signal_id)


@api_router.get("/v1/worlds/<world>/users", summary="The world's users, the most recently active first",
                tags=["worlds"])
def users(world: WorldId, limit: Annotated[int, Query(ge=1, le=500)] = 100) -> list[WorldUser]:
    return get_clients().store.world_users(world, limit)


@api_router.get("/v1/worlds/<world>/users/<user_id>/events",
                summary="A user's latest events with their enrichment status", tags=["events"])
def user_events(world: WorldId, user_id: Id, limit: Annotated[int, Query(ge=1, le=200)] = 50) -> list[StoredEvent]:
    return get_clients().store.user_events(world, user_id, limit)


@api_router.get("/v1/worlds/<world>/users/<user_id>/memories", summary="A user's memories by layer", tags=["memories"])
def memories(world: WorldId, user_id: Id, layer: Annotated[str, Query(pattern="^(episodic|semantic|procedural|summary)$")]
             = "semantic", limit: Annotated[int, Query(ge=1, le=200)] = 50, as_of: AsOf = None
             ) -> list[dict[str, Any]]:
    # Facts come with effective_confidence (passive decay as of now, or as of `as_of`) and the explanation behind it.
    return lifecycle.user_memories(*_at(world), user_id, layer, limit, as_of=as_utc(as_of))  # type: ignore[arg-type]


@api_router.get("/v1/worlds/<world>/users/<user_id>/context",
                summary="Context for an agent's prompt: the conversation context the rules build for `q` and the "
                        "user's current facts relevant to it, as text within `max_tokens` and as items",
                tags=["memories"])
def context(world: WorldId, user_id: Id, q: Annotated[str, Query(min_length=1, max_length=4000)],
            conversation_id: Annotated[str | None, Query(pattern=ID)] = None,
            max_tokens: Annotated[int, Query(ge=1, le=100_000)] = 2000) -> PromptContext:
    return prompt_context(*_at(world), user_id, q, conversation_id, max_tokens)


@api_router.post("/v1/worlds/<world>/enrichments",
                 summary="Start enrichment again for events still pending after the grace period (or failed)",
                 tags=["ops"])
def sweep(world: WorldId, request: SweepRequest) -> Response[SweepResult]:
    return _json(202, sweep_stalled(*_at(world), include_failed=request.include_failed))


@api_router.post("/v1/worlds/<world>/consolidations", summary="Run consolidation now", tags=["ops"])
def consolidate(world: WorldId) -> Response[dict[str, Any]]:
    execution = get_clients().workflows.start_consolidation(world)
    return _json(202, {"world_id": world, "execution_id": execution})


@api_router.get("/v1/worlds/<world>/consolidations/<execution_id>",
                summary="A consolidation started by POST .../consolidations: running, or what the run did",
                tags=["ops"])
def consolidation_run(world: WorldId, execution_id: Annotated[str, Path(max_length=300)]) -> ConsolidationRun:
    return get_clients().workflows.consolidation(world, execution_id)


@api_router.get("/v1/worlds/<world>/config",
                summary="The world's config: its overrides, any stored override ignored (and why), and the heuristics "
                        "and tag categories in force", tags=["config"])
def get_config(world: WorldId) -> WorldConfigView:
    return read_config(get_clients(), world)


@api_router.get("/v1/worlds/<world>/usage",
                summary="The world's model spend: tokens and requests by day and stage, and its daily budget",
                tags=["config"])
def get_usage(world: WorldId, days: Annotated[int, Query(ge=1, le=MAX_DAYS, description="the last this many UTC "
                                                                                       "days, today included")] = 7
              ) -> UsageReport:
    return usage_report(get_clients(), world, days)


@api_router.put("/v1/worlds/<world>/config",
                summary="Replace the world's overrides (validated whole: 422 on an unknown key or a bad value)",
                tags=["config"])
def put_config(world: WorldId, config: WorldConfig) -> WorldConfigView:
    return replace_config(get_clients(), world, config)


@api_router.patch("/v1/worlds/<world>/config",
                  summary="Change some overrides (a JSON merge patch: null removes one), validated whole",
                  tags=["config"])
def patch_world_config(world: WorldId, patch: WorldConfigPatch) -> WorldConfigView:
    return patch_config(get_clients(), world, patch)


@api_router.delete("/v1/worlds/<world>/config", summary="Remove every override of the world: the defaults apply",
                   tags=["config"])
def delete_config(world: WorldId) -> WorldConfigView:
    return reset_config(get_clients(), world)


@api_router.get("/v1/health", summary="Liveness with the state of each dependency", tags=["ops"])
def health() -> Response[dict[str, Any]]:
    clients = get_clients()
    checks: dict[str, Any] = {"llm": clients.llm.name, "embedder": clients.embedder.name}
    ok = True
    for name, ping in (("database", clients.store.ping), ("index", clients.index.ping)):
        try:
            ping()
            checks[name] = "up"
        except Exception as exc:  # health reports a dependency's failure instead of failing itself
            checks[name] = f"down: {exc.__class__.__name__}"
            ok = False
    return _json(200 if ok else 503, {"status": "ok" if ok else "degraded", "dependencies": checks})


@api_router.get("/v1/worlds/<world>/conversations/<conversation>/insights",
                summary="A conversation's current inflection, open interventions and signals by type",
                tags=["insights"])
def insights(world: WorldId, conversation: Id) -> ConversationInsights:
    return conversation_insights(*_at(world), conversation)


@api_router.post("/v1/worlds/<world>/conversations/<conversation>/interventions/<intervention_id>/dismissal",
                 summary="Dismiss an intervention: it is never offered again (dismissing twice changes nothing)",
                 tags=["insights"])
def intervention_dismissal(world: WorldId, conversation: Id, intervention_id: Id) -> Intervention:
    return dismiss_intervention(get_clients(), world, conversation, intervention_id)


@api_router.get("/v1/worlds/<world>/paths", summary="The shortest chains of relationships between two entities",
                tags=["entities"])
def paths(world: WorldId, from_: Annotated[str, Query(alias="from", pattern=ID)], to: Annotated[str, Query(pattern=ID)],
          max_length: Annotated[int, Query(ge=1, le=4)] = 3,
          limit: Annotated[int, Query(ge=1, le=20)] = 5, user_id: UserId = None) -> list[EntityPath]:
    return graph.find_paths(*_at(world), from_, to, max_length, limit, user_id=user_id)


@api_router.get("/v1/worlds/<world>/disambiguations",
                summary="Mentions waiting for their user to choose among candidate entities, oldest first",
                tags=["entities"])
def disambiguations(world: WorldId, user_id: Annotated[str | None, Query(pattern=ID)] = None,
                    limit: Annotated[int, Query(ge=1, le=200)] = 50) -> list[RecordedMention]:
    return pending_disambiguations(get_clients(), world, user_id, limit)


@api_router.post("/v1/worlds/<world>/disambiguations/<mention_id>/resolution",
                 summary="Settle a disambiguation with an entity (or a new one); the user's alias is learned",
                 tags=["entities"])
def settle(world: WorldId, mention_id: Annotated[str, Path(pattern=MENTION_ID)], request: SettleRequest) -> Settlement:
    return settle_disambiguation(*_at(world), mention_id, request)


@api_router.delete("/v1/worlds/<world>/users/<user_id>",
                   summary="Erase a user everywhere: events, memories, signals, queries, index documents and what was "
                           "made of their words; an enrichment still running writes nothing more for them. Events "
                           "the same user id sends after `erased_at` are a new start", tags=["worlds"])
def erase(world: WorldId, user_id: Id) -> Erasure:
    return erase_user(*_at(world), user_id)


# The routes of another module, registered on the same router: correcting a fact, export and import.
from engram.http import memory_routes  # noqa: E402, F401
