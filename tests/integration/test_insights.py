"""Insights on the real parts, conversations said one message at a time through ingest and the extract step:
the inflection on the third turn, the intervention cooldown, dismissal for good, re-runs that store nothing,
worlds that see nothing of each other, and the two routes."""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime, timedelta

import httpx
import pytest

from engram.enrichment.extract import extract_events
from engram.enrichment.ingest import ingest_events
from engram.model.events import IngestRequest
from engram.model.insights import InflectionAssessment, Intervention
from engram.ports.clients import Clients
from tests.asgi import api_client
from tests.fakes.llm import ScriptedLLM

pytestmark = pytest.mark.integration
T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
WORLD = "wi"
_minutes = itertools.count()
_ids = itertools.count()

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
]


def _say(clients: Clients, conversation: str, role: str, text: str, *, world: str = WORLD) -> tuple[str, dict[str, int]]:
    """One message, ingested as its own batch and taken through the extract step."""
    event_id = f"m{next(_ids):03d}"
    ingest_events(clients, clients.world(world), IngestRequest.model_validate({"events": [
        {"event_id": event_id, "user_id": "maya", "conversation_id": conversation, "role": role, "content": text,
         "occurred_at": (T0 + timedelta(minutes=next(_minutes))).isoformat()}]}))
    return event_id, extract_events(clients, clients.world(world), [event_id])


def _script(clients: Clients, conversation: str, script: Sequence[tuple[str, str]]) -> list[tuple[str, dict[str, int]]]:
    return [_say(clients, conversation, role, text) for role, text in script]


# ---------------------------------------------------------------- inflections
@pytest.fixture(scope="module")
def research(clients: Clients) -> list[tuple[str, dict[str, int]]]:
    return _script(clients, "research", RESEARCH)


def test_several_complex_questions_store_an_inflection_on_the_third_turn_and_not_before(
        clients: Clients, research: list[tuple[str, dict[str, int]]]) -> None:
    assert [counts["inflections"] for _id, counts in research] == [0, 0, 0, 0, 1, 0]
    inflection = clients.store.current_inflection(WORLD, "research")
    assert inflection is not None
    assert (inflection.kind, inflection.turn, inflection.model) == ("research_depth", 3, "offline-heuristic")
    assert inflection.confidence > 0.75
    assert inflection.suggested_topic.startswith("Why do the big competitors avoid these regions")
    assert inflection.event_ids == [event_id for event_id, _counts in research[:5]]  # up to the third turn
    assert len(inflection.signal_ids) == 3
    state = clients.store.insight_state(WORLD, "research")
    assert state is not None and (state.turns, state.checked_turn, state.inflection_turn) == (3, 3, 3)


def test_the_signals_an_inflection_rests_on_are_stored_under_those_ids_once_their_turns_are_read(
        clients: Clients, research: list[tuple[str, dict[str, int]]]) -> None:
    inflection = clients.store.current_inflection(WORLD, "research")
    assert inflection is not None
    _say(clients, "research", "user", "Let's look at the numbers.")  # a trigger phrase: the waiting turns are read
    stored = {s.signal_id: s for s in clients.store.list_signals(WORLD, "research", "Question")}
    assert set(inflection.signal_ids) <= set(stored)


def test_small_talk_is_checked_on_the_third_turn_and_stores_no_inflection(clients: Clients) -> None:
    said = _script(clients, "smalltalk", SMALL_TALK)
    assert [counts["inflections"] for _id, counts in said] == [0] * len(SMALL_TALK)
    assert clients.store.current_inflection(WORLD, "smalltalk") is None
    state = clients.store.insight_state(WORLD, "smalltalk")
    assert state is not None and (state.turns, state.checked_turn, state.inflection_turn) == (3, 3, None)


def test_a_model_that_is_down_skips_the_check_without_failing_the_step_and_a_re_run_makes_it(
        clients: Clients) -> None:
    down = dataclasses.replace(clients, llm=ScriptedLLM(unavailable=["detect_inflection"]))
    said = _script(down, "outage", RESEARCH[:5])
    assert [counts["inflections"] for _id, counts in said] == [0] * 5
    state = clients.store.insight_state(WORLD, "outage")
    assert state is not None and state.checked_turn == 0  # not marked checked: nothing was read
    assert extract_events(clients, clients.world(WORLD), [said[-1][0]])["inflections"] == 1
    inflection = clients.store.current_inflection(WORLD, "outage")
    assert inflection is not None and inflection.turn == 3


