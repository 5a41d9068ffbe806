"""The API's routes as calls: each route's method, path, parameters and the model its answer is read as, and the
errors an answer can raise. The clients (`engram.sdk.client`) send them, with retries."""


from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Generic, TypeVar
from urllib.parse import quote

import httpx
from pydantic import BaseModel, TypeAdapter

from engram.model.entities import CanonicalEntity, EntityDetail, Relationship
from engram.model.events import Erasure, EventIn, IngestResponse, StoredEvent, SweepResult, WorldSummary
from engram.model.memories import (
    LAYER_MODELS,
    ConflictDetail,
    ExplainedFact,
    FactHistory,
    LayerMemory,
    MemoryAudit,
    MemoryDeletion,
)
from engram.model.portability import ImportResult
from engram.model.prompt_context import PromptContext
from engram.model.queries import QueryConfig, QueryResponse
from engram.model.search import SearchResponse
from engram.model.signals import Signal
from engram.model.steps import ConsolidationRun
from engram.model.usage import UsageReport

T = TypeVar("T")
DEFAULT_URL = "http://127.0.0.1:8000"
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
_FINISHED = frozenset({"completed", "failed"})


class ApiError(Exception):
    """The API answered with an error. `status`, `code`, `message` and `details` come from its JSON body."""

    def __init__(self, status: int, code: str, message: str, details: Any = None) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.details = details


class BadRequest(ApiError):
    """400, 413 or 422: the request was refused as it stands; nothing was changed."""


class Unauthorized(ApiError):
    """401 or 403: a missing or unknown token, or a world the caller may not touch."""


class NotFound(ApiError):
    """404."""


class Conflict(ApiError):
    """409: refused against what is stored (an event_id sent again with other content); nothing was changed."""


class RateLimited(ApiError):
    """429 after every retry."""


class ServerError(ApiError):
    """5xx after every retry."""


class Unreachable(ApiError):
    """No answer at all (connection refused, timed out) after every retry."""


def _error(response: httpx.Response) -> ApiError:
    try:
        body = response.json().get("error", {})
    except (ValueError, AttributeError):
        body = {}
    status = response.status_code
    code, message = str(body.get("code", f"http_{status}")), str(body.get("message", response.text[:300]))
    kind: type[ApiError] = (
        BadRequest if status in (400, 413, 422) else Unauthorized if status in (401, 403) else
        NotFound if status == 404 else Conflict if status == 409 else RateLimited if status == 429 else
        ServerError if status >= 500 else ApiError)
    return kind(status, code, message, body.get("details"))


@dataclass(frozen=True)
class Call(Generic[T]):
    """One API request and how to read its answer."""

    method: str
    path: str
    parse: Callable[[Any], T]
    params: Mapping[str, Any] = field(default_factory=dict)
    json: Any = None
    content: bytes | None = None  # a body that is not JSON (an import's JSON Lines), typed by `headers`
    headers: Mapping[str, str] = field(default_factory=dict)
    raw: bool = False  # `parse` reads the response itself (an export page: its text and a header), not its JSON


@dataclass(frozen=True)
class ExportedPage:
    """One page of an export document (JSON Lines) and the cursor that fetches the next, None on the last."""

    text: str
    next_cursor: str | None


def _model(model: type[BaseModel] | Any) -> Callable[[Any], Any]:
    adapter: TypeAdapter[Any] = TypeAdapter(model)
    return adapter.validate_python


def _time(moment: datetime | None) -> str | None:
    """A time as the API reads it: ISO 8601 (one without an offset is UTC)."""
    return moment.isoformat() if moment is not None else None


def _params(**values: Any) -> dict[str, Any]:
    return {k: v for k, v in values.items() if v is not None}


