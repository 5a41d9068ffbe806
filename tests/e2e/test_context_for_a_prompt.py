"""Memory as text for an agent's prompt: GET .../users/{user}/context through the HTTP API, the Python client
and the MCP tool `get_context`; the Komputa prefixes and relative times, the current facts, the token budget,
and nothing of another user."""

from __future__ import annotations

from typing import Any

import anyio
import httpx
import pytest
from mcp import Client

from engram.local.mcp_server import build_server
from engram.memory.context import FACTS_HEADER
from engram.retrieval.conversation import HEADER
from engram.sdk.client import AsyncEngramClient, EngramClient
from tests.e2e.conftest import Server

pytestmark = pytest.mark.e2e
WORLD = "ctx"


@pytest.fixture(scope="module")
def remembered(local_server: Server) -> Server:
    with EngramClient(local_server.url) as client:
        client.add_events(WORLD, [
            {"event_id": "ctx-1", "user_id": "noa", "conversation_id": "n1", "role": "user",
             "content": "My name is Noa and I live in Porto."},
            {"event_id": "ctx-2", "user_id": "noa", "conversation_id": "n1", "role": "assistant",
             "content": "Nice to meet you, Noa. Porto is lovely."},
            {"event_id": "ctx-3", "user_id": "zed", "conversation_id": "z1", "role": "user",
             "content": "My name is Zed and I live in Oslo. My locker code is BANANA42."},
        ], wait=True)
    return local_server


def test_the_route_gives_the_rules_context_and_current_facts_as_text_and_items(remembered: Server) -> None:
    reply = httpx.get(f"{remembered.url}/v1/worlds/{WORLD}/users/noa/context",
                      params={"q": "Where do I live?", "conversation_id": "n1"}, timeout=60)
    assert reply.status_code == 200, reply.text
    body = reply.json()
    lines = body["text"].splitlines()
    assert lines[0] == HEADER, body["text"]
    assert "- You said (just now): My name is Noa and I live in Porto." in lines
    assert "- I responded (just now): Nice to meet you, Noa. Porto is lovely." in lines
    assert {i["kind"] for i in body["items"]} >= {"exchange"}
    assert all(i["line"] in lines for i in body["items"])  # every item is one whole line of the text
    facts = [i for i in body["items"] if i["kind"] == "fact"]
    assert facts and any("Porto" in f["text"] for f in facts) and FACTS_HEADER in lines
    assert all(f["user_id"] in (None, "noa") for f in facts)
    assert body["estimated_tokens"] <= body["max_tokens"] == 2000


def test_another_users_memory_never_reaches_the_context(remembered: Server) -> None:
    for conversation in (None, "z1"):  # naming another user's conversation reads nothing of it
        params = {"q": "Oslo BANANA42 locker code Zed", **({"conversation_id": conversation} if conversation else {})}
        body = httpx.get(f"{remembered.url}/v1/worlds/{WORLD}/users/noa/context", params=params, timeout=60).json()
        shown = body["text"] + str(body["items"])  # the answer echoes the query; what it shows is checked
        assert "Oslo" not in shown and "BANANA42" not in shown and "ctx-3" not in shown
        assert all(i["user_id"] in (None, "noa") for i in body["items"])


def test_the_budget_drops_whole_items_and_bad_parameters_answer_422(remembered: Server) -> None:
    with EngramClient(remembered.url) as client:
        full = client.context(WORLD, "noa", "Where do I live?", conversation_id="n1")
        small = client.context(WORLD, "noa", "Where do I live?", conversation_id="n1", max_tokens=25)
    assert small.dropped > 0 and len(small.items) < len(full.items)
    assert small.estimated_tokens <= 25 and all(i.line in small.text.splitlines() for i in small.items)
    assert not small.items or small.items[0].kind in ("exchange", "fact")  # the lowest priority went first
    for params in ({"q": ""}, {"q": "x", "max_tokens": 0}, {"q": "x", "conversation_id": "bad id!"}):
        reply = httpx.get(f"{remembered.url}/v1/worlds/{WORLD}/users/noa/context", params=params, timeout=30)
        assert reply.status_code == 422, reply.text


def test_the_mcp_tool_get_context_returns_the_same_context(remembered: Server) -> None:
    async def run() -> Any:
        async with AsyncEngramClient(remembered.url) as engram, Client(build_server(engram)) as mcp:
            direct = await engram.context(WORLD, "noa", "Where do I live?", conversation_id="n1")
            reply = await mcp.call_tool("get_context", {"world": WORLD, "user_id": "noa", "q": "Where do I live?",
                                                        "conversation_id": "n1"})
            return direct, reply

    direct, reply = anyio.run(run)
    assert not reply.is_error, reply.content
    assert reply.structured_content["text"] == direct.text
    assert "Porto" in reply.structured_content["text"] and "Oslo" not in reply.structured_content["text"]