def test_a_model_s_reading_counts_from_the_threshold_up_and_rests_only_on_signals_it_was_shown(
        clients: Clients) -> None:
    def reading(confidence: float) -> Clients:
        return dataclasses.replace(clients, llm=ScriptedLLM(inflection=InflectionAssessment(
            kind="synthesis_decision", confidence=confidence, suggested_topic="the launch date",
            signal_ids=["sig_invented"], rationale="scripted")))

    hesitant = reading(0.74)
    said = _script(hesitant, "model-hesitant", RESEARCH[:5])
    assert sum(counts["inflections"] for _id, counts in said) == 0
    assert clients.store.current_inflection(WORLD, "model-hesitant") is None
    assert [c.args["event_ids"] for c in hesitant.llm.calls_to("detect_inflection")] == [  # type: ignore[attr-defined]
        [event_id for event_id, _counts in said]]  # one call, on the third turn, over the messages up to it

    said = _script(reading(0.9), "model-sure", RESEARCH[:5])
    assert [counts["inflections"] for _id, counts in said] == [0, 0, 0, 0, 1]
    inflection = clients.store.current_inflection(WORLD, "model-sure")
    assert inflection is not None and (inflection.kind, inflection.model) == ("synthesis_decision", "scripted")
    assert inflection.suggested_topic == "the launch date" and inflection.signal_ids == []  # the invented id dropped


# ---------------------------------------------------------------- interventions
@pytest.fixture(scope="module")
def planning(clients: Clients) -> list[tuple[str, dict[str, int]]]:
    return _script(clients, "planning", [
        ("user", "Who owns the billing service? When does the vendor contract end? Where are the backups stored?"),
        ("user", "I assume the data fits in memory. Presumably nobody uses the old API anymore."),
        ("user", "Okay."),
        ("user", "Let me check with the team."),
    ])


def test_interventions_come_at_most_one_every_three_turns(clients: Clients,
                                                          planning: list[tuple[str, dict[str, int]]]) -> None:
    assert [counts["interventions"] for _id, counts in planning] == [1, 0, 0, 1]
    questions, assumptions = sorted(clients.store.list_interventions(WORLD, "planning"), key=lambda i: i.turn)
    assert (questions.kind, questions.turn, questions.status) == ("organise_questions", 1, "open")
    assert (assumptions.kind, assumptions.turn) == ("validate_assumptions", 4)  # due since turn 2, offered on 4
    signals = {s.signal_id: s for s in clients.store.list_signals(WORLD, "planning")}
    assert [signals[i].signal_type for i in questions.signal_ids] == ["Question"] * 3
    assert [signals[i].signal_type for i in assumptions.signal_ids] == ["Assumption"] * 2
    assert questions.message == "3 questions are open in this conversation. Shall I organise them?"


def test_re_running_the_extract_step_stores_nothing_new(
        clients: Clients, research: list[tuple[str, dict[str, int]]],
        planning: list[tuple[str, dict[str, int]]]) -> None:
    before = ({c: clients.store.list_interventions(WORLD, c) for c in ("research", "planning")},
              {c: clients.store.current_inflection(WORLD, c) for c in ("research", "planning")},
              {c: clients.store.insight_state(WORLD, c) for c in ("research", "planning")})
    for said in (research, planning):
        counts = extract_events(clients, clients.world(WORLD), [event_id for event_id, _counts in said])
        assert (counts["inflections"], counts["interventions"]) == (0, 0)
    after = ({c: clients.store.list_interventions(WORLD, c) for c in ("research", "planning")},
             {c: clients.store.current_inflection(WORLD, c) for c in ("research", "planning")},
             {c: clients.store.insight_state(WORLD, c) for c in ("research", "planning")})
    assert after == before