class Routes:
    """The API's routes as `Call`s: one place for paths, parameters and answer types."""

    @staticmethod
    def add_events(world: str, events: Sequence[EventIn | Mapping[str, Any]], *, wait: bool = False,
                   wait_timeout_s: float | None = None) -> Call[IngestResponse]:
        batch = []
        for event in events:
            body = event.model_dump(mode="json", exclude_none=True) if isinstance(event, EventIn) else dict(event)
            body.setdefault("event_id", f"evt_{uuid.uuid4().hex}")  # makes a retried batch idempotent
            batch.append(body)
        params = _params(wait="true", wait_timeout_s=wait_timeout_s) if wait else {}
        return Call("POST", f"/v1/worlds/{world}/events", _model(IngestResponse), params=params,
                    json={"events": batch})

    @staticmethod
    def get_event(world: str, event_id: str) -> Call[StoredEvent]:
        return Call("GET", f"/v1/worlds/{world}/events/{event_id}", _model(StoredEvent))

    @staticmethod
    def ask(world: str, user_id: str, question: str, *, conversation_id: str | None, config: QueryConfig | None,
            mode: str = "sync", as_of: datetime | None = None) -> Call[Any]:
        body = {"user_id": user_id, "question": question, "mode": mode, **_params(conversation_id=conversation_id)}
        if as_of is not None:  # the answer as memory stood then: the config carries it
            config = (config or QueryConfig()).model_copy(update={"as_of": as_of})
        if config is not None:
            body["config"] = config.model_dump(mode="json")
        parse = _model(QueryResponse) if mode == "sync" else (lambda doc: str(doc["query_id"]))
        return Call("POST", f"/v1/worlds/{world}/queries", parse, json=body)

    @staticmethod
    def get_query(world: str, query_id: str) -> Call[QueryResponse]:
        return Call("GET", f"/v1/worlds/{world}/queries/{query_id}", _model(QueryResponse))

    @staticmethod
    def search(world: str, q: str, *, user_id: str | None, limit: int,
               as_of: datetime | None = None) -> Call[SearchResponse]:
        return Call("GET", f"/v1/worlds/{world}/search", _model(SearchResponse),
                    params=_params(q=q, user_id=user_id, limit=limit, as_of=_time(as_of)))

    @staticmethod
    def entities(world: str, *, name: str | None, limit: int) -> Call[list[CanonicalEntity]]:
        return Call("GET", f"/v1/worlds/{world}/entities", _model(list[CanonicalEntity]),
                    params=_params(name=name, limit=limit))

    @staticmethod
    def entity(world: str, entity_id: str, *, user_id: str | None = None) -> Call[EntityDetail]:
        return Call("GET", f"/v1/worlds/{world}/entities/{entity_id}", _model(EntityDetail),
                    params=_params(user_id=user_id))

    @staticmethod
    def relationships(world: str, entity_id: str, *, depth: int, user_id: str | None = None
                      ) -> Call[list[Relationship]]:
        return Call("GET", f"/v1/worlds/{world}/entities/{entity_id}/relationships", _model(list[Relationship]),
                    params=_params(depth=depth, user_id=user_id))

    @staticmethod
    def memories(world: str, user_id: str, *, layer: str, limit: int,
                 as_of: datetime | None = None) -> Call[list[LayerMemory]]:
        model = LAYER_MODELS.get(layer, LayerMemory)  # an unknown layer: the API says 422
        return Call("GET", f"/v1/worlds/{world}/users/{user_id}/memories", _model(list[model]),  # type: ignore[valid-type]
                    params=_params(layer=layer, limit=limit, as_of=_time(as_of)))

    @staticmethod
    def context(world: str, user_id: str, q: str, *, conversation_id: str | None,
                max_tokens: int | None) -> Call[PromptContext]:
        return Call("GET", f"/v1/worlds/{world}/users/{user_id}/context", _model(PromptContext),
                    params=_params(q=q, conversation_id=conversation_id, max_tokens=max_tokens))

    @staticmethod
    def conflicts(world: str, *, status: str | None) -> Call[list[ConflictDetail]]:
        return Call("GET", f"/v1/worlds/{world}/conflicts", _model(list[ConflictDetail]), params=_params(status=status))

    @staticmethod
    def resolve_conflict(world: str, conflict_id: str, body: dict[str, Any]) -> Call[ConflictDetail]:
        return Call("POST", f"/v1/worlds/{world}/conflicts/{conflict_id}/resolution", _model(ConflictDetail),
                    json=body)

    @staticmethod
    def erase_user(world: str, user_id: str) -> Call[Erasure]:
        return Call("DELETE", f"/v1/worlds/{world}/users/{user_id}", _model(Erasure))

    @staticmethod
    def enrich_pending(world: str, *, include_failed: bool) -> Call[SweepResult]:
        return Call("POST", f"/v1/worlds/{world}/enrichments", _model(SweepResult),
                    json={"include_failed": include_failed})

    @staticmethod
    def worlds() -> Call[list[WorldSummary]]:
        return Call("GET", "/v1/worlds", _model(list[WorldSummary]))

    @staticmethod
    def health() -> Call[dict[str, Any]]:
        return Call("GET", "/v1/health", _model(dict[str, Any]))

    @staticmethod
    def correct_memory(world: str, memory_id: str, body: dict[str, Any]) -> Call[ExplainedFact]:
        return Call("PATCH", f"/v1/worlds/{world}/memories/{memory_id}", _model(ExplainedFact), json=body)

    @staticmethod
    def delete_memory(world: str, memory_id: str, *, note: str | None) -> Call[MemoryDeletion]:
        return Call("DELETE", f"/v1/worlds/{world}/memories/{memory_id}", _model(MemoryDeletion),
                    params=_params(note=note))

    @staticmethod
    def memory_history(world: str, memory_id: str) -> Call[FactHistory]:
        return Call("GET", f"/v1/worlds/{world}/memories/{memory_id}/history", _model(FactHistory))

    @staticmethod
    def usage(world: str, days: int) -> Call[UsageReport]:
        return Call("GET", f"/v1/worlds/{world}/usage", _model(UsageReport), params=_params(days=days))

    @staticmethod
    def memory_audit(world: str, memory_id: str) -> Call[list[MemoryAudit]]:
        return Call("GET", f"/v1/worlds/{world}/memories/{memory_id}/audit", _model(list[MemoryAudit]))

    @staticmethod
    def start_consolidation(world: str) -> Call[str]:
        return Call("POST", f"/v1/worlds/{world}/consolidations", lambda doc: str(doc["execution_id"]), json={})

    @staticmethod
    def consolidation(world: str, execution_id: str) -> Call[ConsolidationRun]:
        return Call("GET", f"/v1/worlds/{world}/consolidations/{quote(execution_id, safe='')}",
                    _model(ConsolidationRun))

    @staticmethod
    def export_page(world: str, *, user_id: str | None, vectors: bool, max_bytes: int | None,
                    cursor: str | None) -> Call[ExportedPage]:
        path = f"/v1/worlds/{world}" + (f"/users/{user_id}" if user_id else "") + "/export"
        return Call("GET", path, lambda r: ExportedPage(r.text, r.headers.get("x-engram-next-cursor") or None),
                    params=_params(vectors=str(vectors).lower(), max_bytes=max_bytes, cursor=cursor), raw=True)

    @staticmethod
    def import_document(world: str, text: str) -> Call[ImportResult]:
        return Call("POST", f"/v1/worlds/{world}/import", _model(ImportResult), content=text.encode(),
                    headers={"content-type": "application/x-ndjson"})

    @staticmethod
    def signals(world: str, conversation_id: str, *, signal_type: str | None, include_dismissed: bool,
                q: str | None, limit: int) -> Call[list[Signal]]:
        params = _params(type=signal_type, q=q, limit=limit, include_dismissed="true" if include_dismissed else None)
        return Call("GET", f"/v1/worlds/{world}/conversations/{conversation_id}/signals", _model(list[Signal]),
                    params=params)

    @staticmethod
    def dismiss_signal(world: str, signal_id: str) -> Call[Signal]:
        return Call("POST", f"/v1/worlds/{world}/signals/{signal_id}/dismissal", _model(Signal))
