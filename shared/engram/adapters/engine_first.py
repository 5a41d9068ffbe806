"""Engine first: with a model configured, the offline engine (spaCy's parse and the extraction rules) still reads
every extraction window, and the model is called only for the windows the engine cannot read with confidence.

A window goes to the model when one of its user turns has an asserted clause about the speaker or a named
entity, with a noun object, from which the rules drew no statement (`understanding.unread_clauses`): "Kalani got
the job at Bluefin" is such a clause, "I live in Lisbon" or "thanks, that helps" are not. Every other call
(answers, summaries, conflicts, research) goes to the model as before. The windows each side read are counted
(`windows_engine`, `windows_model`) and reported by the relations bench.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from engram.adapters.offline.llm import OfflineLLM
from engram.adapters.offline.understanding import understand, unread_clauses
from engram.adapters.spacy_engine import shared_engine
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
    WindowEvent,
    WrittenSummary,
)

if TYPE_CHECKING:
    from engram.ports import LLM


def needs_model(events: Sequence[WindowEvent]) -> bool:
    """Whether a window holds a user turn the engine cannot read with confidence."""
    users = [e.content for e in events if e.role == "user"]
    return any(unread_clauses(doc, understand(doc)) for doc in shared_engine().docs(users))


class EngineFirstLLM:
    """A configured model behind the offline engine: extraction windows the engine reads stay local."""

    def __init__(self, model: LLM, engine: OfflineLLM | None = None) -> None:
        self.model = model
        self.engine = engine or OfflineLLM()
        self.name = model.name
        self.windows_engine = 0  # extraction windows the engine read
        self.windows_model = 0  # extraction windows sent to the model

    @property
    def sent_share(self) -> float:
        """The share of extraction windows sent to the model (0 before any)."""
        total = self.windows_engine + self.windows_model
        return self.windows_model / total if total else 0.0

    def extract(self, events: Sequence[WindowEvent], known_entities: Sequence[str], *,
                references: Sequence[Reference] = (), candidates: Sequence[EntitySighting] = (),
                predicates: Sequence[OntologyPredicate] = ()) -> LLMReply[ExtractionResult]:
        """The engine's reading of the window, or the model's when the engine cannot read one of its turns."""
        reader: LLM = self.engine
        if needs_model(events):
            self.windows_model += 1
            reader = self.model
        else:
            self.windows_engine += 1
        return reader.extract(events, known_entities, references=references, candidates=candidates,
                              predicates=predicates)

    def answer(self, context: QueryContext, *, can_request_more: bool, remaining_info_requests: int,
               temperature: float) -> LLMReply[Answer | NeedsMoreInfo]:
        return self.model.answer(context, can_request_more=can_request_more,
                                 remaining_info_requests=remaining_info_requests, temperature=temperature)

    def force_answer(self, context: QueryContext, *, temperature: float) -> LLMReply[Answer]:
        return self.model.force_answer(context, temperature=temperature)

    def summarize(self, scope: str, items: Sequence[str],
                  facts: Sequence[KnownFact] = ()) -> LLMReply[WrittenSummary]:
        return self.model.summarize(scope, items, facts)

    def find_conflicts(self, new_facts: Sequence[KnownFact], known_facts: Sequence[KnownFact]) -> LLMReply[ConflictCheck]:
        return self.model.find_conflicts(new_facts, known_facts)

    def detect_inflection(self, messages: Sequence[WindowEvent], signals: Sequence[Signal], *,
                          h: Heuristics) -> LLMReply[InflectionAssessment]:
        return self.model.detect_inflection(messages, signals, h=h)

    def plan_research(self, context: QueryContext, *, max_sub_questions: int) -> LLMReply[ResearchPlan]:
        return self.model.plan_research(context, max_sub_questions=max_sub_questions)

    def evaluate_research(self, context: QueryContext, sub_questions: Sequence[SubQuestion], *,
                          can_continue: bool, max_follow_ups: int) -> LLMReply[ResearchEvaluation]:
        return self.model.evaluate_research(context, sub_questions, can_continue=can_continue,
                                            max_follow_ups=max_follow_ups)

    def synthesize(self, context: QueryContext, sub_questions: Sequence[SubQuestion],
                   conflicts: Sequence[EvidenceConflict], *, temperature: float) -> LLMReply[Answer]:
        return self.model.synthesize(context, sub_questions, conflicts, temperature=temperature)

    def digest(self, context: QueryContext, *, keep_lines: int) -> LLMReply[ContextDigest]:
        return self.model.digest(context, keep_lines=keep_lines)


def engine_first(model: LLM) -> LLM:
    """`model` behind the engine; the offline model as it is (it is the engine)."""
    return model if isinstance(model, OfflineLLM) else EngineFirstLLM(model)
