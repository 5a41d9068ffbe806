"""An LLM fake that answers from a script: for tests that need the query loop to take a given path
(answer at once, ask for more, keep asking until forced) or a model that is down."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from engram.adapters.offline.llm import OfflineLLM
from engram.errors import LLMUnavailable
from engram.model.context import QueryContext
from engram.model.entities import EntitySighting
from engram.model.heuristics import Heuristics
from engram.model.insights import InflectionAssessment
from engram.model.memories import OntologyPredicate
from engram.model.queries import Answer, NeedsMoreInfo
from engram.model.research import EvidenceConflict, ResearchEvaluation, ResearchPlan, SubQuestion
from engram.model.signals import Signal
from engram.ports import (
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

NAME = "scripted"
_USAGE = Usage(input_tokens=120, output_tokens=30, calls=1)


@dataclass(frozen=True)
class LLMCall:
    """One call the model received: the method and what it was given."""

    method: str
    args: dict[str, Any] = field(default_factory=dict)


class ScriptedLLM:
    """`answer` replies with the script in order, the last reply repeating once the script runs out;
    `force_answer` replies with `forced`; `detect_inflection` with `inflection` when given. Extraction,
    summaries and (without `inflection`) inflections are the offline model's. Methods
    named in `unavailable` raise LLMUnavailable, as a provider that is down does; so does `summarize` for
    the scopes named in `failing_summaries`."""

    name = NAME

    def __init__(self, script: Sequence[Answer | NeedsMoreInfo] = (), *,
                 forced: Answer | None = None, unavailable: Sequence[str] = (),
                 inflection: InflectionAssessment | None = None, failing_summaries: Sequence[str] = (),
                 plan: ResearchPlan | None = None, evaluations: Sequence[ResearchEvaluation] = (),
                 synthesis: Answer | None = None, digested: ContextDigest | None = None) -> None:
        self.script = list(script)
        self.plan = plan  # research: the plan, the evaluations in order (the last repeating), the synthesis
        self.evaluations = list(evaluations)
        self.synthesis = synthesis
        self.digested = digested  # the compaction digest's reply; None: the offline model's rules
        self.failing_summaries = set(failing_summaries)
        self.forced = forced or Answer(content="Forced: this is all memory holds.", confidence=0.3)
        self.unavailable = set(unavailable)
        self.inflection = inflection
        self.calls: list[LLMCall] = []
        self._offline = OfflineLLM()

    def calls_to(self, method: str) -> list[LLMCall]:
        return [c for c in self.calls if c.method == method]

    def _record(self, method: str, **args: Any) -> None:
        self.calls.append(LLMCall(method, args))
        if method in self.unavailable:
            raise LLMUnavailable(f"{method}: the model provider is overloaded (scripted)")

    def extract(self, events: Sequence[WindowEvent], known_entities: Sequence[str], *,
                references: Sequence[Reference] = (), candidates: Sequence[EntitySighting] = (),
                predicates: Sequence[OntologyPredicate] = ()) -> LLMReply[ExtractionResult]:
        self._record("extract", event_ids=[e.event_id for e in events], known_entities=list(known_entities),
                     references=[r.reference_id for r in references], predicates=[p.concept for p in predicates])
        return self._offline.extract(events, known_entities, references=references, candidates=candidates,
                                     predicates=predicates)

    def answer(self, context: QueryContext, *, can_request_more: bool, remaining_info_requests: int,
               temperature: float) -> LLMReply[Answer | NeedsMoreInfo]:
        self._record("answer", question=context.question, items=len(context.items),
                     can_request_more=can_request_more, remaining_info_requests=remaining_info_requests)
        turn = len(self.calls_to("answer")) - 1
        if not self.script:
            raise AssertionError("ScriptedLLM.answer was called with an empty script")
        return LLMReply(self.script[min(turn, len(self.script) - 1)], _USAGE, NAME)

    def force_answer(self, context: QueryContext, *, temperature: float) -> LLMReply[Answer]:
        self._record("force_answer", question=context.question, items=len(context.items))
        return LLMReply(self.forced, _USAGE, NAME)

    def summarize(self, scope: str, items: Sequence[str],
                  facts: Sequence[KnownFact] = ()) -> LLMReply[WrittenSummary]:
        self._record("summarize", scope=scope, items=list(items), facts=[f.memory_id for f in facts])
        if scope in self.failing_summaries:
            raise LLMUnavailable(f"summarize {scope}: the model provider is overloaded (scripted)")
        return self._offline.summarize(scope, items, facts)

    def find_conflicts(self, new_facts: Sequence[KnownFact], known_facts: Sequence[KnownFact]) -> LLMReply[ConflictCheck]:
        self._record("find_conflicts", new=[f.memory_id for f in new_facts], known=[f.memory_id for f in known_facts])
        return self._offline.find_conflicts(new_facts, known_facts)

    def detect_inflection(self, messages: Sequence[WindowEvent], signals: Sequence[Signal], *,
                          h: Heuristics) -> LLMReply[InflectionAssessment]:
        self._record("detect_inflection", event_ids=[m.event_id for m in messages],
                     signal_ids=[s.signal_id for s in signals])
        if self.inflection is not None:
            return LLMReply(self.inflection, _USAGE, NAME)
        return self._offline.detect_inflection(messages, signals, h=h)

    def plan_research(self, context: QueryContext, *, max_sub_questions: int) -> LLMReply[ResearchPlan]:
        self._record("plan_research", question=context.question, max_sub_questions=max_sub_questions)
        if self.plan is not None:
            return LLMReply(self.plan, _USAGE, NAME)
        return self._offline.plan_research(context, max_sub_questions=max_sub_questions)

    def evaluate_research(self, context: QueryContext, sub_questions: Sequence[SubQuestion], *,
                          can_continue: bool, max_follow_ups: int) -> LLMReply[ResearchEvaluation]:
        self._record("evaluate_research", sub_questions=[(s.sub_id, s.status) for s in sub_questions],
                     can_continue=can_continue, items=len(context.items))
        if not self.evaluations:
            return self._offline.evaluate_research(context, sub_questions, can_continue=can_continue,
                                                   max_follow_ups=max_follow_ups)
        turn = len(self.calls_to("evaluate_research")) - 1
        return LLMReply(self.evaluations[min(turn, len(self.evaluations) - 1)], _USAGE, NAME)

    def synthesize(self, context: QueryContext, sub_questions: Sequence[SubQuestion],
                   conflicts: Sequence[EvidenceConflict], *, temperature: float) -> LLMReply[Answer]:
        self._record("synthesize", sub_questions=[s.sub_id for s in sub_questions],
                     conflicts=[c.ids for c in conflicts], items=len(context.items))
        if self.synthesis is not None:
            return LLMReply(self.synthesis, _USAGE, NAME)
        return self._offline.synthesize(context, sub_questions, conflicts, temperature=temperature)

    def digest(self, context: QueryContext, *, keep_lines: int) -> LLMReply[ContextDigest]:
        self._record("digest", items=len(context.items), lines=len(context.conversation), keep_lines=keep_lines)
        if self.digested is not None:
            return LLMReply(self.digested, _USAGE, NAME)
        return self._offline.digest(context, keep_lines=keep_lines)
