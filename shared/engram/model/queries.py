"""The query loop's models: WorldQuery, its config, the context the model sees, and its outcomes."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import Field

from engram.model.common import Frozen, Identifier, Record

QueryStatus = Literal["pending", "processing", "completed", "failed"]
Capability = Literal[
    "get_entity_details",
    "get_relationships",
    "search_memories",
    "get_conversation_history",
    "get_entity_timeline",
    "find_path",
]


class QueryConfig(Frozen):
    max_info_requests: int = Field(default=3, ge=0, le=5)
    max_initial_entities: int = Field(default=10, ge=1, le=50)
    include_relationships: bool = True
    temperature: float = Field(default=0.2, ge=0.0, le=1.0)


class QueryRequest(Frozen):
    user_id: Identifier
    question: str = Field(min_length=1, max_length=4_000)
    conversation_id: Identifier | None = None
    config: QueryConfig = Field(default_factory=QueryConfig)
    mode: Literal["sync", "async"] = "sync"


SourceKind = Literal["event", "episodic", "semantic", "summary", "procedural", "entity"]


class Source(Frozen):
    kind: SourceKind
    id: str
    excerpt: str
    score: float | None = None


class Answer(Frozen):
    content: str
    confidence: float = Field(ge=0.0, le=1.0)
    sources: list[Source] = Field(default_factory=list)
    suggested_follow_ups: list[str] = Field(default_factory=list)
    forced: bool = False  # True when the loop ran out of info requests and had to answer


class InfoRequest(Frozen):
    capability: Capability
    params: dict[str, Any] = Field(default_factory=dict)
    reason: str = ""


class NeedsMoreInfo(Frozen):
    info_requests: list[InfoRequest] = Field(min_length=1, max_length=5)
    reason: str = ""


class TraceStep(Frozen):
    iteration: int
    step: Literal["init", "ask", "fulfil", "force", "finish"]
    outcome: str
    detail: dict[str, Any] = Field(default_factory=dict)
    elapsed_ms: float = 0.0


class ContextItem(Frozen):
    """One piece of evidence in a query context; `id` is what an answer cites."""

    kind: Literal["event", "episodic", "semantic", "summary", "procedural", "entity", "relationship"]
    id: str
    text: str
    score: float = 0.0
    entity_ids: list[str] = Field(default_factory=list)
    occurred_at: datetime | None = None


class WorldQuery(Record):
    world_id: str
    query_id: str
    user_id: str
    question: str
    conversation_id: str | None = None
    config: QueryConfig = Field(default_factory=QueryConfig)
    status: QueryStatus = "pending"
    info_requests_used: int = 0
    answer: Answer | None = None
    trace: list[TraceStep] = Field(default_factory=list)
    model: str | None = None
    model_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    error: str | None = None
    created_at: datetime
    completed_at: datetime | None = None

    @property
    def remaining_info_requests(self) -> int:
        return max(0, self.config.max_info_requests - self.info_requests_used)

    @property
    def can_request_more_info(self) -> bool:
        return self.remaining_info_requests > 0


class QueryResponse(Frozen):
    query_id: str
    status: QueryStatus
    answer: Answer | None
    iterations: int
    info_requests_used: int
    model: str | None
    trace: list[TraceStep]


class QueryAccepted(Frozen):
    """The answer to an async query: read the query by id until it completes or fails."""

    query_id: str
    status: QueryStatus
