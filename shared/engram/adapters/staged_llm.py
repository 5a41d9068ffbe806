"""A model per stage (`ENGRAM_MODEL_EXTRACT`, `_ANSWER`, `_SUMMARIZE`, `_RESEARCH`): the port's calls sent each to its
stage's model, the default model for a stage given none."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from engram.config import Stage
from engram.model.context import QueryContext
from engram.model.entities import EntitySighting
from engram.model.heuristics import Heuristics
from engram.model.insights import InflectionAssessment
from engram.model.memories import OntologyPredicate
from engram.model.queries import Answer, NeedsMoreInfo
from engram.model.research import EvidenceConflict, ResearchEvaluation, ResearchPlan, SubQuestion
from engram.model.signals import Signal
from engram.ports import (
    LLM,
    ConflictCheck,
    ContextDigest,
    ExtractionResult,
    KnownFact,
    LLMReply,
    Reference,
    WindowEvent,
    WrittenSummary,
)
from engram.ports.usage import STAGE_OF


class StagedLLM:
    """The LLM port routing each call by `engram.ports.usage.STAGE_OF` to `stages[stage]`, else to `default`."""

    def __init__(self, default: LLM, stages: Mapping[Stage, LLM]) -> None:
        self.default = default
        self.stages = dict(stages)
        self.name = ", ".join([default.name, *(f"{s}={m.name}" for s, m in self.stages.items())])

    def model_for(self, method: str) -> LLM:
        """The model a port method is sent to."""
        return self.stages.get(STAGE_OF[method], self.default)

    def extract(self, events: Sequence[WindowEvent], known_entities: Sequence[str], *,
                references: Sequence[Reference] = (), candidates: Sequence[EntitySighting] = (),
                predicates: Sequence[OntologyPredicate] = ()) -> LLMReply[ExtractionResult]:
        return self.model_for("extract").extract(events, known_entities, references=references, candidates=candidates,
                                                 predicates=predicates)

    def answer(self, context: QueryContext, *, can_request_more: bool, remaining_info_requests: int,
               temperature: float) -> LLMReply[Answer | NeedsMoreInfo]:
        return self.model_for("answer").answer(context, can_request_more=can_request_more,
                                               remaining_info_requests=remaining_info_requests,
                                               temperature=temperature)

    def force_answer(self, context: QueryContext, *, temperature: float) -> LLMReply[Answer]:
        return self.model_for("force_answer").force_answer(context, temperature=temperature)

    def summarize(self, scope: str, items: Sequence[str],
                  facts: Sequence[KnownFact] = ()) -> LLMReply[WrittenSummary]:
        return self.model_for("summarize").summarize(scope, items, facts)

    def find_conflicts(self, new_facts: Sequence[KnownFact], known_facts: Sequence[KnownFact]) -> LLMReply[ConflictCheck]:
        return self.model_for("find_conflicts").find_conflicts(new_facts, known_facts)

    def detect_inflection(self, messages: Sequence[WindowEvent], signals: Sequence[Signal], *,
                          h: Heuristics) -> LLMReply[InflectionAssessment]:
        return self.model_for("detect_inflection").detect_inflection(messages, signals, h=h)

    def plan_research(self, context: QueryContext, *, max_sub_questions: int) -> LLMReply[ResearchPlan]:
        return self.model_for("plan_research").plan_research(context, max_sub_questions=max_sub_questions)

    def evaluate_research(self, context: QueryContext, sub_questions: Sequence[SubQuestion], *,
                          can_continue: bool, max_follow_ups: int) -> LLMReply[ResearchEvaluation]:
        return self.model_for("evaluate_research").evaluate_research(context, sub_questions, can_continue=can_continue,
                                                                     max_follow_ups=max_follow_ups)

    def synthesize(self, context: QueryContext, sub_questions: Sequence[SubQuestion],
                   conflicts: Sequence[EvidenceConflict], *, temperature: float) -> LLMReply[Answer]:
        return self.model_for("synthesize").synthesize(context, sub_questions, conflicts, temperature=temperature)

    def digest(self, context: QueryContext, *, keep_lines: int) -> LLMReply[ContextDigest]:
        return self.model_for("digest").digest(context, keep_lines=keep_lines)
