"""The MCP tools, called through the MCP SDK's in-process client, against the local server."""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import pytest
from mcp import Client

from engram.local.mcp_server import build_server
from engram.sdk.client import AsyncEngramClient
from tests.e2e.conftest import Server

pytestmark = pytest.mark.e2e
WORLD = "mcp"


def _with_tools(server: Server, body: Callable[[Client], Awaitable[Any]]) -> Any:
    async def run() -> Any:
        async with AsyncEngramClient(server.url) as engram, Client(build_server(engram)) as mcp:
            return await body(mcp)

    return anyio.run(run)


def _result(reply: Any) -> Any:
    assert not reply.is_error, reply.content
    if reply.structured_content is not None:
        return reply.structured_content
    return json.loads(reply.content[0].text)


def test_the_six_tools_are_listed_with_the_apis_own_schemas(local_server: Server) -> None:
    async def body(mcp: Client) -> Any:
        return (await mcp.list_tools()).tools

    tools = {t.name: t for t in _with_tools(local_server, body)}
    assert set(tools) >= {"remember", "recall", "ask", "forget", "get_entity", "get_context", "correct_memory",
                          "delete_memory"}
    events = tools["remember"].input_schema["properties"]["events"]
    assert events["maxItems"] == 100
    defs = tools["remember"].input_schema.get("$defs", {})
    assert "role" in defs["EventIn"]["properties"] and "content" in defs["EventIn"]["required"]


def test_an_agent_remembers_recalls_asks_and_reads_an_entity(local_server: Server) -> None:
    async def body(mcp: Client) -> dict[str, Any]:
        stored = _result(await mcp.call_tool("remember", {"world": WORLD, "events": [
            {"event_id": "mcp-1", "user_id": "lea", "conversation_id": "m1", "role": "user",
             "content": "My name is Lea and I live in Geneva."}]}))
        deadline = time.monotonic() + 60
        while True:  # enrichment runs in the background
            recalled = _result(await mcp.call_tool("recall", {"world": WORLD, "query": "Geneva", "user_id": "lea"}))
            if any(h.get("kind") == "entity" for h in recalled["hits"]) or time.monotonic() > deadline:
                break
            await anyio.sleep(0.3)
        answered = _result(await mcp.call_tool("ask", {"world": WORLD, "user_id": "lea",
                                                       "question": "Where does Lea live?"}))
        entity_id = next(h["doc_id"] for h in recalled["hits"] if h.get("kind") == "entity")
        entity = _result(await mcp.call_tool("get_entity", {"world": WORLD, "entity_id": entity_id}))
        forgotten = _result(await mcp.call_tool("forget", {"world": WORLD, "user_id": "lea"}))
        return {"stored": stored, "recalled": recalled, "answered": answered, "entity": entity, "forgotten": forgotten}

    out = _with_tools(local_server, body)
    assert out["stored"]["accepted"] == 1
    assert any("Geneva" in h["text"] for h in out["recalled"]["hits"])
    assert "Geneva" in out["answered"]["answer"]["content"] and out["answered"]["status"] == "completed"
    assert out["entity"]["entity_id"] and out["entity"]["name"]
    assert out["forgotten"]["deleted"]["chat_events"] == 1


def test_bad_arguments_and_api_refusals_come_back_as_tool_errors(local_server: Server) -> None:
    async def body(mcp: Client) -> tuple[Any, Any]:
        invalid = await mcp.call_tool("remember", {"world": WORLD, "events": []})
        missing = await mcp.call_tool("get_entity", {"world": WORLD, "entity_id": "ent_nope"})
        return invalid, missing

    invalid, missing = _with_tools(local_server, body)
    assert invalid.is_error
    assert missing.is_error and "engram refused the call: 404 not_found" in missing.content[0].text


def test_engram_mcp_serves_the_tools_over_stdio(local_server: Server) -> None:
    from mcp import StdioServerParameters

    from tests.e2e.conftest import ENGRAM

    params = StdioServerParameters(command=str(ENGRAM), args=["mcp", "--url", local_server.url],
                                   env=Server.process_env())

    async def run() -> tuple[list[str], Any]:
        async with Client(params) as mcp:
            names = sorted(t.name for t in (await mcp.list_tools()).tools)
            return names, _result(await mcp.call_tool("recall", {"world": WORLD, "query": "Geneva"}))

    names, recalled = anyio.run(run)
    assert set(names) >= {"ask", "forget", "get_context", "get_entity", "recall", "remember", "correct_memory",
                          "delete_memory"}
    assert "hits" in recalled


def test_an_agent_corrects_and_deletes_a_fact(local_server: Server) -> None:
    async def body(mcp: Client) -> dict[str, Any]:
        async with AsyncEngramClient(local_server.url) as engram:
            await engram.add_events("mcp-edit", [
                {"event_id": "mcp-e1", "user_id": "noa", "conversation_id": "e1", "role": "user",
                 "content": "My name is Noa and I live in Bern."},
                {"event_id": "mcp-e2", "user_id": "noa", "conversation_id": "e1", "role": "user",
                 "content": "I work at Acme."}], wait=True)
            facts = {f["predicate"]: f for f in [m.model_dump(mode="json") for m in await engram.memories("mcp-edit", "noa")]}
            fixed = _result(await mcp.call_tool("correct_memory", {
                "world": "mcp-edit", "memory_id": facts["lives_in"]["memory_id"], "object_value": "Basel",
                "confidence": 0.8, "note": "I moved"}))
            deleted = _result(await mcp.call_tool("delete_memory", {
                "world": "mcp-edit", "memory_id": facts["works_at"]["memory_id"]}))
            missing = await mcp.call_tool("delete_memory", {"world": "mcp-edit",
                                                            "memory_id": facts["works_at"]["memory_id"]})
            invalid = await mcp.call_tool("correct_memory", {"world": "mcp-edit",
                                                             "memory_id": facts["lives_in"]["memory_id"],
                                                             "confidence": 2})
            after = {f["memory_id"]: f for f in [m.model_dump(mode="json") for m in await engram.memories("mcp-edit", "noa")]}
            searched = await engram.search("mcp-edit", "Basel", user_id="noa")
            return {"facts": facts, "fixed": fixed, "deleted": deleted, "missing": missing, "invalid": invalid,
                    "after": after, "searched": searched}

    out = _with_tools(local_server, body)
    lives, works = out["facts"]["lives_in"]["memory_id"], out["facts"]["works_at"]["memory_id"]
    assert (out["fixed"]["memory_id"], out["fixed"]["object_value"]) == (lives, "Basel")
    assert out["deleted"]["memory_id"] == works and out["deleted"]["audit_id"]
    assert out["missing"].is_error and "404 not_found" in out["missing"].content[0].text
    assert out["invalid"].is_error
    assert out["after"][lives]["object_value"] == "Basel" and works not in out["after"]
    assert lives in {h.doc_id for h in out["searched"].hits}

