"""Insights: where a conversation stands (an inflection point) and what engram offers to do about it
(an intervention), both resting on the conversation's signals."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field

from engram.model.common import Frozen
from engram.model.signals import AssumptionStatus, Signal, SignalType

InflectionKind = Literal["research_depth", "critique_assumptions", "synthesis_decision"]
INFLECTION_KINDS: tuple[InflectionKind, ...] = ("research_depth", "critique_assumptions", "synthesis_decision")
InterventionKind = Literal["organise_questions", "validate_assumptions", "structure_case", "organise_signals"]
INTERVENTION_KINDS: tuple[InterventionKind, ...] = (
    "organise_questions", "validate_assumptions", "structure_case", "organise_signals",
)
# The Intelligence Engine's name of the pattern each intervention answers (the kind names what it offers).
INTERVENTION_PATTERNS: dict[InterventionKind, str] = {
    "organise_questions": "multiple_questions", "validate_assumptions": "unvalidated_assumptions",
    "structure_case": "case_structure", "organise_signals": "high_signal_density",
}
InterventionStatus = Literal["open", "dismissed"]


class InflectionAssessment(Frozen):
    """A model's reading of a conversation's last messages: the inflection it is at (None: none), how
    sure, the topic to take up and the signals the reading rests on. It counts only above the
    configured confidence; the offline model and the LLM answer in this same shape."""

    kind: InflectionKind | None = Field(
        description="research_depth: several complex open questions call for deeper research; "
                    "critique_assumptions: a stated position rests on untested assumptions; "
                    "synthesis_decision: enough is collected to decide; null: none of these")
    confidence: float = Field(ge=0.0, le=1.0)
    suggested_topic: str = Field(default="", max_length=500, description="what to research, question or decide")
    signal_ids: list[str] = Field(default_factory=list, description="ids of the signals the reading rests on")
    rationale: str = Field(default="", max_length=500, description="one sentence: why")


class Inflection(Frozen):
    """An inflection that counted, at the checkpoint turn it was detected on."""

    world_id: str
    inflection_id: str
    conversation_id: str
    turn: int = Field(ge=1, description="the checkpoint turn (every `inflection_interval_turns` turns)")
    kind: InflectionKind
    confidence: float = Field(ge=0.0, le=1.0)
    suggested_topic: str
    rationale: str = ""
    signal_ids: list[str] = Field(default_factory=list)
    event_ids: list[str] = Field(default_factory=list, description="the messages read, oldest first")
    model: str
    created_at: datetime


class Intervention(Frozen):
    """What engram offers a conversation, once, resting on the signals that prompted it. Dismissed
    by the user, it is never offered again."""

    world_id: str
    intervention_id: str
    conversation_id: str
    kind: InterventionKind
    status: InterventionStatus = "open"
    message: str
    signal_ids: list[str]
    turn: int = Field(ge=1, description="the turn it was offered on")
    created_at: datetime
    dismissed_at: datetime | None = None


class InsightState(Frozen):
    """Where insights stand in one conversation. `turns` is derived from the stored events (a re-run
    counts the same); the other turns say what was done at which count."""

    world_id: str
    conversation_id: str
    turns: int = 0
    checked_turn: int = Field(default=0, description="the last checkpoint the inflection check ran on")
    inflection_turn: int | None = Field(default=None, description="the last checkpoint an inflection counted on")
    intervention_turn: int | None = Field(default=None, description="the turn of the last intervention offered")


class SuggestedResearch(Frozen):
    """A research_depth inflection, offered as a research query: POST it to `/v1/worlds/{world}/queries`
    with the conversation's `user_id`."""

    question: str
    conversation_id: str
    mode: Literal["research"] = "research"
    inflection_id: str


class ConversationInsights(Frozen):
    """The body of `GET .../conversations/{conversation}/insights`."""

    world_id: str
    conversation_id: str
    turns: int
    inflection: Inflection | None = Field(description="the latest check's inflection, when it counted")
    interventions: list[Intervention] = Field(description="open interventions, newest first")
    signals: dict[SignalType, list[Signal]] = Field(description="the conversation's signals by type, "
                                                                "in the order they were said")
    assumptions: dict[AssumptionStatus, int] = Field(description="assumptions by status")
    suggested_research: SuggestedResearch | None = Field(
        default=None, description="the current inflection, when it is research_depth, as a research query")

