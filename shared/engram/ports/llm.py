"""The model port: task-shaped calls (extraction, coreference, summaries, conflicts, answers, research) and the
values they exchange. Re-exported by `engram.ports`."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Generic, Literal, Protocol, TypeVar

from pydantic import BaseModel, Field, field_validator

from engram.model.context import QueryContext
from engram.model.entities import (
    EntitySighting,
)
from engram.model.heuristics import Heuristics
from engram.model.insights import InflectionAssessment
from engram.model.memories import (
    OntologyPredicate,
)
from engram.model.queries import Answer, NeedsMoreInfo, QuestionSignal
from engram.model.research import EvidenceConflict, ResearchEvaluation, ResearchPlan, SubQuestion
from engram.model.signals import Signal


@dataclass(frozen=True)
class Usage:
    input_tokens: int = 0  # input tokens outside the provider's prompt cache
    output_tokens: int = 0
    calls: int = 0
    cache_read_tokens: int = 0  # input tokens read from the prompt cache (billed at a tenth)
    cache_write_tokens: int = 0  # input tokens written to it

    @property
    def sent_tokens(self) -> int:
        """Every input token sent, cached or not."""
        return self.input_tokens + self.cache_read_tokens + self.cache_write_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(self.input_tokens + other.input_tokens, self.output_tokens + other.output_tokens,
                     self.calls + other.calls, self.cache_read_tokens + other.cache_read_tokens,
                     self.cache_write_tokens + other.cache_write_tokens)


class ExtractedTriple(BaseModel):
    subject: str = Field(min_length=1, max_length=200)
    predicate: str = Field(min_length=1, max_length=80)
    object: str = Field(min_length=1, max_length=500)
    object_is_entity: bool = False
    confidence: float = Field(default=0.8, ge=0.0, le=1.0)
    event_id: str
    valid_from: datetime | None = None  # when it became true: relative dates resolved against the message's time
    # The entity types the reader saw (person, organization, place, date, thing); None: not read.
    subject_type: str | None = Field(default=None, max_length=40)
    object_type: str | None = Field(default=None, max_length=40)
    # Said not to hold ("I no longer live in Lisbon", "Porto, not Lisbon"): it ends a fact, never states one.
    negated: bool = False

    @field_validator("predicate")
    @classmethod
    def _snake_case(cls, value: str) -> str:
        """"livesIn", "lives in" and "lives_in" are one predicate."""
        snake = re.sub(r"[^a-z0-9]+", "_", re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", value).lower()).strip("_")
        if not snake:
            raise ValueError("a predicate needs a letter or digit")
        return snake


class KnownFact(BaseModel):
    """A fact shown to the model for a cross-predicate conflict check."""

    memory_id: str
    subject: str  # the subject entity's name
    predicate: str
    object: str

    def statement(self) -> str:
        return f"{self.subject} {self.predicate.replace('_', ' ')} {self.object}"


class WrittenSummary(BaseModel):
    """A summary and the facts offered to it that it states as true (those are confirmed)."""

    summary: str = Field(min_length=1)
    confirmed_fact_ids: list[str] = Field(default_factory=list,
                                          description="ids of the facts given that the summary states as true")


class ConflictingFacts(BaseModel):
    memory_id: str  # a new fact
    conflicting_memory_id: str  # a known fact (or another new one) it cannot be true together with
    reason: str = Field(default="", max_length=500)


class ConflictCheck(BaseModel):
    conflicts: list[ConflictingFacts] = []


class Coreference(BaseModel):
    """A reference (pronoun or description) linked to one of the candidate entities it was offered."""

    reference_id: str
    entity_id: str
    confidence: float = Field(ge=0.0, le=1.0)


class ExtractionResult(BaseModel):
    triples: list[ExtractedTriple] = []
    coreferences: list[Coreference] = []


class DigestedItem(BaseModel):
    """A context item's text as the digest condensed it, named by its kind and id."""

    kind: str
    id: str
    text: str


class ContextDigest(BaseModel):
    """The research context compacted (seed 003, Context Thinning: "80k tokens: LLM compaction digest"): the
    conversation digested into a few lines, and shorter texts for the items it condensed (the others unchanged)."""

    conversation: list[str] = Field(default_factory=list, description="the conversation digested, oldest first")
    items: list[DigestedItem] = Field(default_factory=list, description="condensed texts of items, by kind and id")