def test_a_checkpoint_is_recorded_once_and_an_offer_inside_the_cooldown_is_refused(
        clients: Clients, planning: list[tuple[str, dict[str, int]]]) -> None:
    assert clients.store.record_inflection_check(WORLD, "planning", 3, None) is False  # checked already
    [latest, *_] = clients.store.list_interventions(WORLD, "planning")
    rival = latest.model_copy(update={"intervention_id": "itv_rival", "kind": "organise_signals", "turn": 5})
    assert clients.store.offer_intervention(rival, 3) is False  # turn 4 had one: 5 is inside the cooldown
    assert "itv_rival" not in {i.intervention_id for i in clients.store.list_interventions(WORLD, "planning")}


def test_a_dismissed_intervention_is_never_offered_again(clients: Clients) -> None:
    [(_id, counts)] = _script(clients, "dismissal", [
        ("user", "Who owns the billing service? When does the vendor contract end? Where are the backups stored?")])
    [offered] = clients.store.list_interventions(WORLD, "dismissal")
    assert counts["interventions"] == 1 and offered.kind == "organise_questions"
    dismissed = clients.store.dismiss_intervention(WORLD, "dismissal", offered.intervention_id)
    assert dismissed is not None and dismissed.status == "dismissed" and dismissed.dismissed_at is not None
    # Many turns past the cooldown, with one more question: the dismissed three never come back.
    later = _script(clients, "dismissal", [("user", "Fine."), ("user", "Moving on."), ("user", "Who signs off?"),
                                           ("user", "Right."), ("user", "Next item."), ("user", "Done for today.")])
    assert [counts["interventions"] for _id, counts in later] == [0] * 6
    assert clients.store.list_interventions(WORLD, "dismissal", "open") == []
    # Three new questions are new material (read at once: "deadline" triggers the signal extraction):
    # organising them is a new intervention, resting on them alone.
    [(_id, counts)] = _script(clients, "dismissal", [
        ("user", "Which region goes first? How big is the team? What does the pilot cost? The deadline is soon.")])
    [fresh] = clients.store.list_interventions(WORLD, "dismissal", "open")
    assert counts["interventions"] == 1 and fresh.kind == "organise_questions"
    assert not set(fresh.signal_ids) & set(offered.signal_ids)


def test_another_world_sees_none_of_it(clients: Clients, research: list[tuple[str, dict[str, int]]],
                                       planning: list[tuple[str, dict[str, int]]]) -> None:
    assert clients.store.current_inflection("elsewhere", "research") is None
    assert clients.store.insight_state("elsewhere", "research") is None
    assert clients.store.list_interventions("elsewhere", "planning") == []
    [some, *_] = clients.store.list_interventions(WORLD, "planning")
    assert clients.store.dismiss_intervention("elsewhere", "planning", some.intervention_id) is None
    # The same conversation id in another world is its own conversation, counted from its own events.
    _event_id, counts = _say(clients, "research", "user", "Why would anyone deliver to rural Porto?",
                             world="elsewhere")
    assert (counts["inflections"], counts["interventions"]) == (0, 0)
    state = clients.store.insight_state("elsewhere", "research")
    assert state is not None and state.turns == 1


# ---------------------------------------------------------------- the HTTP API
@pytest.fixture(scope="module")
def call(clients: Clients) -> Iterator[Callable[..., httpx.Response]]:
    with api_client(clients) as client:
        yield client.request


def test_the_insights_route_shows_the_current_inflection(call: Callable[..., httpx.Response],
                                                         research: list[tuple[str, dict[str, int]]]) -> None:
    reply = call("GET", f"/v1/worlds/{WORLD}/conversations/research/insights")
    assert reply.status_code == 200, reply.text
    body = reply.json()
    assert body["world_id"] == WORLD and body["conversation_id"] == "research"
    assert body["inflection"]["kind"] == "research_depth" and body["inflection"]["turn"] == 3
    assert set(body["signals"]) == {"DecisionIntent", "Claim", "Goal", "Constraint", "Assumption", "Question",
                                    "EvidenceMention"}


