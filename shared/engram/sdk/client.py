"""The engram Python client: sync (`EngramClient`) and async (`AsyncEngramClient`), typed with the same
pydantic models the API validates with.

    from engram.sdk.client import EngramClient

    with EngramClient("http://127.0.0.1:8000") as engram:          # or an AWS URL with token=<JWT>
        engram.add_events("demo", [{"user_id": "ana", "conversation_id": "c1", "role": "user",
                                    "content": "I live in Porto."}], wait=True)
        print(engram.ask("demo", "ana", "Where do I live?").answer)

Requests that fail with 429, 5xx or a dropped connection are retried with exponential backoff (honouring
`Retry-After`); events get an `event_id` before the first attempt, so a retried batch is stored once.
Errors carry the API's JSON error body (`code`, `message`, `details`).
"""

from __future__ import annotations

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
from engram.sdk.transport import RetryPolicy as RetryPolicy
from engram.sdk.transport import ValidTime as ValidTime
from engram.sdk.transport import correction, headers, read, request_args, retryable


class EngramClient:
    """A synchronous client. `token` is an API key (local) or a JWT (AWS), sent as a bearer token."""

    def __init__(self, base_url: str = DEFAULT_URL, *, token: str | None = None, timeout: float = 120.0,
                 retry: RetryPolicy | None = None, transport: httpx.BaseTransport | None = None) -> None:
        self.retry = retry or RetryPolicy()
        self.http = httpx.Client(base_url=base_url, headers=headers(token), timeout=timeout, transport=transport)

    def __enter__(self) -> EngramClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.http.close()

    def run(self, call: Call[T]) -> T:
        """Send a call, retrying 429, 5xx and dropped connections."""
        for attempt in range(self.retry.max_retries + 1):
            response: httpx.Response | None = None
            try:
                response = self.http.request(call.method, call.path, **request_args(call))
            except httpx.TransportError as exc:
                if attempt == self.retry.max_retries:
                    raise Unreachable(0, "unreachable", f"{exc.__class__.__name__}: {exc}") from exc
            if response is not None and (not retryable(response) or attempt == self.retry.max_retries):
                return read(call, response)
            time.sleep(self.retry.delay(attempt, response))
        raise AssertionError("unreachable: the last attempt returns or raises")

    def add_events(self, world: str, events: Sequence[EventIn | Mapping[str, Any]], *, wait: bool = False,
                   wait_timeout_s: float | None = None) -> IngestResponse:
        """Store events. With `wait`, answer once their enrichment has finished (or `wait_timeout_s`, at most 25,
        passes: `enrichment_status` says which), so a question asked next reads them."""
        return self.run(Routes.add_events(world, events, wait=wait, wait_timeout_s=wait_timeout_s))

    def get_event(self, world: str, event_id: str) -> StoredEvent:
        return self.run(Routes.get_event(world, event_id))

    def ask(self, world: str, user_id: str, question: str, *, conversation_id: str | None = None,
            config: QueryConfig | None = None, as_of: datetime | None = None) -> QueryResponse:
        """Ask and wait for the answer (the query loop runs while the request is open); with `as_of`, answered
        with what memory held true then."""
        return self.run(Routes.ask(world, user_id, question, conversation_id=conversation_id, config=config,  # type: ignore[no-any-return]
                                   as_of=as_of))

    def submit(self, world: str, user_id: str, question: str, *, conversation_id: str | None = None,
               config: QueryConfig | None = None, research: bool = False, as_of: datetime | None = None) -> str:
        """Start the query loop (or, with `research`, a research run: plan, gather, evaluate, synthesize) and
        return the query id at once; read it with `get_query` or `wait`."""
        return str(self.run(Routes.ask(world, user_id, question, conversation_id=conversation_id, config=config,
                                       mode="research" if research else "async", as_of=as_of)))

    def get_query(self, world: str, query_id: str) -> QueryResponse:
        return self.run(Routes.get_query(world, query_id))

    def wait(self, world: str, query_id: str, *, timeout: float = 300.0, poll_s: float = 0.5) -> QueryResponse:
        """Poll a submitted query until it completes or fails."""
        deadline = time.monotonic() + timeout
        while (query := self.get_query(world, query_id)).status not in _FINISHED:
            if time.monotonic() > deadline:
                raise TimeoutError(f"query {query_id} still {query.status} after {timeout:.0f} s")
            time.sleep(poll_s)
        return query

    def search(self, world: str, q: str, *, user_id: str | None = None, limit: int = 10,
               as_of: datetime | None = None) -> SearchResponse:
        """Fused search; with `as_of`, over memory as it stood then (the facts true then)."""
        return self.run(Routes.search(world, q, user_id=user_id, limit=limit, as_of=as_of))

    def entities(self, world: str, *, name: str | None = None, limit: int = 50) -> list[CanonicalEntity]:
        return self.run(Routes.entities(world, name=name, limit=limit))

    def entity(self, world: str, entity_id: str, *, user_id: str | None = None) -> EntityDetail:
        """The entity; with `user_id`, as that user knows it (their facts and edges, and the world's)."""
        return self.run(Routes.entity(world, entity_id, user_id=user_id))

    def relationships(self, world: str, entity_id: str, *, depth: int = 1,
                      user_id: str | None = None) -> list[Relationship]:
        return self.run(Routes.relationships(world, entity_id, depth=depth, user_id=user_id))

    @overload
    def memories(self, world: str, user_id: str, *, layer: Literal["semantic"] = ..., limit: int = ...,
                 as_of: datetime | None = ...) -> list[ExplainedFact]: ...
    @overload
    def memories(self, world: str, user_id: str, *, layer: Literal["episodic"], limit: int = ...,
                 as_of: datetime | None = ...) -> list[EpisodicMemory]: ...
    @overload
    def memories(self, world: str, user_id: str, *, layer: Literal["procedural"], limit: int = ...,
                 as_of: datetime | None = ...) -> list[ProceduralMemory]: ...
    @overload
    def memories(self, world: str, user_id: str, *, layer: Literal["summary"], limit: int = ...,
                 as_of: datetime | None = ...) -> list[MemorySummary]: ...
    @overload
    def memories(self, world: str, user_id: str, *, layer: str, limit: int = ...,
                 as_of: datetime | None = ...) -> list[LayerMemory]: ...
    def memories(self, world: str, user_id: str, *, layer: str = "semantic", limit: int = 50,
                 as_of: datetime | None = None) -> list[Any]:
        """A user's memories of one layer, the newest first: ExplainedFact (semantic), EpisodicMemory,
        ProceduralMemory or MemorySummary (summary); with `as_of`, those memory held then (the facts true then)."""
        return self.run(Routes.memories(world, user_id, layer=layer, limit=limit, as_of=as_of))

    def context(self, world: str, user_id: str, q: str, *, conversation_id: str | None = None,
                max_tokens: int | None = None) -> PromptContext:
        """Memory as text for a prompt: the conversation context the rules build for `q` and the user's current
        facts relevant to it (`.text`, within `max_tokens`), and the items it is made of (`.items`)."""
        return self.run(Routes.context(world, user_id, q, conversation_id=conversation_id, max_tokens=max_tokens))

    def conflicts(self, world: str, *, status: str | None = None) -> list[ConflictDetail]:
        return self.run(Routes.conflicts(world, status=status))

    def resolve_conflict(self, world: str, conflict_id: str, *, winner_memory_id: str | None = None,
                         keep_both: bool = False, note: str | None = None) -> ConflictDetail:
        """Keep one memory of a conflict (the other is superseded) or both."""
        return self.run(Routes.resolve_conflict(world, conflict_id, _params(
            winner_memory_id=winner_memory_id, keep_both=keep_both or None, note=note)))

    def erase_user(self, world: str, user_id: str) -> Erasure:
        return self.run(Routes.erase_user(world, user_id))

    def enrich_pending(self, world: str, *, include_failed: bool = False) -> SweepResult:
        return self.run(Routes.enrich_pending(world, include_failed=include_failed))

    def worlds(self) -> list[WorldSummary]:
        """The worlds this client's token may read that hold events, the most recently active first."""
        return self.run(Routes.worlds())

    def health(self) -> dict[str, Any]:
        return self.run(Routes.health())

    def correct_memory(self, world: str, memory_id: str, *, object_value: str | None = None,
                       confidence: float | None = None, valid_from: datetime | None = None,
                       valid_to: datetime | None = None, note: str | None = None,
                       clear: Sequence[ValidTime] = ()) -> ExplainedFact:
        """Correct a fact as the user's word: only the fields given change (a field left None is kept); the
        valid times named in `clear` are removed."""
        return self.run(Routes.correct_memory(world, memory_id, correction(clear,
            object_value=object_value, confidence=confidence, valid_from=valid_from, valid_to=valid_to, note=note)))

    def delete_memory(self, world: str, memory_id: str, *, note: str | None = None) -> MemoryDeletion:
        """Delete a fact from memory, the keyword index and the graph; an audit row keeps what it was."""
        return self.run(Routes.delete_memory(world, memory_id, note=note))

    def memory_audit(self, world: str, memory_id: str) -> list[MemoryAudit]:
        """A fact's corrections and deletion, oldest first."""
        return self.run(Routes.memory_audit(world, memory_id))

    def usage(self, world: str, days: int = 7) -> UsageReport:
        """The world's model spend over the last `days` UTC days, by day and stage, and its daily budget."""
        return self.run(Routes.usage(world, days))

    def start_consolidation(self, world: str) -> str:
        """Start consolidation now; the execution id to follow it with `consolidation`."""
        return self.run(Routes.start_consolidation(world))

    def consolidation(self, world: str, execution_id: str) -> ConsolidationRun:
        """A started consolidation: running, or what the run did (or why it failed)."""
        return self.run(Routes.consolidation(world, execution_id))

    def export_page(self, world: str, *, user_id: str | None = None, vectors: bool = True,
                    max_bytes: int | None = None, cursor: str | None = None) -> ExportedPage:
        """One page of a world's (or a user's) export document; pass its `next_cursor` to read the next."""
        return self.run(Routes.export_page(world, user_id=user_id, vectors=vectors, max_bytes=max_bytes,
                                           cursor=cursor))

    def import_document(self, world: str, text: str) -> ImportResult:
        """Import an export document (JSON Lines) small enough for one request; rows the world holds are skipped."""
        return self.run(Routes.import_document(world, text))

    def memory_history(self, world: str, memory_id: str) -> FactHistory:
        """A fact's history: its values in the order they became true, with valid times and what closed each."""
        return self.run(Routes.memory_history(world, memory_id))
    def signals(self, world: str, conversation_id: str, *, signal_type: str | None = None,
                include_dismissed: bool = False, q: str | None = None, limit: int = 200) -> list[Signal]:
        """A conversation's signals in the order they were said (the dismissed ones only when asked); with `q`,
        the closest in meaning to it first."""
        return self.run(Routes.signals(world, conversation_id, signal_type=signal_type,
                                       include_dismissed=include_dismissed, q=q, limit=limit))

    def dismiss_signal(self, world: str, signal_id: str) -> Signal:
        """Dismiss a signal: it leaves the conversation's lists and insights; said again, it is stored anew."""
        return self.run(Routes.dismiss_signal(world, signal_id))


# The asynchronous client, importable from here as ever.
from engram.sdk.async_client import AsyncEngramClient as AsyncEngramClient  # noqa: E402
