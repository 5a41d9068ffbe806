"""Insight rules, pure: when a conversation is checked for an inflection point, how the offline model
reads one from the last messages' signals, when it counts, and which intervention a conversation's
signals call for.

Turns are the `signal_roles` messages (as for signals). The inflection check runs on every
`inflection_interval_turns`-th turn over the last `inflection_window_messages` messages; the offline
reading scores each kind as base + step per piece of evidence + weight x the share of the window's
turns that carry it, capped. An inflection counts from `inflection_min_confidence` up.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from engram.model.heuristics import Heuristics
from engram.model.insights import InflectionAssessment, InflectionKind, Intervention, InterventionKind
from engram.model.signals import Signal

POSITION_TYPES = frozenset({"Claim", "DecisionIntent", "Goal"})  # a stated position
MATERIAL_TYPES = frozenset({"Goal", "Constraint", "EvidenceMention"})  # what a decision is made from


# ---------------------------------------------------------------- when
def inflection_checkpoint(turns: int, checked_turn: int, h: Heuristics) -> int | None:
    """The checkpoint turn to check now: the latest multiple of the interval the conversation has
    reached, when it was not checked yet. A batch that passed several checks only the latest: the
    earlier ones describe a conversation that has moved on."""
    interval = max(1, h.insights.inflection_interval_turns)
    checkpoint = turns - turns % interval
    return checkpoint if checkpoint > 0 and checkpoint > checked_turn else None


def inflection_counts(assessment: InflectionAssessment, h: Heuristics) -> bool:
    """An inflection counts from the configured confidence up (0.75: the minimum to activate an agent)."""
    return assessment.kind is not None and assessment.confidence >= h.insights.inflection_min_confidence


def intervention_due(turns: int, last_intervention_turn: int | None, h: Heuristics) -> bool:
    """At most one intervention every `intervention_cooldown_turns` turns per conversation."""
    return turns >= 1 and (last_intervention_turn is None
                           or turns - last_intervention_turn >= h.insights.intervention_cooldown_turns)


# ---------------------------------------------------------------- the offline inflection reading
@dataclass(frozen=True)
class _Reading:
    kind: InflectionKind
    evidence: tuple[Signal, ...]  # counted into the confidence
    carriers: tuple[Signal, ...]  # the window turns carrying any of these make the share
    carried: str  # what those turns do, for the rationale
    topic: str
    rationale: str
    rests_on: tuple[Signal, ...]


def assess_inflection(turn_ids: Sequence[str], signals: Sequence[Signal], h: Heuristics) -> InflectionAssessment:
    """The offline model's reading. `turn_ids` are the window's turns, oldest first; `signals` the
    conversation's signals up to the checkpoint, the window's among them. The most confident of the
    three kinds wins (the first on a tie); kind None when none applies."""
    window = set(turn_ids)
    if not window:
        return InflectionAssessment(kind=None, confidence=0.0, rationale="no turns to read")
    recent = [s for s in signals if s.event_id in window]
    best: InflectionAssessment | None = None
    for reading in (_research(recent, h), _critique(recent, h), _synthesis(recent, signals, h)):
        if reading is None:
            continue
        carried = len({s.event_id for s in reading.carriers} & window)
        assessment = InflectionAssessment(
            kind=reading.kind, confidence=_confidence(len(reading.evidence), carried / len(window), h),
            suggested_topic=reading.topic[:500],
            rationale=f"{reading.rationale}; {carried} of the last {len(window)} turns {reading.carried}",
            signal_ids=list(dict.fromkeys(s.signal_id for s in reading.rests_on)))
        if best is None or assessment.confidence > best.confidence:
            best = assessment
    return best or InflectionAssessment(kind=None, confidence=0.0, rationale="no inflection in the last messages")


def _confidence(evidence: int, share: float, h: Heuristics) -> float:
    offline = h.offline
    raw = (offline.inflection_base_confidence + offline.inflection_evidence_step * evidence
           + offline.inflection_share_weight * share)
    return round(min(offline.inflection_max_confidence, raw), 3)


def _research(recent: Sequence[Signal], h: Heuristics) -> _Reading | None:
    """Several complex open questions: time to research in depth."""
    questions = [s for s in recent if s.signal_type == "Question"]
    hard = [s for s in questions if is_complex_question(s.content, h)]
    if len(hard) < h.offline.inflection_research_min_questions:
        return None
    return _Reading(kind="research_depth", evidence=tuple(hard), carriers=tuple(questions), carried="ask a question",
                    topic=hard[-1].content, rationale=f"{len(hard)} complex open questions", rests_on=tuple(hard))


def _critique(recent: Sequence[Signal], h: Heuristics) -> _Reading | None:
    """A stated position resting on untested assumptions: time to critique them."""
    positions = [s for s in recent if s.signal_type in POSITION_TYPES]
    untested = [s for s in recent if s.signal_type == "Assumption" and s.assumption_status == "untested"]
    if not positions or len(untested) < h.offline.inflection_critique_min_assumptions:
        return None
    return _Reading(kind="critique_assumptions", evidence=tuple(untested), carriers=tuple(untested),
                    carried="state one", topic=positions[-1].content,
                    rationale=f"a position on {len(untested)} untested assumptions",
                    rests_on=(*untested, positions[-1]))


def _synthesis(recent: Sequence[Signal], signals: Sequence[Signal], h: Heuristics) -> _Reading | None:
    """A decision in view and enough collected to make it: time to synthesise and decide."""
    decisions = [s for s in recent if s.signal_type == "DecisionIntent"]
    material = [s for s in signals if s.signal_type in MATERIAL_TYPES
                or (s.signal_type == "Assumption" and s.assumption_status == "confirmed")]
    if not decisions or len(material) < h.offline.inflection_synthesis_min_material:
        return None
    return _Reading(kind="synthesis_decision", evidence=tuple(material), carriers=tuple(decisions),
                    carried="weigh a decision", topic=decisions[-1].content,
                    rationale=f"a decision in view with {len(material)} goals, constraints and pieces of evidence",
                    rests_on=(decisions[-1], *material))


def is_complex_question(text: str, h: Heuristics) -> bool:
    """Long enough by itself, or asking why, how, what if, about trade-offs or impact."""
    words = len(text.split())
    offline = h.offline
    if words < offline.inflection_question_min_words:
        return False
    return (words >= offline.inflection_complex_question_words
            or mentions(text, offline.inflection_complex_question_phrases))


# ---------------------------------------------------------------- interventions
@dataclass(frozen=True)
class InterventionCandidate:
    """An intervention a pattern calls for, before it is offered."""

    kind: InterventionKind
    signal_ids: tuple[str, ...]

    def message(self, h: Heuristics) -> str:
        template = h.insights.intervention_messages.get(self.kind, self.kind.replace("_", " "))
        return template.replace("{count}", str(len(self.signal_ids)))


def detect_intervention(signals: Sequence[Signal], past: Iterable[Intervention], recent_turn_ids: Sequence[str],
                        h: Heuristics) -> InterventionCandidate | None:
    """The first pattern of `intervention_kinds` the conversation's signals show. A kind with an open
    intervention is not offered again; a dismissed one's signals never count for its kind again, so
    only new material can bring that kind back, never the dismissed intervention itself."""
    open_kinds: set[str] = set()
    dismissed: dict[str, set[str]] = {}
    for p in past:
        if p.status == "open":
            open_kinds.add(p.kind)
        else:
            dismissed.setdefault(p.kind, set()).update(p.signal_ids)
    for kind in h.insights.intervention_kinds:
        if kind in open_kinds:
            continue
        spent = dismissed.get(kind, set())
        basis = _PATTERNS[kind]([s for s in signals if s.signal_id not in spent], recent_turn_ids, h)
        if basis:
            return InterventionCandidate(kind, tuple(dict.fromkeys(s.signal_id for s in basis)))
    return None


def _open_questions(signals: Sequence[Signal], _recent: Sequence[str], h: Heuristics) -> list[Signal]:
    questions = [s for s in signals if s.signal_type == "Question"]
    return questions if len(questions) >= h.insights.intervention_min_open_questions else []


def _unvalidated_assumptions(signals: Sequence[Signal], _recent: Sequence[str], h: Heuristics) -> list[Signal]:
    untested = [s for s in signals if s.signal_type == "Assumption" and s.assumption_status == "untested"]
    return untested if len(untested) >= h.insights.intervention_min_untested_assumptions else []


def _case_structure(signals: Sequence[Signal], _recent: Sequence[str], h: Heuristics) -> list[Signal]:
    """A decision, the options it weighs and the constraints it is bound by."""
    decisions = {s.signal_id for s in signals if s.signal_type == "DecisionIntent"}
    options = {s.signal_id for s in signals if mentions(s.content, h.insights.intervention_case_option_phrases)}
    constraints = {s.signal_id for s in signals if s.signal_type == "Constraint"}
    if not decisions or len(options) < h.insights.intervention_case_min_options or not constraints:
        return []
    return [s for s in signals if s.signal_id in decisions | options | constraints]


def _high_density(signals: Sequence[Signal], recent: Sequence[str], h: Heuristics) -> list[Signal]:
    """Many signals in the last few turns."""
    turns = set(recent)
    dense = [s for s in signals if s.event_id in turns]
    if not turns or len(dense) < h.insights.intervention_density_min_signals \
            or len(dense) / len(turns) < h.insights.intervention_density_per_turn:
        return []
    return dense


_PATTERNS: dict[str, Callable[[Sequence[Signal], Sequence[str], Heuristics], list[Signal]]] = {
    "organise_questions": _open_questions,
    "validate_assumptions": _unvalidated_assumptions,
    "structure_case": _case_structure,
    "organise_signals": _high_density,
}


# ---------------------------------------------------------------- phrases
def mentions(text: str, phrases: Sequence[str]) -> bool:
    """A phrase as whole words ("or" in "A or B", not in "order"); curly apostrophes read as straight."""
    return bool(phrases) and _whole_words(tuple(phrases)).search(text.replace("\u2019", "'")) is not None


@lru_cache(maxsize=32)
def _whole_words(phrases: tuple[str, ...]) -> re.Pattern[str]:
    alternatives = "|".join(re.escape(p.lower()) for p in sorted(phrases, key=len, reverse=True))
    return re.compile(rf"(?<![\w'-])(?:{alternatives})(?![\w'-])", re.I)
