"""Deep research: the plan of sub-questions, the evaluation of what was gathered, the conflicting evidence
found among the sources, and the report a research query carries (`WorldQuery.research`)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from engram.model.common import Frozen
from engram.model.requests import InfoRequest

SubQuestionStatus = Literal["pending", "gathered", "answered", "unanswered"]


class PlannedSubQuestion(Frozen):
    """One part of the question and the capability requests that should answer it."""

    question: str = Field(min_length=1, max_length=500)
    requests: list[InfoRequest] = Field(min_length=1, max_length=4,
                                        description="capability requests (search_entities, search_memories...)")


class ResearchPlan(Frozen):
    sub_questions: list[PlannedSubQuestion] = Field(min_length=1, max_length=8)
    rationale: str = Field(default="", max_length=1_000)


class ResearchEvaluation(Frozen):
    """The completeness check: which sub-questions the context answers, and what to gather next."""

    complete: bool
    answered: list[str] = Field(default_factory=list, description="ids of the sub-questions the context answers")
    follow_ups: list[PlannedSubQuestion] = Field(default_factory=list, max_length=4,
                                                 description="what to gather next when not complete")
    notes: str = Field(default="", max_length=1_000)


class SubQuestion(Frozen):
    """A sub-question as the research tracks it: its requests, what they found (context item ids) and
    whether the evaluation judged it answered."""

    sub_id: str
    question: str
    requests: list[InfoRequest]
    iteration: int  # the gathering round it belongs to (1 for the plan's)
    status: SubQuestionStatus = "pending"
    evidence: list[str] = Field(default_factory=list)
    rejected: list[str] = Field(default_factory=list)  # requests that failed validation, and why


class EvidenceConflict(Frozen):
    """Two sources that cannot both be true: a recorded memory conflict, or two facts of one subject and
    single-valued predicate with different values."""

    kind: Literal["memory_conflict", "contradicting_facts"]
    ids: tuple[str, str]  # context item ids of both sides (both are cited)
    statements: tuple[str, str]
    status: Literal["open", "resolved", "unrecorded"]
    conflict_id: str | None = None
    winner_id: str | None = None  # the side the rules or the user kept, for a resolved conflict


class ResearchBudgets(Frozen):
    """The context-thinning budgets, in estimated tokens: above `drop` the lowest-scoring items go; a
    context gathered above `mask` first loses long bodies, above `compact` it is compacted too."""

    drop: int
    mask: int
    compact: int


class ResearchReport(Frozen):
    sub_questions: list[SubQuestion] = Field(default_factory=list)
    iterations: int = 0  # gathering rounds run
    max_iterations: int = 0  # gathering rounds in all, the plan's included (one always runs)
    complete: bool = False
    notes: list[str] = Field(default_factory=list)  # the evaluations' notes, in order
    budgets: ResearchBudgets | None = None
    peak_gathered_tokens: int = 0  # the largest context gathered, before thinning
    peak_sent_tokens: int = 0  # the largest context a model call saw, after thinning
    thinned: list[str] = Field(default_factory=list)  # the measures taken, each said once
    conflicts: list[EvidenceConflict] = Field(default_factory=list)

    @property
    def remaining_iterations(self) -> int:
        return max(0, self.max_iterations - self.iterations)

    def pending(self) -> list[SubQuestion]:
        return [s for s in self.sub_questions if s.status == "pending"]
