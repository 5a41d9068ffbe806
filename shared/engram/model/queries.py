"""The query loop's models: WorldQuery, its config, the context the model sees, and its outcomes."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import Field, field_validator

from engram.model.common import Frozen, Identifier, Record, as_utc
from engram.model.requests import InfoRequest
from engram.model.research import ResearchReport
from engram.model.signals import SignalType

QueryStatus = Literal["pending", "processing", "completed", "failed"]
QueryMode = Literal["answer", "research"]  # the NeedsMoreInfo loop, or plan, gather, evaluate and synthesize
ConfidenceLevel = Literal["high", "medium", "low"]


class QueryConfig(Frozen):
    max_info_requests: int = Field(default=3, ge=0, le=5)
    max_initial_entities: int = Field(default=10, ge=1, le=50)
    include_relationships: bool = True
    temperature: float = Field(default=0.7, ge=0.0, le=1.0)  # the Resonance default config's
    max_research_iterations: int = Field(default=2, ge=0, le=4, description=(
        "research mode: gathering rounds in all, the plan's included (the first always runs)"))
    as_of: datetime | None = Field(default=None, description=(
        "answer with what memory held true at this time (ISO 8601, UTC without an offset): the facts valid then "
        "(superseded since or not) and only what had happened by then"))

    @field_validator("as_of")
    @classmethod
    def _utc(cls, value: datetime | None) -> datetime | None:
        return as_utc(value)


class QueryRequest(Frozen):
    user_id: Identifier
    question: str = Field(min_length=1, max_length=4_000)
    conversation_id: Identifier | None = None
    config: QueryConfig = Field(default_factory=QueryConfig)
    mode: Literal["sync", "async", "research"] = Field(default="sync", description=(
        "sync: answer now; async: 202 and the query id; research: 202 and the query id of a research run "
        "(plan, gather, evaluate, synthesize), read back with GET .../queries/{id}"))


SourceKind = Literal["event", "episodic", "semantic", "summary", "procedural", "entity"]


class Source(Frozen):
    kind: SourceKind
    id: str
    excerpt: str
    score: float | None = None  # the item's retrieval score
    contribution: float | None = Field(default=None, ge=0.0, le=1.0,
                                       description="the share of the answer resting on this item (sources sum to 1)")


class Answer(Frozen):
    content: str
    confidence: float = Field(ge=0.0, le=1.0)
    confidence_level: ConfidenceLevel | None = None  # set by the loop from the world's thresholds
    sources: list[Source] = Field(default_factory=list)
    suggested_follow_ups: list[str] = Field(default_factory=list)
    forced: bool = False  # True when the loop ran out of info requests (or a request was invalid) and had to answer
    # retrieval: the model stayed unavailable, no model wrote this; offline: the offline engine wrote it (`reason`)
    basis: Literal["model", "retrieval", "offline"] = "model"
    reason: Literal["budget"] | None = None  # why not the model: the world's daily model budget is spent


class NeedsMoreInfo(Frozen):
    info_requests: list[InfoRequest] = Field(min_length=1, max_length=5)
    reason: str = ""


class EntityDefinition(Frozen):
    """A kind of entity the world holds (its `entity_type`), how many, and the domain ontology's description."""

    definition: str
    entities: int
    description: str | None = None


class QuestionSignal(Frozen):
    """A signal the question itself carries (a goal, a constraint...), read by the same model call as the answer."""

    signal_type: SignalType
    content: str = Field(min_length=1, max_length=500)
    confidence: float = Field(default=0.7, ge=0.0, le=1.0)


class TraceStep(Frozen):
    iteration: int
    step: Literal["init", "ask", "fulfil", "force", "fallback", "finish", "plan", "gather", "evaluate", "synthesize"]
    outcome: str
    detail: dict[str, Any] = Field(default_factory=dict)
    elapsed_ms: float = 0.0
    model_ms: float = 0.0  # the part of elapsed_ms spent waiting on the model


class QueryTimings(Frozen):
    """Where a query's time went: all of it, the model's share and the loop's own (everything else)."""

    total_ms: float
    model_ms: float
    loop_ms: float
    steps: int


class ContextItem(Frozen):
    """One piece of evidence in a query context; `id` is what an answer cites. An entity item is either a
    summary (name, type, what the record holds: `full` False) or the full record (`full` True)."""

    kind: Literal["event", "episodic", "semantic", "summary", "procedural", "entity", "relationship"]
    id: str
    text: str
    score: float = 0.0
    entity_ids: list[str] = Field(default_factory=list)
    occurred_at: datetime | None = None
    full: bool = True
    name: str | None = None  # an entity item's name
    # A fact item's parts, for a reader that answers with the value asked for (None on other items).
    subject: str | None = None  # the subject entity's name
    predicate: str | None = None
    object: str | None = None
    valid_from: datetime | None = None
    valid_to: datetime | None = None  # set once a newer value closed it
    status: Literal["active", "superseded", "archived"] | None = None
    # An event item's turn before it in its conversation, said by someone else ("Melanie: What made you pick it?"),
    # its end only: a reply ("Seven years now.") says what it answers only with it.
    replying_to: str | None = None


class WorldQuery(Record):
    world_id: str
    query_id: str
    user_id: str
    question: str
    conversation_id: str | None = None
    config: QueryConfig = Field(default_factory=QueryConfig)
    mode: QueryMode = "answer"
    research: ResearchReport | None = None  # research mode: the plan, its progress, budgets and conflicts
    status: QueryStatus = "pending"
    info_requests_used: int = 0
    answer: Answer | None = None
    trace: list[TraceStep] = Field(default_factory=list)
    model: str | None = None
    model_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    signals: list[QuestionSignal] = Field(default_factory=list)  # the question's own, from the first ask
    error: str | None = None
    created_at: datetime
    completed_at: datetime | None = None

    @property
    def remaining_info_requests(self) -> int:
        return max(0, self.config.max_info_requests - self.info_requests_used)

    @property
    def can_request_more_info(self) -> bool:
        return self.remaining_info_requests > 0

    @property
    def timings(self) -> QueryTimings:
        total = sum(t.elapsed_ms for t in self.trace)
        model = sum(t.model_ms for t in self.trace)
        return QueryTimings(total_ms=round(total, 2), model_ms=round(model, 2), loop_ms=round(total - model, 2),
                            steps=len(self.trace))


class QueryResponse(Frozen):
    """A query as the API shows it: the answer, the loop trace and the query's lifecycle."""

    query_id: str
    status: QueryStatus
    answer: Answer | None
    iterations: int
    info_requests_used: int
    model: str | None
    trace: list[TraceStep]
    user_id: str | None = None
    question: str | None = None
    conversation_id: str | None = None
    config: QueryConfig | None = None
    mode: QueryMode = "answer"
    research: ResearchReport | None = None
    remaining_info_requests: int | None = None
    model_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    timings: QueryTimings | None = None
    signals: list[QuestionSignal] = Field(default_factory=list)
    error: str | None = None
    created_at: datetime | None = None
    completed_at: datetime | None = None


class QueryAccepted(Frozen):
    """The answer to an async query: read the query by id until it completes or fails."""

    query_id: str
    status: QueryStatus
