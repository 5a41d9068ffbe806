"""Insight rules on scripted conversations: the inflection check runs on every third turn over the last six
messages and counts from 0.75 up; interventions follow the conversation's signal patterns, one open per
kind, and a dismissed one never comes back."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import pytest

from engram.adapters.offline.llm import OfflineLLM
from engram.enrichment.signals import event_signals
from engram.model.events import StoredEvent
from engram.model.heuristics import DEFAULT_HEURISTICS as H
from engram.model.heuristics import Heuristics
from engram.model.insights import InflectionAssessment, Intervention
from engram.model.signals import Signal
from engram.ports import WindowEvent
from engram.rules.insights import (
    InterventionCandidate,
    assess_inflection,
    detect_intervention,
    inflection_checkpoint,
    inflection_counts,
    intervention_due,
    is_complex_question,
    mentions,
)

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)

RESEARCH = [
    ("user", "We're exploring a delivery service for the rural areas around Porto."),
    ("assistant", "Happy to help think it through."),
    ("user", "How would rural demand compare with our urban numbers? What happens to delivery times on rural routes?"),
    ("assistant", "Both depend on population density."),
    ("user", "Why do the big competitors avoid these regions, and what are the long-term risks for us?"),
    ("assistant", "Mostly the cost per drop."),
]
SMALL_TALK = [
    ("user", "Hi, I'm planning dinner for Friday."),
    ("assistant", "Lovely. How many guests?"),
    ("user", "What time is it in Lisbon?"),
    ("assistant", "Nine in the morning."),
    ("user", "Thanks, that helps."),
    ("assistant", "Enjoy the dinner."),
]
CRITIQUE = [
    ("user", "We should launch the premium tier in June."),
    ("assistant", "What makes June the right month?"),
    ("user", "I assume enterprise customers will pay twice the current price."),
    ("assistant", "That is a big step up."),
    ("user", "Presumably the sales team can close the first deals within a month."),
]
SYNTHESIS = [
    ("user", "Our goal is to cut the cloud bill by a third this year."),
    ("user", "The budget is capped at 40k a year."),
    ("user", "According to the last audit, storage makes up half of the bill."),
    ("user", "The migration must finish before the end of March."),
    ("user", "Let's go with the reserved instances plan."),
    ("user", "Sounds good."),
]


def _conversation(script: Sequence[tuple[str, str]], conversation: str = "c1") -> list[StoredEvent]:
    return [StoredEvent(world_id="w", event_id=f"e{i:02d}", user_id="maya", conversation_id=conversation,
                        role=role, content=text, content_type="userinput",  # type: ignore[arg-type]
                        occurred_at=T0 + timedelta(minutes=i), received_at=T0, importance=0.5)
            for i, (role, text) in enumerate(script)]


def _signals(events: Sequence[StoredEvent], h: Heuristics = H) -> list[Signal]:
    return [s for e in events if e.role in h.signals.signal_roles for s in event_signals("w", e, h, T0)]


def _checks(script: Sequence[tuple[str, str]], h: Heuristics = H) -> dict[int, InflectionAssessment]:
    """Ingest the script one message at a time and check as the extract step does: on each checkpoint turn,
    the offline model over the last messages up to that turn and the signals said so far."""
    events = _conversation(script)
    checked, turns, found = 0, 0, {}
    for i, event in enumerate(events):
        turns += event.role in h.signals.signal_roles
        checkpoint = inflection_checkpoint(turns, checked, h)
        if checkpoint is None:
            continue
        window = events[max(0, i + 1 - h.insights.inflection_window_messages):i + 1]
        messages = [WindowEvent(event_id=e.event_id, role=e.role, content=e.content, occurred_at=e.occurred_at)
                    for e in window]
        found[checkpoint] = OfflineLLM().detect_inflection(messages, _signals(events[:i + 1], h), h=h).value
        checked = checkpoint
    return found


def _fired(script: Sequence[tuple[str, str]], h: Heuristics = H) -> dict[int, str | None]:
    return {turn: a.kind for turn, a in _checks(script, h).items() if inflection_counts(a, h)}


# ---------------------------------------------------------------- when
def test_the_check_runs_on_every_third_turn_once() -> None:
    assert [inflection_checkpoint(t, 0, H) for t in (0, 1, 2, 3)] == [None, None, None, 3]
    assert inflection_checkpoint(4, 3, H) is None and inflection_checkpoint(6, 3, H) == 6
    assert inflection_checkpoint(3, 3, H) is None  # a re-run of the step checks nothing again


def test_a_batch_that_passed_two_checkpoints_checks_only_the_latest() -> None:
    assert inflection_checkpoint(7, 0, H) == 6
    assert inflection_checkpoint(8, 6, H) is None


def test_a_world_can_change_the_interval_and_the_window() -> None:
    tuned = H.with_overrides({"inflection_interval_turns": 2, "inflection_window_messages": 4})
    assert inflection_checkpoint(2, 0, tuned) == 2
    assert set(_checks(RESEARCH, tuned)) == {2}  # three user turns: one checkpoint, at the second


# ---------------------------------------------------------------- scripted conversations
def test_several_complex_open_questions_fire_research_depth_on_the_third_turn() -> None:
    checks = _checks(RESEARCH)
    assert set(checks) == {3}
    research = checks[3]
    assert research.kind == "research_depth" and research.confidence > 0.75
    assert research.suggested_topic.startswith("Why do the big competitors avoid these regions")
    assert len(research.signal_ids) == 3 and all(i.startswith("sig_") for i in research.signal_ids)


def test_turns_between_checkpoints_are_not_checked_even_when_their_messages_qualify() -> None:
    questions = [("user", f"Why would the {topic} change the way we price the rural routes?")
                 for topic in ("fuel costs", "driver shortage", "new depot", "toll roads", "weather", "regulation")]
    assert _fired(questions) == {3: "research_depth", 6: "research_depth"}


def test_small_talk_with_one_simple_question_fires_nothing() -> None:
    checks = _checks(SMALL_TALK)
    assert set(checks) == {3} and checks[3].kind is None and not inflection_counts(checks[3], H)


def test_a_position_on_two_untested_assumptions_fires_critique_assumptions() -> None:
    assert _fired(CRITIQUE) == {3: "critique_assumptions"}
    critique = _checks(CRITIQUE)[3]
    assert critique.suggested_topic == "We should launch the premium tier in June."
    assert len(critique.signal_ids) == 3  # both assumptions and the position


def test_enough_collected_and_a_decision_fires_synthesis_on_the_sixth_turn_not_the_third() -> None:
    assert _fired(SYNTHESIS) == {6: "synthesis_decision"}
    assert _checks(SYNTHESIS)[3].kind is None  # goals, budget and evidence, but no decision in view yet
    assert _checks(SYNTHESIS)[6].suggested_topic == "Let's go with the reserved instances plan."


def test_two_complex_questions_in_one_turn_of_three_stay_below_the_threshold() -> None:
    script = [("user", "The migration starts next month."),
              ("user", "How would the migration affect our uptime? Why does the vendor insist on a weekend cutover?"),
              ("user", "Noted, thanks.")]
    [check] = _checks(script).values()
    assert check.kind == "research_depth" and check.confidence == pytest.approx(0.717, abs=0.001)
    assert not inflection_counts(check, H) and _fired(script) == {}


def test_an_assumption_the_user_confirmed_is_no_longer_untested() -> None:
    events = _conversation(CRITIQUE)
    signals = [s.model_copy(update={"assumption_status": "confirmed"}) if s.signal_type == "Assumption" else s
               for s in _signals(events)]
    reading = assess_inflection([e.event_id for e in events if e.role == "user"], signals, H)
    assert reading.kind != "critique_assumptions"


def test_a_confidence_from_the_threshold_up_counts() -> None:
    def at(confidence: float) -> InflectionAssessment:
        return InflectionAssessment(kind="research_depth", confidence=confidence, suggested_topic="t")

    assert not inflection_counts(at(0.749), H) and inflection_counts(at(0.75), H)
    assert not inflection_counts(InflectionAssessment(kind=None, confidence=0.99), H)
    assert not inflection_counts(at(0.8), H.with_overrides({"inflection_min_confidence": 0.85}))


def test_a_world_can_ask_for_more_questions_before_research_fires() -> None:
    assert _fired(RESEARCH, H.with_overrides({"inflection_research_min_questions": 4})) == {}


@pytest.mark.parametrize(("question", "complex_"), [
    ("Why does the vendor insist on a weekend cutover?", True),
    ("How would this affect the roadmap?", True),
    ("What are the trade-offs of each region?", True),
    ("Which of the twelve supplier contracts signed last year still has a penalty clause?", True),
    ("What time is it?", False),
    ("Why?", False),
    ("Is the order ready?", False),
])
def test_a_question_is_complex_when_long_or_asking_why_how_or_what_if(question: str, complex_: bool) -> None:
    assert is_complex_question(question, H) is complex_


def test_phrases_match_whole_words_only() -> None:
    assert mentions("Postgres or DynamoDB?", ("or",))
    assert not mentions("The order is late, organise it", ("or",))
    assert mentions("Plan A vs. plan B", ("vs",)) and mentions("What\u2019s the long-term risk", ("long-term",))


# ---------------------------------------------------------------- interventions
def _said(*texts: str) -> list[Signal]:
    return _signals(_conversation([("user", t) for t in texts]))


def _offered(candidate: InterventionCandidate, status: str = "open") -> Intervention:
    return Intervention(world_id="w", intervention_id=f"itv_{candidate.kind}", conversation_id="c1",
                        kind=candidate.kind, status=status, message=candidate.message(H),  # type: ignore[arg-type]
                        signal_ids=list(candidate.signal_ids), turn=3, created_at=T0,
                        dismissed_at=T0 if status == "dismissed" else None)


QUESTIONS = ("Who owns the billing service?", "When does the contract end?", "Where are the backups stored?")
ASSUMPTIONS = ("I assume the data fits in memory.", "Presumably nobody uses the old API.")
CASE = ("Should we build it ourselves or buy the vendor's tool?", "The deadline is the end of May.")


def test_three_open_questions_call_for_organising_them() -> None:
    candidate = detect_intervention(_said(*QUESTIONS), [], [], H)
    assert candidate is not None and candidate.kind == "organise_questions" and len(candidate.signal_ids) == 3
    assert candidate.message(H) == "3 questions are open in this conversation. Shall I organise them?"
    assert detect_intervention(_said(*QUESTIONS[:2]), [], [], H) is None


def test_two_untested_assumptions_call_for_validating_them() -> None:
    candidate = detect_intervention(_said(*ASSUMPTIONS), [], [], H)
    assert candidate is not None and candidate.kind == "validate_assumptions"
    signals = [s.model_copy(update={"assumption_status": "confirmed"}) for s in _said(*ASSUMPTIONS)]
    assert detect_intervention(signals, [], [], H) is None


def test_a_decision_with_options_and_a_constraint_calls_for_a_case_structure() -> None:
    signals = _said(*CASE)
    candidate = detect_intervention(signals, [], [], H)
    assert candidate is not None and candidate.kind == "structure_case"
    assert candidate.signal_ids == tuple(s.signal_id for s in signals)
    assert detect_intervention(_said(CASE[0]), [], [], H) is None  # no constraint yet


def test_many_signals_in_the_last_turns_call_for_organising_them() -> None:
    events = _conversation([("user", "The API is slow. The queue is full. I think the cache is cold."),
                            ("user", "The budget is 10k. We want to ship in May. The data shows a spike.")])
    signals = _signals(events)
    candidate = detect_intervention(signals, [], [e.event_id for e in events], H)
    assert candidate is not None and candidate.kind == "organise_signals" and len(candidate.signal_ids) == 6
    assert detect_intervention(signals, [], [events[1].event_id], H) is None  # three in the last turn


def test_the_first_pattern_in_the_configured_order_is_offered_and_a_world_can_drop_one() -> None:
    signals = _said(*QUESTIONS, *ASSUMPTIONS, *CASE)
    first = detect_intervention(signals, [], [], H)
    assert first is not None and first.kind == "structure_case"
    tuned = H.with_overrides({"intervention_kinds": ["organise_questions"]})
    only = detect_intervention(signals, [], [], tuned)
    assert only is not None and only.kind == "organise_questions"


def test_a_kind_already_open_is_not_offered_again() -> None:
    signals = _said(*QUESTIONS, *ASSUMPTIONS)
    first = detect_intervention(signals, [], [], H)
    assert first is not None and first.kind == "validate_assumptions"
    second = detect_intervention(signals, [_offered(first)], [], H)
    assert second is not None and second.kind == "organise_questions"
    assert detect_intervention(signals, [_offered(first), _offered(second)], [], H) is None


def test_a_dismissed_intervention_is_never_offered_again_and_only_new_material_brings_its_kind_back() -> None:
    signals = _said(*QUESTIONS)
    first = detect_intervention(signals, [], [], H)
    assert first is not None
    dismissed = [_offered(first, "dismissed")]
    assert detect_intervention(signals, dismissed, [], H) is None
    assert detect_intervention(_said(*QUESTIONS, "Who signs off on the budget?"), dismissed, [], H) is None
    later = _said(*QUESTIONS, "Who signs off?", "Which region first?", "How big is the team?")
    fresh = detect_intervention(later, dismissed, [], H)
    assert fresh is not None and fresh.kind == "organise_questions"
    assert not set(fresh.signal_ids) & set(first.signal_ids) and len(fresh.signal_ids) == 3


def test_one_intervention_every_three_turns_at_most() -> None:
    assert intervention_due(1, None, H)
    assert [intervention_due(t, 3, H) for t in (3, 4, 5, 6)] == [False, False, False, True]
    assert not intervention_due(0, None, H)
    assert intervention_due(4, 3, H.with_overrides({"intervention_cooldown_turns": 1}))
