"""The client's retry and error rules, against a scripted transport (no server)."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest

from engram.sdk.client import (
    AsyncEngramClient,
    EngramClient,
    NotFound,
    RateLimited,
    RetryPolicy,
    ServerError,
    Unauthorized,
    Unreachable,
)

FAST = RetryPolicy(max_retries=2, base_delay_s=0.0)
HEALTHY = {"status": "ok", "dependencies": {}}


def _script(*replies: httpx.Response | Exception) -> tuple[httpx.MockTransport, list[httpx.Request]]:
    seen: list[httpx.Request] = []
    queue = list(replies)

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        reply = queue.pop(0)
        if isinstance(reply, Exception):
            raise reply
        return reply

    return httpx.MockTransport(handle), seen


def _error(status: int, code: str, headers: dict[str, str] | None = None) -> httpx.Response:
    return httpx.Response(status, json={"error": {"code": code, "message": f"{code} happened", "details": None}},
                          headers=headers)


def test_a_429_and_a_503_are_retried_and_the_third_answer_is_returned() -> None:
    transport, seen = _script(_error(429, "rate_limited", {"retry-after": "0"}), _error(503, "store_unavailable"),
                              httpx.Response(200, json=HEALTHY))
    with EngramClient("http://engram.test", transport=transport, retry=FAST) as client:
        assert client.health()["status"] == "ok"
    assert len(seen) == 3


def test_retries_give_up_with_the_last_errors_body() -> None:
    transport, seen = _script(*[_error(500, "internal_error")] * 3)
    with EngramClient("http://engram.test", transport=transport, retry=FAST) as client, \
            pytest.raises(ServerError) as failed:
        client.health()
    assert len(seen) == 3 and failed.value.code == "internal_error" and failed.value.message == "internal_error happened"


def test_a_4xx_other_than_429_is_never_retried() -> None:
    transport, seen = _script(_error(403, "forbidden"))
    with EngramClient("http://engram.test", transport=transport, retry=FAST) as client, pytest.raises(Unauthorized):
        client.health()
    assert len(seen) == 1


def test_a_dropped_connection_is_retried_then_reported_as_unreachable() -> None:
    transport, seen = _script(*[httpx.ConnectError("refused")] * 3)
    with EngramClient("http://engram.test", transport=transport, retry=FAST) as client, pytest.raises(Unreachable):
        client.health()
    assert len(seen) == 3


def test_a_retried_batch_carries_the_same_event_ids_so_it_is_stored_once() -> None:
    ingested = {"world_id": "w", "accepted": 1, "duplicates": 0, "enrichment_id": None, "events": []}
    transport, seen = _script(_error(503, "store_unavailable"), httpx.Response(202, json=ingested))
    with EngramClient("http://engram.test", transport=transport, retry=FAST) as client:
        client.add_events("w", [{"user_id": "u", "conversation_id": "c", "role": "user", "content": "hi"}])
    first, second = (json.loads(r.content)["events"][0]["event_id"] for r in seen)
    assert first == second and first.startswith("evt_")


def test_the_token_is_sent_as_a_bearer_header() -> None:
    transport, seen = _script(httpx.Response(200, json=HEALTHY))
    with EngramClient("http://engram.test", token="jwt-abc", transport=transport, retry=FAST) as client:
        client.health()
    assert seen[0].headers["authorization"] == "Bearer jwt-abc"


def test_retry_after_sets_the_wait_and_is_capped() -> None:
    policy = RetryPolicy(max_delay_s=5.0)
    assert policy.delay(0, httpx.Response(429, headers={"retry-after": "3"})) == 3.0
    assert policy.delay(0, httpx.Response(429, headers={"retry-after": "600"})) == 5.0
    assert 0.0 <= policy.delay(3, None) <= 4.0


def test_the_async_client_retries_the_same_way() -> None:
    async def handle(request: httpx.Request) -> httpx.Response:
        handle.calls += 1  # type: ignore[attr-defined]
        return _error(429, "rate_limited") if handle.calls < 3 else httpx.Response(200, json=HEALTHY)  # type: ignore[attr-defined]

    handle.calls = 0  # type: ignore[attr-defined]

    async def run() -> None:
        async with AsyncEngramClient("http://engram.test", transport=httpx.MockTransport(handle), retry=FAST) as c:
            assert (await c.health())["status"] == "ok"
        async with AsyncEngramClient("http://engram.test", transport=httpx.MockTransport(handle),
                                     retry=RetryPolicy(max_retries=0)) as c:
            handle.calls = -10  # type: ignore[attr-defined]
            with pytest.raises(RateLimited):
                await c.health()

    asyncio.run(run())


def test_an_entity_and_its_relationships_can_be_read_as_one_user() -> None:
    entity = {"world_id": "w", "entity_id": "e1", "name": "Alice", "entity_type": "person",
              "created_at": "2026-01-01T00:00:00Z"}
    transport, seen = _script(httpx.Response(200, json=entity), httpx.Response(200, json=[]),
                              httpx.Response(200, json=entity))
    with EngramClient("http://engram.test", transport=transport, retry=FAST) as client:
        client.entity("w", "e1", user_id="uma")
        client.relationships("w", "e1", depth=2, user_id="uma")
        client.entity("w", "e1")
    assert [dict(r.url.params) for r in seen] == [{"user_id": "uma"}, {"depth": "2", "user_id": "uma"}, {}]


# ---------------------------------------------------------------- the routes the CLI needs besides JSON in, JSON out
def test_an_export_page_is_read_as_text_with_its_next_cursor_and_an_import_is_sent_as_json_lines() -> None:
    page = '{"format":"engram-export"}\n{"type":"event"}'
    imported = {"world_id": "w", "source_world_id": "v", "records": 1, "inserted": {"event": 1}, "skipped": {},
                "vectors": "none", "vectors_computed": 0, "index_documents": 1}
    transport, seen = _script(httpx.Response(200, text=page, headers={"x-engram-next-cursor": "c2"}),
                              httpx.Response(200, text=page), httpx.Response(200, json=imported))
    with EngramClient("http://engram.test", transport=transport, retry=FAST) as client:
        first = client.export_page("w", user_id="ana", vectors=False, max_bytes=10_000)
        last = client.export_page("w", cursor=first.next_cursor)
        result = client.import_document("w", page)
    assert (first.text, first.next_cursor, last.next_cursor) == (page, "c2", None)
    assert (seen[0].url.path, dict(seen[0].url.params)) == ("/v1/worlds/w/users/ana/export",
                                                            {"vectors": "false", "max_bytes": "10000"})
    assert dict(seen[1].url.params) == {"vectors": "true", "cursor": "c2"}
    assert seen[2].headers["content-type"] == "application/x-ndjson" and seen[2].content == page.encode()
    assert result.inserted == {"event": 1}


def test_a_correction_clears_the_valid_times_named_and_sends_only_the_fields_given() -> None:
    transport, seen = _script(_error(404, "not_found"))
    with EngramClient("http://engram.test", transport=transport, retry=FAST) as client, pytest.raises(NotFound):
        client.correct_memory("w", "sem_1", confidence=0.5, clear=["valid_to"])
    assert json.loads(seen[0].content) == {"confidence": 0.5, "valid_to": None}


def test_a_consolidation_is_started_then_followed_by_its_execution_id() -> None:
    run = {"world_id": "w", "execution_id": "arn:x/1", "status": "running"}
    transport, seen = _script(httpx.Response(202, json={"world_id": "w", "execution_id": "arn:x/1"}),
                              httpx.Response(200, json=run))
    with EngramClient("http://engram.test", transport=transport, retry=FAST) as client:
        execution = client.start_consolidation("w")
        assert client.consolidation("w", execution).status == "running"
    assert seen[1].url.raw_path == b"/v1/worlds/w/consolidations/arn%3Ax%2F1"
