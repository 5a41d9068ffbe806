"""Model spend: the usage ledger port (tokens and calls by world, day and stage) and `MeteredLLM`, the model as one
world may use it today: every call counted, and once the world's daily token budget is spent, the offline engine in
the model's place, its replies saying so (`LLMReply.fallback == "budget"`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, date, datetime
from typing import Any, Protocol, TypeVar

from engram.config import Stage
from engram.errors import EngramError
from engram.model.context import QueryContext
from engram.model.entities import EntitySighting
from engram.model.heuristics import Heuristics
from engram.model.insights import InflectionAssessment
from engram.model.memories import OntologyPredicate
from engram.model.queries import Answer, NeedsMoreInfo
from engram.model.research import EvidenceConflict, ResearchEvaluation, ResearchPlan, SubQuestion
from engram.model.signals import Signal
from engram.model.usage import StageUsage
from engram.observability import logger, metrics
from engram.ports.llm import (
    LLM,
    ConflictCheck,
    ContextDigest,
    ExtractionResult,
    KnownFact,
    LLMReply,
    Reference,
    Usage,
    WindowEvent,
    WrittenSummary,
)

# The stage each port method belongs to: a stage has its own model (ENGRAM_MODEL_<STAGE>) and its own ledger rows.
STAGE_OF: dict[str, Stage] = {
    "extract": "extract", "answer": "answer", "force_answer": "answer", "summarize": "summarize",
    "find_conflicts": "summarize", "detect_inflection": "summarize", "plan_research": "research",
    "evaluate_research": "research", "synthesize": "research",
    "digest": "summarize",  # the research context's compaction digest: condensing, on the cheap model
}
BUDGET = "budget"  # the fallback's reason: the world's daily token budget is spent


class UsageLedger(Protocol):
    def record_usage(self, world_id: str, day: date, stage: Stage, usage: Usage) -> None:
        """Add one call's tokens and requests to the world's row for `day` and `stage`."""
        ...
    def tokens_used(self, world_id: str, day: date) -> int:
        """The world's tokens (in and out, every stage) on `day`."""
        ...
    def usage_since(self, world_id: str, first_day: date) -> list[StageUsage]:
        """The world's rows from `first_day` on, by day then stage."""
        ...


R = TypeVar("R")


class MeteredLLM:
    """`llm` for one world: a budget check before each call (`daily_tokens` None: none), the call's usage recorded
    after it, and `offline` answering in the model's place once the day's budget is spent."""

    def __init__(self, llm: LLM, offline: LLM, ledger: UsageLedger, world_id: str, daily_tokens: int | None, *,
                 today: Callable[[], date] = lambda: datetime.now(UTC).date()) -> None:
        self.llm, self.offline, self.ledger = llm, offline, ledger
        self.world_id, self.daily_tokens, self.today = world_id, daily_tokens, today
        self.name = llm.name

    def _run(self, method: str, call: Callable[[LLM], LLMReply[R]]) -> LLMReply[R]:
        stage, day = STAGE_OF[method], self.today()
        if self.daily_tokens is not None and self.ledger.tokens_used(self.world_id, day) >= self.daily_tokens:
            metrics.add_metric(name=f"LLMBudgetFallback_{stage}", unit="Count", value=1)
            logger.info("daily model budget spent: the offline engine answers",
                        extra={"world_id": self.world_id, "stage": stage, "daily_tokens": self.daily_tokens})
            reply = call(self.offline)
            return LLMReply(reply.value, reply.usage, reply.model, reply.signals, BUDGET)
        try:
            reply = call(self.llm)
        except EngramError as exc:  # a rejected output was still paid for: its tokens ride on the error
            if isinstance(exc.details, dict) and exc.details.get("calls"):
                self._record(day, stage, _spent(exc.details))
            raise
        self._record(day, stage, reply.usage)
        return reply

    def _record(self, day: date, stage: Stage, usage: Usage) -> None:
        if not usage.calls:  # the offline engine: nothing spent
            return
        self.ledger.record_usage(self.world_id, day, stage, usage)
        metrics.add_metric(name=f"LLMTokens_{stage}", unit="Count", value=usage.sent_tokens + usage.output_tokens)
        metrics.add_metric(name=f"LLMCalls_{stage}", unit="Count", value=usage.calls)

    def extract(self, events: Sequence[WindowEvent], known_entities: Sequence[str], *,
                references: Sequence[Reference] = (), candidates: Sequence[EntitySighting] = (),
                predicates: Sequence[OntologyPredicate] = ()) -> LLMReply[ExtractionResult]:
        return self._run("extract", lambda m: m.extract(events, known_entities, references=references,
                                                        candidates=candidates, predicates=predicates))

    def answer(self, context: QueryContext, *, can_request_more: bool, remaining_info_requests: int,
               temperature: float) -> LLMReply[Answer | NeedsMoreInfo]:
        return self._run("answer", lambda m: m.answer(context, can_request_more=can_request_more,
                                                      remaining_info_requests=remaining_info_requests,
                                                      temperature=temperature))

    def force_answer(self, context: QueryContext, *, temperature: float) -> LLMReply[Answer]:
        return self._run("force_answer", lambda m: m.force_answer(context, temperature=temperature))

    def summarize(self, scope: str, items: Sequence[str],
                  facts: Sequence[KnownFact] = ()) -> LLMReply[WrittenSummary]:
        return self._run("summarize", lambda m: m.summarize(scope, items, facts))

    def find_conflicts(self, new_facts: Sequence[KnownFact], known_facts: Sequence[KnownFact]) -> LLMReply[ConflictCheck]:
        return self._run("find_conflicts", lambda m: m.find_conflicts(new_facts, known_facts))

    def detect_inflection(self, messages: Sequence[WindowEvent], signals: Sequence[Signal], *,
                          h: Heuristics) -> LLMReply[InflectionAssessment]:
        return self._run("detect_inflection", lambda m: m.detect_inflection(messages, signals, h=h))

    def plan_research(self, context: QueryContext, *, max_sub_questions: int) -> LLMReply[ResearchPlan]:
        return self._run("plan_research", lambda m: m.plan_research(context, max_sub_questions=max_sub_questions))

    def evaluate_research(self, context: QueryContext, sub_questions: Sequence[SubQuestion], *,
                          can_continue: bool, max_follow_ups: int) -> LLMReply[ResearchEvaluation]:
        return self._run("evaluate_research", lambda m: m.evaluate_research(
            context, sub_questions, can_continue=can_continue, max_follow_ups=max_follow_ups))

    def synthesize(self, context: QueryContext, sub_questions: Sequence[SubQuestion],
                   conflicts: Sequence[EvidenceConflict], *, temperature: float) -> LLMReply[Answer]:
        return self._run("synthesize", lambda m: m.synthesize(context, sub_questions, conflicts,
                                                              temperature=temperature))

    def digest(self, context: QueryContext, *, keep_lines: int) -> LLMReply[ContextDigest]:
        return self._run("digest", lambda m: m.digest(context, keep_lines=keep_lines))


def _spent(details: dict[str, Any]) -> Usage:
    return Usage(int(details.get("input_tokens", 0)), int(details.get("output_tokens", 0)), int(details["calls"]),
                 int(details.get("cache_read_tokens", 0)), int(details.get("cache_write_tokens", 0)))
