"""The Python client against the local server, as an agent's code would use it."""

from __future__ import annotations

import asyncio
import time

import pytest

from engram.model.events import EventIn
from engram.model.queries import QueryConfig
from engram.sdk.client import AsyncEngramClient, BadRequest, EngramClient, NotFound, RetryPolicy
from tests.e2e.conftest import Server

pytestmark = pytest.mark.e2e

WORLD = "client"


def _wait_enriched(engram: EngramClient, event_ids: list[str], timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while {engram.get_event(WORLD, e).enrichment_status for e in event_ids} - {"enriched", "failed"}:
        assert time.monotonic() < deadline, "enrichment did not finish"
        time.sleep(0.3)


@pytest.fixture(scope="module")
def engram(local_server: Server) -> EngramClient:
    with EngramClient(local_server.url, retry=RetryPolicy(max_retries=1, base_delay_s=0.05)) as client:
        response = client.add_events(WORLD, [
            EventIn(user_id="omar", conversation_id="k1", role="user",
                    content="My name is Omar and I live in Nairobi."),
            {"user_id": "omar", "conversation_id": "k1", "role": "user", "content": "I work at Savanna Labs."},
        ])
        assert response.accepted == 2 and all(e.event_id.startswith("evt_") for e in response.events)
        _wait_enriched(client, [e.event_id for e in response.events])
        yield client


def test_the_client_remembers_then_answers_with_a_typed_response_citing_the_event(engram: EngramClient) -> None:
    reply = engram.ask(WORLD, "omar", "Where does Omar live?", config=QueryConfig(max_info_requests=1))
    assert reply.status == "completed" and reply.answer is not None
    assert "Nairobi" in reply.answer.content
    assert any(s.kind in {"event", "episodic", "semantic"} for s in reply.answer.sources)


def test_a_submitted_query_is_read_back_when_it_finishes(engram: EngramClient) -> None:
    query_id = engram.submit(WORLD, "omar", "Where does Omar work?")
    done = engram.wait(WORLD, query_id, timeout=60, poll_s=0.2)
    assert done.status == "completed" and done.answer is not None and "Savanna" in done.answer.content


def test_a_research_query_runs_on_the_server_and_reads_back_with_its_plan_and_citations(engram: EngramClient) -> None:
    query_id = engram.submit(WORLD, "omar", "Where does Omar live and where does he work?", research=True)
    done = engram.wait(WORLD, query_id, timeout=60, poll_s=0.2)
    assert (done.mode, done.status) == ("research", "completed") and done.answer is not None
    assert "Nairobi" in done.answer.content and "Savanna" in done.answer.content and done.answer.sources
    assert done.research is not None and len(done.research.sub_questions) >= 2
    assert [t.step for t in done.trace][:3] == ["init", "plan", "gather"] and done.trace[-1].step == "finish"


def test_search_entities_and_memories_come_back_typed(engram: EngramClient) -> None:
    assert engram.search(WORLD, "Nairobi", user_id="omar").hits
    names = {e.name.lower() for e in engram.entities(WORLD)}
    assert "nairobi" in names
    assert any("Nairobi" in str(m) for m in engram.memories(WORLD, "omar", layer="semantic"))
    assert engram.conflicts(WORLD) == []


def test_errors_carry_the_api_error_body(engram: EngramClient) -> None:
    with pytest.raises(BadRequest) as bad:
        engram.add_events(WORLD, [{"user_id": "omar", "conversation_id": "k1", "role": "robot", "content": "x"}])
    assert bad.value.status == 422 and "role" in str(bad.value.details)
    with pytest.raises(NotFound) as missing:
        engram.get_query(WORLD, "qry_missing")
    assert missing.value.code == "not_found"


def test_the_async_client_does_the_same_over_the_same_routes(local_server: Server, engram: EngramClient) -> None:
    async def session() -> tuple[str, str]:
        async with AsyncEngramClient(local_server.url) as client:
            health = await client.health()
            reply = await client.ask(WORLD, "omar", "Where does Omar live?")
            assert reply.answer is not None
            return str(health["status"]), reply.answer.content

    status, content = asyncio.run(session())
    assert status == "ok" and "Nairobi" in content
