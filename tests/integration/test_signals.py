"""Signals on the real parts: what a conversation's turns leave as typed signals, stored once, and the
assumption lifecycle through the HTTP API."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from engram.enrichment.extract import extract_events
from engram.enrichment.ingest import ingest_events
from engram.enrichment.resolve import resolve_events
from engram.enrichment.signals import extract_signals
from engram.model.events import IngestRequest
from engram.model.signals import SignalCursor
from engram.ports.clients import Clients
from tests.asgi import api_client

pytestmark = pytest.mark.integration
T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
WORLD = "ws"


def _ingest(clients: Clients, *turns: tuple[str, str, str], conversation: str = "c1", minute: int = 0) -> list[str]:
    ingest_events(clients, clients.world(WORLD), IngestRequest.model_validate({"events": [
        {"event_id": eid, "user_id": "maya", "conversation_id": conversation, "role": role, "content": text,
         "occurred_at": (T0 + timedelta(minutes=minute + i)).isoformat()}
        for i, (eid, role, text) in enumerate(turns)]}))
    return [eid for eid, _role, _text in turns]


def _extract(clients: Clients, ids: list[str]) -> dict[str, int]:
    resolve_events(clients, clients.world(WORLD), ids)
    return extract_events(clients, clients.world(WORLD), ids)


def _typed(clients: Clients, conversation: str = "c1") -> list[tuple[str, str]]:
    return [(s.signal_type, s.content) for s in clients.store.list_signals(WORLD, conversation)]


@pytest.fixture(scope="module")
def first_batch(clients: Clients) -> dict[str, int]:
    ids = _ingest(clients,
                  ("s1", "user", "We are planning the Q3 launch. Should we move it to May?"),
                  ("s2", "assistant", "Moving it to May gives the team two more sprints."),
                  ("s3", "user", "I assume the vendor delivers the chips on time. The deadline is March 3."),
                  ("s4", "user", "According to the survey, users want dark mode. I want to ship dark mode first."),
                  ("s5", "user", "What does the contract say?"))
    return _extract(clients, ids)


def test_an_extracted_conversation_leaves_typed_signals_in_the_order_they_were_said(
        clients: Clients, first_batch: dict[str, int]) -> None:
    assert first_batch["signals"] == 4
    assert _typed(clients) == [
        ("Claim", "We are planning the Q3 launch."),
        ("DecisionIntent", "Should we move it to May?"),
        ("Assumption", "I assume the vendor delivers the chips on time."),
        ("Constraint", "The deadline is March 3."),
    ]  # the assistant's turn is not read; the last two turns (under 200 characters, no trigger phrase) wait
    [assumption] = clients.store.list_signals(WORLD, "c1", "Assumption")
    assert assumption.assumption_status == "untested" and assumption.event_id == "s3" and assumption.user_id == "maya"


def test_waiting_turns_are_read_with_the_turn_that_triggers_and_a_repeat_is_stored_once(
        clients: Clients, first_batch: dict[str, int]) -> None:
    ids = _ingest(clients, ("s6", "user", "the deadline is   MARCH 3."), minute=10)
    assert _extract(clients, ids)["signals"] == 3  # s4's two and s5's; s6 repeats s3's constraint
    assert [s.event_id for s in clients.store.list_signals(WORLD, "c1", "EvidenceMention")] == ["s4"]
    assert [s.event_id for s in clients.store.list_signals(WORLD, "c1", "Goal")] == ["s4"]
    assert [s.event_id for s in clients.store.list_signals(WORLD, "c1", "Question")] == ["s5"]
    assert [s.event_id for s in clients.store.list_signals(WORLD, "c1", "Constraint")] == ["s3"]


def test_running_the_step_again_stores_nothing_new(clients: Clients, first_batch: dict[str, int]) -> None:
    before = clients.store.list_signals(WORLD, "c1")
    assert _extract(clients, ["s1", "s2", "s3", "s4", "s5", "s6"])["signals"] == 0
    assert clients.store.list_signals(WORLD, "c1") == before


def test_the_same_sentence_in_another_conversation_is_its_own_signal(clients: Clients,
                                                                     first_batch: dict[str, int]) -> None:
    ids = _ingest(clients, ("t1", "user", "The deadline is March 3."), conversation="c2", minute=20)
    assert _extract(clients, ids)["signals"] == 1
    assert _typed(clients, "c2") == [("Constraint", "The deadline is March 3.")]


def test_another_world_sees_none_of_them(clients: Clients, first_batch: dict[str, int]) -> None:
    assert clients.store.list_signals("elsewhere", "c1") == []
    some = clients.store.list_signals(WORLD, "c1")[0]
    assert clients.store.get_signal("elsewhere", some.signal_id) is None


def test_a_cursor_moved_by_a_concurrent_step_is_not_overwritten(clients: Clients, first_batch: dict[str, int]) -> None:
    [stale] = clients.store.signal_cursors(WORLD, ["c1"]).values()
    assert clients.store.save_signal_cursors(WORLD, [stale]) == {"c1"}
    assert clients.store.save_signal_cursors(WORLD, [stale]) == set()  # read at a version no longer current
    new = SignalCursor(world_id=WORLD, conversation_id="c1", last_event_id="x", last_occurred_at=T0)
    assert clients.store.save_signal_cursors(WORLD, [new]) == set()  # "none was read" but one exists


def test_a_step_that_loses_the_cursor_race_plans_again_and_loses_no_turn(
        clients: Clients, monkeypatch: pytest.MonkeyPatch) -> None:
    ids = _ingest(clients, ("r1", "user", "Hello there, this is the kickoff."),
                  ("r2", "user", "The staging API is slow under load."), conversation="c3", minute=30)
    events = clients.store.get_events(WORLD, ids)
    extract_signals(clients, clients.world(WORLD), events[:1])  # r1, the first message: the cursor now exists
    rival = clients.store.get_events(WORLD, _ingest(clients, ("r3", "user", "Deadline review happens today."),
                                                    conversation="c3", minute=40))
    read = clients.store.signal_cursors
    raced: list[bool] = []

    def read_then_race(world_id: str, conversation_ids: Any) -> Any:
        cursors = read(world_id, conversation_ids)
        if not raced:  # between this step's read and its write, a rival step moves the cursor past r2
            raced.append(True)
            extract_signals(clients, clients.world(WORLD), rival)
        return cursors

    monkeypatch.setattr(clients.store, "signal_cursors", read_then_race)
    extract_signals(clients, clients.world(WORLD), events[1:])
    # r2 waited for a trigger when the write failed; planned again, it is behind the rival's watermark and read.
    assert ("Claim", "The staging API is slow under load.") in _typed(clients, "c3")
    cursor = read(WORLD, ["c3"])["c3"]
    assert cursor.last_event_id == "r3" and cursor.pending_event_ids == ()


# ---------------------------------------------------------------- the HTTP API
@pytest.fixture(scope="module")
def call(clients: Clients, first_batch: dict[str, int]) -> Iterator[Callable[..., httpx.Response]]:
    with api_client(clients) as client:
        yield client.request


def test_the_signals_route_lists_a_conversation_s_signals_by_type(call: Callable[..., httpx.Response]) -> None:
    every = call("GET", f"/v1/worlds/{WORLD}/conversations/c1/signals")
    assert every.status_code == 200 and len(every.json()) >= 6
    goals = call("GET", f"/v1/worlds/{WORLD}/conversations/c1/signals", params={"type": "Goal"}).json()
    assert [g["content"] for g in goals] == ["I want to ship dark mode first."]
    assert call("GET", f"/v1/worlds/{WORLD}/conversations/c1/signals", params={"type": "Rumour"}).status_code == 422
    assert call("GET", "/v1/worlds/elsewhere/conversations/c1/signals").json() == []


def test_an_assumption_s_status_changes_through_the_api(clients: Clients, call: Callable[..., httpx.Response]) -> None:
    [assumption] = clients.store.list_signals(WORLD, "c1", "Assumption")
    reply = call("POST", f"/v1/worlds/{WORLD}/signals/{assumption.signal_id}/status", json={"status": "challenged"})
    assert reply.status_code == 200, reply.text
    assert reply.json()["assumption_status"] == "challenged" and reply.json()["signal_id"] == assumption.signal_id
    stored = clients.store.get_signal(WORLD, assumption.signal_id)
    assert stored is not None and stored.assumption_status == "challenged" and stored.updated_at > assumption.updated_at


def test_the_status_route_refuses_a_claim_a_bad_status_and_an_unknown_id(clients: Clients,
                                                                          call: Callable[..., httpx.Response]) -> None:
    [claim] = clients.store.list_signals(WORLD, "c1", "Claim")
    [assumption] = clients.store.list_signals(WORLD, "c1", "Assumption")
    refused = call("POST", f"/v1/worlds/{WORLD}/signals/{claim.signal_id}/status", json={"status": "confirmed"})
    assert refused.status_code == 422 and refused.json()["error"]["code"] == "invalid_input"
    bad = call("POST", f"/v1/worlds/{WORLD}/signals/{assumption.signal_id}/status", json={"status": "maybe"})
    assert bad.status_code == 422 and bad.json()["error"]["code"] == "invalid_input"
    unknown = call("POST", f"/v1/worlds/{WORLD}/signals/sig_nope/status", json={"status": "confirmed"})
    assert unknown.status_code == 404 and unknown.json()["error"]["code"] == "not_found"
    elsewhere = call("POST", f"/v1/worlds/elsewhere/signals/{assumption.signal_id}/status", json={"status": "refuted"})
    assert elsewhere.status_code == 404
    unchanged = clients.store.get_signal(WORLD, claim.signal_id)
    assert unchanged is not None and unchanged.assumption_status is None


# ---------------------------------------------------------------- dismissal and vectors (seed 003, Signal Lifecycle)
@pytest.fixture(scope="module")
def dismissals(clients: Clients) -> list[str]:
    return _extract(clients, _ingest(clients, ("d1", "user", "The deadline is March 3."),
                                     ("d2", "user", "I assume the vendor ships the chips on time."),
                                     ("d3", "user", "Should we move the launch to May?"),
                                     conversation="dismiss", minute=100))


def _events_of(clients: Clients, conversation: str, *, include_dismissed: bool = False) -> list[str]:
    return [s.event_id for s in clients.store.list_signals(WORLD, conversation, include_dismissed=include_dismissed)]


def test_a_signal_said_again_after_its_dismissal_is_stored_again_and_never_before(
        clients: Clients, dismissals: list[str]) -> None:
    assert _events_of(clients, "dismiss") == ["d1", "d2", "d3"]
    assert _extract(clients, _ingest(clients, ("d4", "user", "the deadline is MARCH 3."), conversation="dismiss",
                                     minute=110))["signals"] == 0  # the first still stands
    [deadline] = [s for s in clients.store.list_signals(WORLD, "dismiss") if s.signal_type == "Constraint"]
    at = datetime(2026, 3, 2, tzinfo=UTC)
    dismissed = clients.store.dismiss_signal(WORLD, deadline.signal_id, at)
    assert dismissed is not None and dismissed.dismissed_at == at
    assert _events_of(clients, "dismiss") == ["d2", "d3"]
    assert _extract(clients, ["d1", "d2", "d3", "d4"])["signals"] == 0  # reading the same turns again: no revival
    assert _extract(clients, _ingest(clients, ("d5", "user", "The deadline is March 3."), conversation="dismiss",
                                     minute=120))["signals"] == 1
    assert _events_of(clients, "dismiss") == ["d2", "d3", "d5"]
    assert _events_of(clients, "dismiss", include_dismissed=True) == ["d1", "d2", "d3", "d5"]
    again = clients.store.dismiss_signal(WORLD, deadline.signal_id, at + timedelta(days=1))
    assert again is not None and again.dismissed_at == at  # dismissing twice keeps the first time
    assert clients.store.dismiss_signal(WORLD, "sig_nope", at) is None
    assert clients.store.dismiss_signal("elsewhere", deadline.signal_id, at) is None


def test_the_insights_read_the_recent_signals_without_the_dismissed_ones(clients: Clients,
                                                                          dismissals: list[str]) -> None:
    [assumption] = [s for s in clients.store.list_signals(WORLD, "dismiss") if s.signal_type == "Assumption"]
    clients.store.dismiss_signal(WORLD, assumption.signal_id, T0)
    recent = [s.signal_id for s in clients.store.recent_signals(WORLD, "dismiss", 10)]
    assert assumption.signal_id not in recent and recent
    assert recent == [s.signal_id for s in clients.store.list_signals(WORLD, "dismiss")][-10:]


def test_each_stored_signal_carries_a_vector_of_the_deployment_s_dimension_and_q_ranks_by_it(
        clients: Clients, pg_url: str, dismissals: list[str]) -> None:
    import psycopg

    with psycopg.connect(pg_url) as conn:
        dims = conn.execute("SELECT signal_id, vector_dims(embedding) FROM signals WHERE world_id = %s "
                            "AND conversation_id = 'dismiss'", (WORLD,)).fetchall()
    assert dims and {d for _, d in dims} == {384}
    ranked = clients.store.list_signals(WORLD, "dismiss", near=clients.embedder.embed(["move the launch to May"])[0])
    assert ranked[0].content == "Should we move the launch to May?"


def test_the_dismissal_route_dismisses_and_answers_404_for_an_unknown_or_another_world_s_signal(
        clients: Clients, call: Callable[..., httpx.Response]) -> None:
    _extract(clients, _ingest(clients, ("h1", "user", "The budget is capped at 40k."),
                              ("h2", "user", "Should we hire a contractor for the audit?"), conversation="http",
                              minute=200))
    budget, hire = clients.store.list_signals(WORLD, "http")
    reply = call("POST", f"/v1/worlds/{WORLD}/signals/{budget.signal_id}/dismissal")
    assert reply.status_code == 200, reply.text
    assert reply.json()["signal_id"] == budget.signal_id and reply.json()["dismissed_at"] is not None
    twice = call("POST", f"/v1/worlds/{WORLD}/signals/{budget.signal_id}/dismissal")
    assert twice.status_code == 200 and twice.json()["dismissed_at"] == reply.json()["dismissed_at"]
    listed = call("GET", f"/v1/worlds/{WORLD}/conversations/http/signals").json()
    assert [s["signal_id"] for s in listed] == [hire.signal_id]
    every = call("GET", f"/v1/worlds/{WORLD}/conversations/http/signals", params={"include_dismissed": "true"}).json()
    assert [s["signal_id"] for s in every] == [budget.signal_id, hire.signal_id]
    unknown = call("POST", f"/v1/worlds/{WORLD}/signals/sig_nope/dismissal")
    assert unknown.status_code == 404 and unknown.json()["error"]["code"] == "not_found"
    elsewhere = call("POST", f"/v1/worlds/elsewhere/signals/{hire.signal_id}/dismissal")
    assert elsewhere.status_code == 404
    stored = clients.store.get_signal(WORLD, hire.signal_id)
    assert stored is not None and stored.dismissed_at is None


def test_the_signals_route_ranks_by_meaning_with_q(call: Callable[..., httpx.Response]) -> None:
    ranked = call("GET", f"/v1/worlds/{WORLD}/conversations/c1/signals", params={"q": "vendor chips on time"})
    assert ranked.status_code == 200
    assert ranked.json()[0]["content"] == "I assume the vendor delivers the chips on time."
    assert call("GET", f"/v1/worlds/{WORLD}/conversations/c1/signals", params={"q": ""}).status_code == 422


def test_the_clients_list_and_dismiss_signals(clients: Clients) -> None:
    import anyio

    from engram.local.server import build_app
    from engram.sdk.client import AsyncEngramClient, EngramClient, NotFound
    from tests.asgi import _Bridge

    _extract(clients, _ingest(clients, ("k1", "user", "The deadline for the report is Friday."),
                              ("k2", "user", "Should we book the room for Monday?"), conversation="sdk", minute=300))
    app = build_app()
    with EngramClient("http://engram.local", transport=_Bridge(httpx.ASGITransport(app=app))  # type: ignore[arg-type]
                      ) as client:
        closes, book = client.signals(WORLD, "sdk")
        assert client.dismiss_signal(WORLD, closes.signal_id).dismissed_at is not None
        assert [s.signal_id for s in client.signals(WORLD, "sdk")] == [book.signal_id]
        assert [s.signal_id for s in client.signals(WORLD, "sdk", include_dismissed=True)] == [
            closes.signal_id, book.signal_id]
        with pytest.raises(NotFound):
            client.dismiss_signal(WORLD, "sig_nope")

    async def run() -> list[Any]:
        async with AsyncEngramClient("http://engram.local", transport=httpx.ASGITransport(app=app)  # type: ignore[arg-type]
                                     ) as client:
            await client.dismiss_signal(WORLD, book.signal_id)
            return await client.signals(WORLD, "sdk", q="book the room")

    assert anyio.run(run) == []