def test_a_research_depth_inflection_is_offered_as_a_research_query_the_queries_route_accepts(
        call: Callable[..., httpx.Response], research: list[tuple[str, dict[str, int]]]) -> None:
    body = call("GET", f"/v1/worlds/{WORLD}/conversations/research/insights").json()
    suggested = body["suggested_research"]
    assert suggested["mode"] == "research" and suggested["conversation_id"] == "research"
    assert suggested["question"] == body["inflection"]["suggested_topic"]
    assert suggested["inflection_id"] == body["inflection"]["inflection_id"]
    started = call("POST", f"/v1/worlds/{WORLD}/queries", json={
        "user_id": "user", "question": suggested["question"], "conversation_id": suggested["conversation_id"],
        "mode": suggested["mode"]})
    assert started.status_code == 202, started.text
    query = call("GET", f"/v1/worlds/{WORLD}/queries/{started.json()['query_id']}").json()
    assert (query["mode"], query["status"]) == ("research", "completed")


def test_the_insights_route_shows_open_interventions_and_signals_by_type_with_assumption_status(
        clients: Clients, call: Callable[..., httpx.Response], planning: list[tuple[str, dict[str, int]]]) -> None:
    [assumption, *_] = clients.store.list_signals(WORLD, "planning", "Assumption")
    clients.store.set_assumption_status(WORLD, assumption.signal_id, "confirmed")
    body = call("GET", f"/v1/worlds/{WORLD}/conversations/planning/insights").json()
    assert [i["kind"] for i in body["interventions"]] == ["validate_assumptions", "organise_questions"]  # newest first
    assert all(i["status"] == "open" and i["signal_ids"] for i in body["interventions"])
    assert len(body["signals"]["Question"]) == 3
    assert [s["assumption_status"] for s in body["signals"]["Assumption"]] == ["confirmed", "untested"]
    assert body["assumptions"] == {"untested": 1, "confirmed": 1, "challenged": 0, "refuted": 0}
    assert body["turns"] == 4 and body["inflection"] is None


def test_an_unknown_conversation_or_another_world_has_no_insights(call: Callable[..., httpx.Response],
                                                                  research: list[tuple[str, dict[str, int]]]) -> None:
    for path in (f"/v1/worlds/{WORLD}/conversations/nobody/insights", "/v1/worlds/nowhere/conversations/research/insights"):
        body = call("GET", path).json()
        assert (body["turns"], body["inflection"], body["interventions"]) == (0, None, [])
        assert all(signals == [] for signals in body["signals"].values())


def test_dismissing_through_the_route_twice_is_fine_and_the_intervention_leaves_the_open_list(
        clients: Clients, call: Callable[..., httpx.Response], planning: list[tuple[str, dict[str, int]]]) -> None:
    [target] = [i for i in clients.store.list_interventions(WORLD, "planning", "open") if i.kind == "organise_questions"]
    path = f"/v1/worlds/{WORLD}/conversations/planning/interventions/{target.intervention_id}/dismissal"
    first = call("POST", path)
    assert first.status_code == 200, first.text
    assert first.json()["status"] == "dismissed" and first.json()["intervention_id"] == target.intervention_id
    again = call("POST", path)
    assert again.status_code == 200 and again.json() == first.json()
    assert Intervention.model_validate(first.json()).dismissed_at is not None
    open_now = call("GET", f"/v1/worlds/{WORLD}/conversations/planning/insights").json()["interventions"]
    assert target.intervention_id not in {i["intervention_id"] for i in open_now}


def test_dismissing_an_unknown_intervention_or_one_of_another_world_or_conversation_is_not_found(
        clients: Clients, call: Callable[..., httpx.Response], planning: list[tuple[str, dict[str, int]]]) -> None:
    [some, *_] = clients.store.list_interventions(WORLD, "planning")
    for path in (f"/v1/worlds/{WORLD}/conversations/planning/interventions/itv_nope/dismissal",
                 f"/v1/worlds/elsewhere/conversations/planning/interventions/{some.intervention_id}/dismissal",
                 f"/v1/worlds/{WORLD}/conversations/research/interventions/{some.intervention_id}/dismissal"):
        reply = call("POST", path)
        assert reply.status_code == 404 and reply.json()["error"]["code"] == "not_found", path
    unchanged = {i.intervention_id: i for i in clients.store.list_interventions(WORLD, "planning")}
    assert unchanged[some.intervention_id].status == some.status
