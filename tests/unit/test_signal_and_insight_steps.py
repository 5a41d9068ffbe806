"""Signals and insights, the extract step's last two parts, on in-memory fakes of their ports: the typed
signals the offline rules read, stored once; the assumption lifecycle; the inflection on a checkpoint turn,
an intervention and its dismissal; and an insight check that never fails the enrichment."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from datetime import timedelta

import pytest

from engram.enrichment.ingest import ingest_events
from engram.enrichment.insights import InsightPorts, conversation_insights, dismiss_intervention, update_insights
from engram.enrichment.signals import SignalPorts, dismiss_signal, extract_signals, set_assumption_status
from engram.errors import InvalidInput, NotFound, TransientStoreError
from engram.model.signals import SignalCursor
from engram.model.world import World
from tests.fakes.conversations import T0, said
from tests.fakes.llm import ScriptedLLM
from tests.fakes.ports import FakePorts
from tests.fakes.store import InMemoryStore

WORLD = World("w1")

PLANNING = [
    ("user", "We are planning the Q3 launch. Should we move it to May?"),
    ("assistant", "Moving it to May gives the team two more sprints."),
    ("user", "I assume the vendor delivers the chips on time. The deadline is March 3."),
    ("user", "According to the survey, users want dark mode. I want to ship dark mode first."),
    ("user", "What does the contract say?"),
]
RESEARCH = [
    ("user", "We're exploring a delivery service for the rural areas around Porto."),
    ("assistant", "Happy to help think it through."),
    ("user", "How would rural demand compare with our urban numbers? What happens to delivery times on rural routes?"),
    ("assistant", "Both depend on population density."),
    ("user", "Why do the big competitors avoid these regions, and what are the long-term risks for us?"),
    ("assistant", "Mostly the cost per drop."),
]
QUESTIONS = ("user", "Who owns the billing service? When does the vendor contract end? Where are the backups stored?")


def _signals(fakes: FakePorts, turns: Sequence[tuple[str, str]], conversation: str = "c1") -> dict[str, int]:
    request = said(*turns, conversation=conversation, user="maya")
    ingest_events(fakes, WORLD, request)
    ports: SignalPorts = fakes
    return extract_signals(ports, WORLD, fakes.store.get_events("w1", [e.event_id or "" for e in request.events]))


def test_a_conversations_turns_leave_typed_signals_in_the_order_they_were_said() -> None:
    fakes = FakePorts()
    counts = _signals(fakes, PLANNING)
    assert counts["signals"] == 4
    assert [(s.signal_type, s.content) for s in fakes.store.list_signals("w1", "c1")] == [
        ("Claim", "We are planning the Q3 launch."),
        ("DecisionIntent", "Should we move it to May?"),
        ("Assumption", "I assume the vendor delivers the chips on time."),
        ("Constraint", "The deadline is March 3."),
    ]  # the assistant's turn is not read; the last two turns (under 200 characters, no trigger phrase) wait
    [assumption] = fakes.store.list_signals("w1", "c1", "Assumption")
    assert assumption.assumption_status == "untested"


def test_reading_the_same_turns_again_stores_nothing_new() -> None:
    fakes = FakePorts()
    _signals(fakes, PLANNING)
    before = fakes.store.list_signals("w1", "c1")
    again = extract_signals(fakes, WORLD, fakes.store.get_events("w1", ["e1", "e2", "e3", "e4", "e5"]))
    assert again["signals"] == 0 and fakes.store.list_signals("w1", "c1") == before


class RacingStore(InMemoryStore):
    """A store on which another extract step always writes the signal cursors first: every write of this
    step's is refused, as one read at a version no longer current is."""

    def __init__(self) -> None:
        super().__init__()
        self.refused: list[list[str]] = []

    def save_signal_cursors(self, world_id: str, cursors: Sequence[SignalCursor]) -> set[str]:
        self.refused.append([c.conversation_id for c in cursors])
        return set()


def test_a_cursor_that_keeps_moving_fails_the_step_as_transient_for_the_state_machine_to_retry() -> None:
    store = RacingStore()
    fakes = FakePorts(store=store)
    with pytest.raises(TransientStoreError):
        _signals(fakes, PLANNING)
    assert store.refused == [["c1"]] * 3  # planned again twice before giving up


def test_an_assumption_moves_through_its_lifecycle_and_other_signals_have_no_status() -> None:
    fakes = FakePorts()
    _signals(fakes, PLANNING)
    [assumption] = fakes.store.list_signals("w1", "c1", "Assumption")
    assert set_assumption_status(fakes, "w1", assumption.signal_id, "confirmed").assumption_status == "confirmed"
    [constraint] = fakes.store.list_signals("w1", "c1", "Constraint")
    with pytest.raises(InvalidInput):
        set_assumption_status(fakes, "w1", constraint.signal_id, "refuted")
    with pytest.raises(NotFound):
        set_assumption_status(fakes, "w1", "sig_unknown", "refuted")