class Reference(BaseModel):
    """A pronoun or description of a message that only the conversation can resolve."""

    reference_id: str  # "<event_id>@<start>"
    event_id: str
    text: str
    kind: Literal["pronoun", "description"]
    start: int
    speaker_entity_id: str | None = None  # whose "my" it is; never the referent of "she" or "they"


class WindowEvent(BaseModel):
    event_id: str
    role: str
    content: str
    occurred_at: datetime
    speaker: str | None = None  # the user's display name or id, for "I" and "my"


T = TypeVar("T")


@dataclass(frozen=True)
class LLMReply(Generic[T]):
    value: T
    usage: Usage = field(default_factory=Usage)
    model: str = ""
    signals: tuple[QuestionSignal, ...] = ()  # an answer call's reading of the question's own signals
    fallback: str | None = None  # why the offline engine answered in the model's place ("budget"); None: it did not


class LLM(Protocol):
    """Task-shaped model calls. Adapters for Anthropic send each as a forced tool with a pydantic
    schema and validate the reply; the offline model answers by rules and says so in `name`."""

    name: str

    def extract(self, events: Sequence[WindowEvent], known_entities: Sequence[str], *,
                references: Sequence[Reference] = (), candidates: Sequence[EntitySighting] = (),
                predicates: Sequence[OntologyPredicate] = ()) -> LLMReply[ExtractionResult]:
        """Facts of a window and, in the same call, the entity each reference points at (only among
        `candidates`, the conversation's recent entities). `predicates` are the world's ontology: a fact
        is recorded under one of them where one fits."""
        ...
    def answer(
        self, context: QueryContext, *, can_request_more: bool, remaining_info_requests: int,
        temperature: float,
    ) -> LLMReply[Answer | NeedsMoreInfo]: ...
    def force_answer(self, context: QueryContext, *, temperature: float) -> LLMReply[Answer]: ...
    def summarize(self, scope: str, items: Sequence[str],
                  facts: Sequence[KnownFact] = ()) -> LLMReply[WrittenSummary]:
        """A scope's summary from its facts and other material (`items`), with the ids of the facts it confirms
        (only among `facts`)."""
        ...
    def find_conflicts(self, new_facts: Sequence[KnownFact], known_facts: Sequence[KnownFact]) -> LLMReply[ConflictCheck]:
        """Pairs of facts about the same subjects that cannot both be true although their predicates differ
        ("prefers email" and "hates electronic communication"); each pair has a new fact first."""
        ...
    def detect_inflection(self, messages: Sequence[WindowEvent], signals: Sequence[Signal], *,
                          h: Heuristics) -> LLMReply[InflectionAssessment]:
        """Whether a conversation's last messages are at an inflection point, on the fast model; `signals`
        are the conversation's so far, the ones the reading may rest on. The offline model reads by `h`."""
        ...
    def plan_research(self, context: QueryContext, *, max_sub_questions: int) -> LLMReply[ResearchPlan]:
        """Break the question into sub-questions, each with the capability requests that should answer it
        (ids only from `context`), on the fast model."""
        ...
    def evaluate_research(self, context: QueryContext, sub_questions: Sequence[SubQuestion], *,
                          can_continue: bool, max_follow_ups: int) -> LLMReply[ResearchEvaluation]:
        """The completeness check: which sub-questions the context answers and, when `can_continue`, the
        follow-up sub-questions to gather next, on the fast model."""
        ...
    def synthesize(self, context: QueryContext, sub_questions: Sequence[SubQuestion],
                   conflicts: Sequence[EvidenceConflict], *, temperature: float) -> LLMReply[Answer]:
        """The research answer: cites the context items it rests on and names each of `conflicts`."""
        ...
    def digest(self, context: QueryContext, *, keep_lines: int) -> LLMReply[ContextDigest]:
        """The research context's compaction digest, past `research_compact_tokens` (80k): the conversation in at
        most `keep_lines` lines, the items' texts condensed (ids kept), on the cheap model (the summarize stage)."""
        ...
