"""A client's first session: tell engram something, ask about it, get an answer that cites it."""

from __future__ import annotations

import time
from typing import Any

import httpx
import pytest

from tests.e2e.conftest import Server

pytestmark = pytest.mark.e2e

WORLD = "e2e"
USER = "dana"


def _wait_enriched(server: Server, event_ids: list[str], timeout: float = 90) -> list[dict[str, Any]]:
    deadline = time.monotonic() + timeout
    while True:
        events = [httpx.get(f"{server.url}/v1/worlds/{WORLD}/events/{e}").json() for e in event_ids]
        statuses = {e["enrichment_status"] for e in events}
        if statuses <= {"enriched", "failed"}:
            return events
        if time.monotonic() > deadline:
            pytest.fail(f"enrichment did not finish: {statuses}\n{server.log.read_text()[-3000:]}")
        time.sleep(0.3)


def test_a_stated_fact_is_remembered_and_answered_with_its_source(local_server: Server) -> None:
    conversation = [
        {"event_id": "e2e-1", "role": "user", "content": "Hi! My name is Dana and I live in Lisbon."},
        {"event_id": "e2e-2", "role": "assistant", "content": "Nice to meet you, Dana. Lisbon is lovely."},
        {"event_id": "e2e-3", "role": "user", "content": "I work at Acme Robotics as a firmware engineer."},
    ]
    body = {"events": [{**e, "user_id": USER, "conversation_id": "c1"} for e in conversation]}
    accepted = httpx.post(f"{local_server.url}/v1/worlds/{WORLD}/events", json=body, timeout=30)
    assert accepted.status_code == 202, accepted.text
    assert [e["duplicate"] for e in accepted.json()["events"]] == [False, False, False]

    events = _wait_enriched(local_server, ["e2e-1", "e2e-2", "e2e-3"])
    assert {e["enrichment_status"] for e in events} == {"enriched"}

    reply = httpx.post(f"{local_server.url}/v1/worlds/{WORLD}/queries",
                       json={"user_id": USER, "question": "Where does Dana live?"}, timeout=120)
    assert reply.status_code == 200, reply.text
    result = reply.json()
    assert result["status"] == "completed"
    assert "Lisbon" in result["answer"]["content"]
    assert "e2e-1" in {s["id"] for s in result["answer"]["sources"]}
    assert result["trace"][0]["step"] == "init"


def test_a_replayed_event_is_acknowledged_as_a_duplicate_and_stored_once(local_server: Server) -> None:
    event = {"event_id": "e2e-dup", "user_id": USER, "conversation_id": "c2", "role": "user",
             "content": "Remember that I prefer tea over coffee."}
    first = httpx.post(f"{local_server.url}/v1/worlds/{WORLD}/events", json={"events": [event]}, timeout=30)
    second = httpx.post(f"{local_server.url}/v1/worlds/{WORLD}/events", json={"events": [event]}, timeout=30)
    assert first.status_code == second.status_code == 202
    assert first.json()["events"][0]["duplicate"] is False
    assert second.json()["events"][0]["duplicate"] is True
    assert second.json()["enrichment_id"] is None


def test_the_cli_asks_and_prints_the_answer_sources_and_trace(local_server: Server) -> None:
    _wait_enriched(local_server, ["e2e-1"])
    done = local_server.cli("ask", "Where does Dana live?", "--world", WORLD, "--user", USER)
    assert done.returncode == 0, done.stderr
    assert "Lisbon" in done.stdout
    assert "sources:" in done.stdout and "e2e-1" in done.stdout
    assert "trace:" in done.stdout and "init" in done.stdout


def test_bad_input_answers_422_with_the_path_of_the_bad_field(local_server: Server) -> None:
    bad = {"events": [{"user_id": USER, "conversation_id": "c1", "role": "robot", "content": "x"}]}
    reply = httpx.post(f"{local_server.url}/v1/worlds/{WORLD}/events", json=bad, timeout=30)
    assert reply.status_code == 422
    assert "role" in str(reply.json()["error"]["details"])


def test_after_a_job_change_the_answer_is_the_new_employer_with_the_old_one_as_history(local_server: Server) -> None:
    world, user = "e2e-change", "dee"
    said = [("chg-1", "2026-03-02T09:00:00+00:00", "I work at Acme Robotics as a firmware engineer."),
            ("chg-2", "2026-09-14T09:00:00+00:00", "I work at Globex now.")]  # months later: the new value wins
    body = {"events": [{"event_id": i, "user_id": user, "conversation_id": "c-chg", "role": "user", "content": text,
                        "occurred_at": at} for i, at, text in said]}
    assert httpx.post(f"{local_server.url}/v1/worlds/{world}/events", json=body, timeout=30).status_code == 202
    deadline = time.monotonic() + 90
    while {httpx.get(f"{local_server.url}/v1/worlds/{world}/events/{i}").json()["enrichment_status"]
           for i, _, _ in said} - {"enriched", "failed"}:
        assert time.monotonic() < deadline, "enrichment did not finish"
        time.sleep(0.3)

    reply = httpx.post(f"{local_server.url}/v1/worlds/{world}/queries",
                       json={"user_id": user, "question": "Where does Dee work now?"}, timeout=120)

    assert reply.status_code == 200, reply.text
    answer = reply.json()["answer"]
    assert answer["content"].startswith("Globex (since 14 September 2026; before: Acme Robotics")
    assert answer["confidence_level"] in ("high", "medium")
    assert "chg-2" in {s["id"] for s in answer["sources"]}  # the turn that says it, cited after the facts