_ids = itertools.count(1)


def _say(fakes: FakePorts, conversation: str, role: str, text: str) -> dict[str, int]:
    """One message as its own batch: stored, its signals read, then the insights checked."""
    n = next(_ids)
    request = said((role, text), conversation=conversation, user="maya", first=n, start=T0 + timedelta(minutes=n))
    ingest_events(fakes, WORLD, request)
    events = fakes.store.get_events("w1", [f"e{n}"])
    extract_signals(fakes, WORLD, events)
    ports: InsightPorts = fakes
    return update_insights(ports, WORLD, events)


def test_several_complex_questions_store_an_inflection_on_the_third_turn_and_not_before() -> None:
    fakes = FakePorts()
    counts = [_say(fakes, "research", role, text)["inflections"] for role, text in RESEARCH]
    assert counts == [0, 0, 0, 0, 1, 0]
    inflection = fakes.store.current_inflection("w1", "research")
    assert inflection is not None and (inflection.kind, inflection.turn) == ("research_depth", 3)
    assert inflection.suggested_topic.startswith("Why do the big competitors avoid these regions")
    insights = conversation_insights(fakes, WORLD, "research")
    assert insights.turns == 3 and insights.inflection == inflection
    assert insights.suggested_research is not None
    assert insights.suggested_research.question == inflection.suggested_topic


def test_an_inflection_check_the_model_cannot_make_is_left_for_a_later_batch() -> None:
    fakes = FakePorts(llm=ScriptedLLM(unavailable=["detect_inflection"]))
    counts = [_say(fakes, "research", role, text)["inflections"] for role, text in RESEARCH]
    assert counts == [0] * len(RESEARCH)
    state = fakes.store.insight_state("w1", "research")
    assert state is not None and (state.turns, state.checked_turn) == (3, 0)  # checked again on a later batch


def test_open_questions_bring_an_intervention_that_once_dismissed_is_never_offered_again() -> None:
    fakes = FakePorts()
    assert _say(fakes, "planning", *QUESTIONS)["interventions"] == 1
    [offered] = fakes.store.list_interventions("w1", "planning")
    assert offered.kind == "organise_questions"
    assert offered.message == "3 questions are open in this conversation. Shall I organise them?"
    dismissed = dismiss_intervention(fakes, "w1", "planning", offered.intervention_id)
    assert dismissed.status == "dismissed"
    later = [_say(fakes, "planning", "user", text)["interventions"] for text in ("Fine.", "Moving on.", "Right.",
                                                                                   "Next item.")]
    assert later == [0] * 4 and conversation_insights(fakes, WORLD, "planning").interventions == []
    with pytest.raises(NotFound):
        dismiss_intervention(fakes, "w1", "elsewhere", offered.intervention_id)


def test_a_dismissed_question_no_longer_counts_toward_an_intervention_nor_in_the_insights() -> None:
    fakes = FakePorts()
    request = said(QUESTIONS, conversation="planning", user="maya", first=900)
    ingest_events(fakes, WORLD, request)
    events = fakes.store.get_events("w1", ["e900"])
    extract_signals(fakes, WORLD, events)
    first, *others = fakes.store.list_signals("w1", "planning", "Question")
    dismiss_signal(fakes, "w1", first.signal_id)
    assert update_insights(fakes, WORLD, events)["interventions"] == 0  # two open questions, not three
    assert conversation_insights(fakes, WORLD, "planning").signals["Question"] == others


def test_an_inflection_check_is_shown_no_dismissed_signal_even_from_a_turn_in_its_window() -> None:
    llm = ScriptedLLM()
    fakes = FakePorts(llm=llm)
    _say(fakes, "research-dismissed", "user", "I assume rural demand is low. Should we start with Porto?")
    opening = fakes.store.list_signals("w1", "research-dismissed")
    assert len(opening) == 2  # the first message is always read
    for signal in opening:
        dismiss_signal(fakes, "w1", signal.signal_id)
    for role, text in RESEARCH[1:]:
        _say(fakes, "research-dismissed", role, text)
    [check] = llm.calls_to("detect_inflection")
    shown = check.args["signal_ids"]
    assert shown and not {s.signal_id for s in opening} & set(shown)
    assert set(check.args["event_ids"]) >= {s.event_id for s in opening}  # its turn was in the window
