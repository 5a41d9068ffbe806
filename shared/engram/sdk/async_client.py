"""The asynchronous client: `EngramClient`'s methods, awaited."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, Literal, overload

import httpx

from engram.model.entities import CanonicalEntity, EntityDetail, Relationship
from engram.model.events import Erasure, EventIn, IngestResponse, StoredEvent, SweepResult, WorldSummary
from engram.model.memories import (
    ConflictDetail,
    EpisodicMemory,
    ExplainedFact,
    FactHistory,
    LayerMemory,
    MemoryAudit,
    MemoryDeletion,
    MemorySummary,
    ProceduralMemory,
)
from engram.model.portability import ImportResult
from engram.model.prompt_context import PromptContext
from engram.model.queries import QueryConfig, QueryResponse
from engram.model.search import SearchResponse
from engram.model.signals import Signal
from engram.model.steps import ConsolidationRun
from engram.model.usage import UsageReport
from engram.sdk.routes import (
    _FINISHED,
    DEFAULT_URL,
    Call,
    ExportedPage,
    Routes,
    T,
    Unreachable,
    _params,
)
from engram.sdk.routes import ApiError as ApiError  # the errors, importable from the client as ever
from engram.sdk.routes import BadRequest as BadRequest
from engram.sdk.routes import Conflict as Conflict
from engram.sdk.routes import NotFound as NotFound
from engram.sdk.routes import RateLimited as RateLimited
from engram.sdk.routes import ServerError as ServerError
from engram.sdk.routes import Unauthorized as Unauthorized
from engram.sdk.transport import RetryPolicy, ValidTime, correction, headers, read, request_args, retryable


class AsyncEngramClient:
    """The asynchronous twin of `EngramClient`: the same methods, awaited."""

    def __init__(self, base_url: str = DEFAULT_URL, *, token: str | None = None, timeout: float = 120.0,
                 retry: RetryPolicy | None = None, transport: httpx.AsyncBaseTransport | None = None) -> None:
        self.retry = retry or RetryPolicy()
        self.http = httpx.AsyncClient(base_url=base_url, headers=headers(token), timeout=timeout,
                                      transport=transport)

    async def __aenter__(self) -> AsyncEngramClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self.http.aclose()

    async def run(self, call: Call[T]) -> T:
        for attempt in range(self.retry.max_retries + 1):
            response: httpx.Response | None = None
            try:
                response = await self.http.request(call.method, call.path, **request_args(call))
            except httpx.TransportError as exc:
                if attempt == self.retry.max_retries:
                    raise Unreachable(0, "unreachable", f"{exc.__class__.__name__}: {exc}") from exc
            if response is not None and (not retryable(response) or attempt == self.retry.max_retries):
                return read(call, response)
            await asyncio.sleep(self.retry.delay(attempt, response))
        raise AssertionError("unreachable: the last attempt returns or raises")

    async def add_events(self, world: str, events: Sequence[EventIn | Mapping[str, Any]], *, wait: bool = False,
                         wait_timeout_s: float | None = None) -> IngestResponse:
        return await self.run(Routes.add_events(world, events, wait=wait, wait_timeout_s=wait_timeout_s))

    async def get_event(self, world: str, event_id: str) -> StoredEvent:
        return await self.run(Routes.get_event(world, event_id))

    async def ask(self, world: str, user_id: str, question: str, *, conversation_id: str | None = None,
                  config: QueryConfig | None = None, as_of: datetime | None = None) -> QueryResponse:
        return await self.run(Routes.ask(world, user_id, question, conversation_id=conversation_id,  # type: ignore[no-any-return]
                                         config=config, as_of=as_of))

    async def submit(self, world: str, user_id: str, question: str, *, conversation_id: str | None = None,
                     config: QueryConfig | None = None, research: bool = False, as_of: datetime | None = None) -> str:
        return str(await self.run(Routes.ask(world, user_id, question, conversation_id=conversation_id,
                                             config=config, mode="research" if research else "async", as_of=as_of)))

    async def get_query(self, world: str, query_id: str) -> QueryResponse:
        return await self.run(Routes.get_query(world, query_id))

    async def wait(self, world: str, query_id: str, *, timeout: float = 300.0, poll_s: float = 0.5) -> QueryResponse:
        deadline = time.monotonic() + timeout
        while (query := await self.get_query(world, query_id)).status not in _FINISHED:
            if time.monotonic() > deadline:
                raise TimeoutError(f"query {query_id} still {query.status} after {timeout:.0f} s")
            await asyncio.sleep(poll_s)
        return query

    async def search(self, world: str, q: str, *, user_id: str | None = None, limit: int = 10,
                     as_of: datetime | None = None) -> SearchResponse:
        return await self.run(Routes.search(world, q, user_id=user_id, limit=limit, as_of=as_of))

    async def entities(self, world: str, *, name: str | None = None, limit: int = 50) -> list[CanonicalEntity]:
        return await self.run(Routes.entities(world, name=name, limit=limit))

    async def entity(self, world: str, entity_id: str, *, user_id: str | None = None) -> EntityDetail:
        return await self.run(Routes.entity(world, entity_id, user_id=user_id))

    async def relationships(self, world: str, entity_id: str, *, depth: int = 1,
                            user_id: str | None = None) -> list[Relationship]:
        return await self.run(Routes.relationships(world, entity_id, depth=depth, user_id=user_id))

    @overload
    async def memories(self, world: str, user_id: str, *, layer: Literal["semantic"] = ..., limit: int = ...,
                       as_of: datetime | None = ...) -> list[ExplainedFact]: ...
    @overload
    async def memories(self, world: str, user_id: str, *, layer: Literal["episodic"], limit: int = ...,
                       as_of: datetime | None = ...) -> list[EpisodicMemory]: ...
    @overload
    async def memories(self, world: str, user_id: str, *, layer: Literal["procedural"], limit: int = ...,
                       as_of: datetime | None = ...) -> list[ProceduralMemory]: ...
    @overload
    async def memories(self, world: str, user_id: str, *, layer: Literal["summary"], limit: int = ...,
                       as_of: datetime | None = ...) -> list[MemorySummary]: ...
    @overload
    async def memories(self, world: str, user_id: str, *, layer: str, limit: int = ...,
                       as_of: datetime | None = ...) -> list[LayerMemory]: ...
    async def memories(self, world: str, user_id: str, *, layer: str = "semantic", limit: int = 50,
                       as_of: datetime | None = None) -> list[Any]:
        """A user's memories of one layer, as `EngramClient.memories`."""
        return await self.run(Routes.memories(world, user_id, layer=layer, limit=limit, as_of=as_of))

    async def context(self, world: str, user_id: str, q: str, *, conversation_id: str | None = None,
                      max_tokens: int | None = None) -> PromptContext:
        """Memory as text for a prompt (see `EngramClient.context`)."""
        return await self.run(Routes.context(world, user_id, q, conversation_id=conversation_id,
                                             max_tokens=max_tokens))

    async def conflicts(self, world: str, *, status: str | None = None) -> list[ConflictDetail]:
        return await self.run(Routes.conflicts(world, status=status))

    async def resolve_conflict(self, world: str, conflict_id: str, *, winner_memory_id: str | None = None,
                               keep_both: bool = False, note: str | None = None) -> ConflictDetail:
        return await self.run(Routes.resolve_conflict(world, conflict_id, _params(
            winner_memory_id=winner_memory_id, keep_both=keep_both or None, note=note)))

    async def erase_user(self, world: str, user_id: str) -> Erasure:
        return await self.run(Routes.erase_user(world, user_id))

    async def enrich_pending(self, world: str, *, include_failed: bool = False) -> SweepResult:
        return await self.run(Routes.enrich_pending(world, include_failed=include_failed))

    async def worlds(self) -> list[WorldSummary]:
        """The worlds this client's token may read that hold events, the most recently active first."""
        return await self.run(Routes.worlds())

    async def health(self) -> dict[str, Any]:
        return await self.run(Routes.health())

    async def correct_memory(self, world: str, memory_id: str, *, object_value: str | None = None,
                             confidence: float | None = None, valid_from: datetime | None = None,
                             valid_to: datetime | None = None, note: str | None = None,
                             clear: Sequence[ValidTime] = ()) -> ExplainedFact:
        return await self.run(Routes.correct_memory(world, memory_id, correction(clear,
            object_value=object_value, confidence=confidence, valid_from=valid_from, valid_to=valid_to, note=note)))

    async def delete_memory(self, world: str, memory_id: str, *, note: str | None = None) -> MemoryDeletion:
        return await self.run(Routes.delete_memory(world, memory_id, note=note))

    async def memory_audit(self, world: str, memory_id: str) -> list[MemoryAudit]:
        return await self.run(Routes.memory_audit(world, memory_id))

    async def usage(self, world: str, days: int = 7) -> UsageReport:
        return await self.run(Routes.usage(world, days))

    async def start_consolidation(self, world: str) -> str:
        return await self.run(Routes.start_consolidation(world))
    async def signals(self, world: str, conversation_id: str, *, signal_type: str | None = None,
                      include_dismissed: bool = False, q: str | None = None, limit: int = 200) -> list[Signal]:
        return await self.run(Routes.signals(world, conversation_id, signal_type=signal_type,
                                             include_dismissed=include_dismissed, q=q, limit=limit))

    async def dismiss_signal(self, world: str, signal_id: str) -> Signal:
        return await self.run(Routes.dismiss_signal(world, signal_id))


    async def memory_history(self, world: str, memory_id: str) -> FactHistory:
        return await self.run(Routes.memory_history(world, memory_id))

    async def consolidation(self, world: str, execution_id: str) -> ConsolidationRun:
        return await self.run(Routes.consolidation(world, execution_id))

    async def export_page(self, world: str, *, user_id: str | None = None, vectors: bool = True,
                          max_bytes: int | None = None, cursor: str | None = None) -> ExportedPage:
        return await self.run(Routes.export_page(world, user_id=user_id, vectors=vectors, max_bytes=max_bytes,
                                                 cursor=cursor))

    async def import_document(self, world: str, text: str) -> ImportResult:
        return await self.run(Routes.import_document(world, text))
