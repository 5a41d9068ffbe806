"""The first context as a client sees it: an answer that needs an entity's full record, which no search hit holds;
the question names her and her record is short, so it comes in full with the first context (a longer one would
come through a round of expand_entity: tests/integration/test_query_loop.py)."""

from __future__ import annotations

import time

import httpx
import pytest

from tests.e2e.conftest import Server

pytestmark = pytest.mark.e2e

WORLD = "e2e-loop"
USER = "nadia"


def _enriched(server: Server, event_ids: list[str], timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while True:
        statuses = {httpx.get(f"{server.url}/v1/worlds/{WORLD}/events/{e}").json()["enrichment_status"]
                    for e in event_ids}
        if statuses == {"enriched"}:
            return
        if "failed" in statuses or time.monotonic() > deadline:
            pytest.fail(f"enrichment did not finish: {statuses}\n{server.log.read_text()[-3000:]}")
        time.sleep(0.3)


def test_an_answer_that_needs_a_named_entitys_short_record_gets_it_in_the_first_context(
        local_server: Server) -> None:
    # Where Nadia lives and where she works were said in two conversations a week apart: no event, memory or
    # search hit holds both; her entity's full record (every fact of hers) does.
    said = [("loop-1", "c1", "2026-03-02T09:00:00Z", "Hello! My name is Nadia and I live in Porto."),
            ("loop-2", "c1", "2026-03-02T09:01:00Z", "The weather here was rainy all week."),
            ("loop-3", "c2", "2026-03-09T18:00:00Z", "I work at Azul Airlines as a pilot."),
            ("loop-4", "c2", "2026-03-09T18:02:00Z", "Long flights make me tired.")]
    for event_id, conversation, when, content in said:  # one batch per turn, as an agent sends them
        accepted = httpx.post(f"{local_server.url}/v1/worlds/{WORLD}/events", timeout=30, json={"events": [
            {"event_id": event_id, "user_id": USER, "conversation_id": conversation, "role": "user",
             "content": content, "occurred_at": when}]})
        assert accepted.status_code == 202, accepted.text
    _enriched(local_server, [e for e, *_ in said])

    reply = httpx.post(f"{local_server.url}/v1/worlds/{WORLD}/queries", timeout=120,
                       json={"user_id": USER, "question": "Where does Nadia live and work?"})

    assert reply.status_code == 200, reply.text
    result = reply.json()
    assert result["status"] == "completed" and result["model"] == "offline-heuristic"
    steps = [(t["step"], t["outcome"]) for t in result["trace"]]
    # Her record is short (two facts), so it comes in full with the first context: one call answers both.
    assert steps == [("init", "context_built"), ("ask", "answer"), ("finish", "completed")]
    answer = result["answer"]
    assert "Porto" in answer["content"] and "Azul Airlines" in answer["content"]
    # Each value from the fact that states it, both facts hers (her full record brought them in).
    facts = [s for s in answer["sources"] if s["kind"] == "semantic"]
    assert {v for v in ("Porto", "Azul Airlines") for s in facts if v in s["excerpt"]} == {"Porto", "Azul Airlines"}
    assert all(s["excerpt"].lower().startswith("nadia") for s in facts)
    assert result["info_requests_used"] == 0 and result["remaining_info_requests"] == 3
    assert answer["confidence_level"] in ("high", "medium") and not answer["forced"]

    stored = httpx.get(f"{local_server.url}/v1/worlds/{WORLD}/queries/{result['query_id']}").json()
    assert stored["status"] == "completed" and stored["question"] == "Where does Nadia live and work?"
    assert stored["timings"]["steps"] == 3 and stored["timings"]["loop_ms"] > 0
    recent = httpx.get(f"{local_server.url}/v1/worlds/{WORLD}/queries", params={"user_id": USER, "limit": 5}).json()
    assert [q["query_id"] for q in recent] == [result["query_id"]]
