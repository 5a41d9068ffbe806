"""The OpenAI-compatible adapter against the real `openai` client over HTTP: Chat Completions replies (written in the
API's format, tests/fixtures/openai) go in through respx; engram values and engram errors come out. Every request
carries its tool's JSON schema as a strict `json_schema` response format."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
import respx

from engram.adapters.openai_compat import OpenAICompatibleLLM, build_llm, response_schema
from engram.adapters.staged_llm import StagedLLM
from engram.app.factory import build_llm as build_configured_llm
from engram.config import Settings
from engram.errors import ConfigurationError, ExtractionRejected, InvalidInput, LLMUnavailable
from engram.model.context import QueryContext
from engram.model.heuristics import DEFAULT_HEURISTICS
from engram.model.queries import Answer, ContextItem, NeedsMoreInfo
from engram.model.research import SubQuestion
from engram.ports import KnownFact, Usage, WindowEvent
from engram.prompts import answer as answer_prompt
from engram.prompts import extraction as extraction_prompt

pytestmark = pytest.mark.integration

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "openai"
BASE = "http://llm.test/v1"
MODEL = "qwen2.5:7b"
T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
EVENTS = [WindowEvent(event_id="evt_01", role="user", content="I moved to Lisbon last spring.", occurred_at=T0,
                      speaker="Dana")]


def completion(content: Any, *, prompt: int = 500, output: int = 40, cached: int = 0,
               finish: str = "stop") -> httpx.Response:
    """A Chat Completions reply whose message content is `content` (JSON-encoded unless a string)."""
    text = content if isinstance(content, str) else json.dumps(content)
    return httpx.Response(200, json={
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1772355600, "model": MODEL,
        "choices": [{"index": 0, "finish_reason": finish, "message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": prompt, "completion_tokens": output, "total_tokens": prompt + output,
                  "prompt_tokens_details": {"cached_tokens": cached}}})


def recorded(name: str) -> httpx.Response:
    return httpx.Response(**json.loads((FIXTURES / f"{name}.json").read_text()))


def sent(route: respx.Route, call: int = -1) -> dict[str, Any]:
    body: dict[str, Any] = json.loads(route.calls[call].request.content)
    return body


@pytest.fixture
def api() -> Iterator[respx.Router]:
    with respx.mock(base_url=BASE) as router:
        yield router


@pytest.fixture
def llm() -> OpenAICompatibleLLM:
    client = openai.OpenAI(base_url=BASE, api_key="test-key", max_retries=0, timeout=2.0)
    return OpenAICompatibleLLM(client, model=MODEL, fast_model=MODEL)


def _context() -> QueryContext:
    return QueryContext(query_id="q_01", world_id="w", question="Where does Dana live?", items=[
        ContextItem(kind="semantic", id="sem_01", text="Dana lives_in Lisbon", score=0.92, entity_ids=["ent_dana"])])


FACT = KnownFact(memory_id="sem_01", subject="Dana", predicate="lives_in", object="Lisbon")
SUB = SubQuestion(sub_id="s1", question="Where does Dana live?", requests=[], iteration=1, status="gathered",
                  evidence=["sem_01"])
SEARCH = {"capability": "search_memories", "params": {"query": "Dana"}, "reason": "where she lives"}
# Each port method, its tool, and a reply that follows the tool's schema.
CALLS: dict[str, tuple[str, Any, Any]] = {
    "extract": ("record_facts", lambda m: m.extract(EVENTS, ["Dana"]), {"triples": [
        {"subject": "Dana", "predicate": "lives in", "object": "Lisbon", "object_is_entity": True, "confidence": 0.9,
         "event_id": "evt_01", "valid_from": None, "subject_type": "person", "object_type": "place"}],
        "coreferences": []}),
    "force_answer": ("answer", lambda m: m.force_answer(_context(), temperature=0.2), {
        "content": "Dana lives in Lisbon.", "confidence": 0.9, "sources": [{"id": "sem_01", "contribution": 1.0}],
        "suggested_follow_ups": [], "question_signals": []}),
    "summarize": ("write_summary", lambda m: m.summarize("user Dana", ["I moved to Lisbon."], [FACT]),
                  {"summary": "Dana lives in Lisbon.", "confirmed_fact_ids": ["sem_01", "sem_invented"]}),
    "find_conflicts": ("report_conflicts", lambda m: m.find_conflicts([FACT], []), {"conflicts": []}),
    "detect_inflection": ("report_inflection", lambda m: m.detect_inflection(EVENTS, [], h=DEFAULT_HEURISTICS),
                          {"kind": None, "confidence": 0.1, "suggested_topic": "", "signal_ids": []}),
    "plan_research": ("plan_research", lambda m: m.plan_research(_context(), max_sub_questions=3), {
        "sub_questions": [{"question": "Where does Dana live?", "requests": [SEARCH]}], "rationale": "one clause"}),
    "evaluate_research": ("evaluate_research", lambda m: m.evaluate_research(
        _context(), [SUB], can_continue=False, max_follow_ups=2), {
        "answered": ["s1"], "complete": True, "follow_ups": [], "notes": ""}),
    "synthesize": ("synthesize_research", lambda m: m.synthesize(_context(), [SUB], [], temperature=0.2), {
        "content": "Dana lives in Lisbon.", "confidence": 0.9, "sources": ["sem_01"], "conflicts_named": [],
        "suggested_follow_ups": []}),
}


@pytest.mark.parametrize("method", sorted(CALLS))
def test_every_port_method_sends_its_tools_schema_as_a_strict_json_schema_and_returns_its_value(
        api: respx.Router, llm: OpenAICompatibleLLM, method: str) -> None:
    tool, call, reply = CALLS[method]
    route = api.post("/chat/completions").mock(return_value=completion(reply, prompt=700, output=50, cached=512))

    result = call(llm)

    body = sent(route)
    assert body["response_format"] == {"type": "json_schema", "json_schema": json.loads(json.dumps(
        response_schema((tool,))))}
    assert body["response_format"]["json_schema"]["strict"] is True and body["model"] == MODEL
    schema = body["response_format"]["json_schema"]["schema"]
    assert schema["additionalProperties"] is False and set(schema["required"]) == set(schema["properties"])
    assert body["messages"][0]["role"] == "system" and body["messages"][1]["role"] == "user"
    assert route.calls.last.request.headers["authorization"] == "Bearer test-key"
    assert result.usage == Usage(input_tokens=188, output_tokens=50, calls=1, cache_read_tokens=512)
    assert result.model == MODEL and result.value is not None


def test_extraction_sends_the_same_prompts_as_anthropic_and_keeps_the_ontologys_words(
        api: respx.Router, llm: OpenAICompatibleLLM) -> None:
    route = api.post("/chat/completions").mock(return_value=completion(CALLS["extract"][2]))

    reply = llm.extract(EVENTS, ["Dana"])

    body = sent(route)
    assert body["messages"] == [{"role": "system", "content": extraction_prompt.SYSTEM},
                                *extraction_prompt.messages(EVENTS, ["Dana"])]
    assert [(t.subject, t.predicate, t.object) for t in reply.value.triples] == [("Dana", "lives_in", "Lisbon")]


def test_a_summary_confirms_only_facts_it_was_shown(api: respx.Router, llm: OpenAICompatibleLLM) -> None:
    api.post("/chat/completions").mock(return_value=completion(CALLS["summarize"][2]))

    assert llm.summarize("user Dana", ["I moved to Lisbon."], [FACT]).value.confirmed_fact_ids == ["sem_01"]


def test_an_answer_offers_both_tools_in_one_schema_and_a_request_for_more_comes_back_as_needs_more_info(
        api: respx.Router, llm: OpenAICompatibleLLM) -> None:
    route = api.post("/chat/completions").mock(side_effect=[
        completion({"tool": "request_info", "input": {"info_requests": [
            {"capability": "expand_entity", "params": {"entity_id": "ent_dana"}, "reason": "her record"}],
            "reason": "the context holds only a summary", "question_signals": []}}),
        completion({"tool": "answer", "input": CALLS["force_answer"][2]})])
    context = _context()

    more = llm.answer(context, can_request_more=True, remaining_info_requests=2, temperature=0.2)
    answered = llm.answer(context, can_request_more=True, remaining_info_requests=1, temperature=0.2)

    schema = sent(route, 0)["response_format"]["json_schema"]
    assert schema["name"] == "reply" and schema["schema"]["properties"]["tool"]["enum"] == ["answer", "request_info"]
    assert sent(route, 0)["messages"][1:] == answer_prompt.messages(context, 2)
    assert isinstance(more.value, NeedsMoreInfo) and more.value.info_requests[0].capability == "expand_entity"
    assert isinstance(answered.value, Answer) and [s.id for s in answered.value.sources] == ["sem_01"]


def test_invalid_output_is_retried_once_showing_the_model_its_reply_and_what_was_wrong(
        api: respx.Router, llm: OpenAICompatibleLLM) -> None:
    invalid = {"triples": [{"subject": "Dana", "predicate": "lives in", "object": "Lisbon", "confidence": 7}],
               "coreferences": []}
    route = api.post("/chat/completions").mock(side_effect=[completion(invalid, output=30),
                                                            completion(CALLS["extract"][2], output=60)])

    reply = llm.extract(EVENTS, ["Dana"])

    first, retry = sent(route, 0), sent(route, 1)
    assert route.call_count == 2 and retry["messages"][:2] == first["messages"]
    assert retry["messages"][2] == {"role": "assistant", "content": json.dumps(invalid)}
    feedback = retry["messages"][3]
    assert feedback["role"] == "user" and "event_id" in feedback["content"] and "confidence" in feedback["content"]
    assert retry["response_format"] == first["response_format"]  # the retry carries the schema too
    assert reply.usage.calls == 2 and reply.usage.output_tokens == 90 and len(reply.value.triples) == 1


def test_a_reply_cut_off_mid_json_is_retried_then_rejected_with_its_tokens_counted(
        api: respx.Router, llm: OpenAICompatibleLLM) -> None:
    route = api.post("/chat/completions").mock(side_effect=[
        completion('{"triples": [{"subject": "Da', finish="length", output=64),
        completion('{"triples": [', finish="length", output=64)])

    with pytest.raises(ExtractionRejected) as caught:
        llm.extract(EVENTS, ["Dana"])

    assert route.call_count == 2 and "finish_reason length" in caught.value.message
    assert "not JSON" in sent(route, 1)["messages"][-1]["content"]
    assert (caught.value.details["calls"], caught.value.details["output_tokens"]) == (2, 128)


def test_a_recorded_llama_cpp_reply_out_of_its_schemas_bounds_is_corrected(
        api: respx.Router, llm: OpenAICompatibleLLM) -> None:
    # Recorded from llama.cpp's server with SmolLM2-135M: its grammar kept the shape, not the number's bounds.
    route = api.post("/chat/completions").mock(side_effect=[recorded("llama_cpp_out_of_bounds"),
                                                            completion(CALLS["force_answer"][2])])

    reply = llm.force_answer(_context(), temperature=0.0)

    assert route.call_count == 2 and "confidence" in sent(route, 1)["messages"][-1]["content"]
    assert reply.value.forced and reply.value.confidence == 0.9


@pytest.mark.parametrize(("status", "error"), [(429, LLMUnavailable), (500, LLMUnavailable), (503, LLMUnavailable),
                                               (401, ConfigurationError), (404, ConfigurationError),
                                               (400, InvalidInput)])
def test_provider_errors_become_engram_errors_once(api: respx.Router, llm: OpenAICompatibleLLM, status: int,
                                                  error: type[Exception]) -> None:
    api.post("/chat/completions").mock(return_value=httpx.Response(
        status, json={"error": {"message": "refused", "type": "x"}}, headers={"retry-after": "3"}))

    with pytest.raises(error):
        llm.summarize("user Dana", ["I moved to Lisbon."])


def test_an_unreachable_server_is_a_transient_model_error(api: respx.Router, llm: OpenAICompatibleLLM) -> None:
    api.post("/chat/completions").mock(side_effect=httpx.ConnectError("refused"))

    with pytest.raises(LLMUnavailable, match="unreachable"):
        llm.summarize("user Dana", ["I moved to Lisbon."])


def test_settings_choose_the_openai_server_and_give_stages_their_own_models(api: respx.Router) -> None:
    route = api.post("/chat/completions").mock(return_value=completion(CALLS["summarize"][2]))
    settings = Settings(llm="openai", openai_base_url=BASE, openai_api_key="k", openai_model="big",
                        model_summarize="openai:qwen2.5:7b", model_extract="offline", llm_max_retries=0)

    llm = build_configured_llm(settings)
    llm.summarize("user Dana", ["I moved to Lisbon."])
    extracted = llm.extract(EVENTS, ["Dana"])

    assert isinstance(llm, StagedLLM) and sent(route)["model"] == "qwen2.5:7b"
    assert route.call_count == 1 and extracted.model == "offline-heuristic"  # extraction stayed offline
    assert isinstance(build_llm(settings), OpenAICompatibleLLM) and build_llm(settings).name == "big"


def test_on_aws_the_key_is_read_from_secrets_manager_at_build_time(api: respx.Router,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    import boto3
    from moto import mock_aws

    monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-west-1")
    route = api.post("/chat/completions").mock(return_value=completion(CALLS["summarize"][2]))
    with mock_aws():
        arn = boto3.client("secretsmanager").create_secret(Name="engram/openai-api-key",
                                                           SecretString='{"api_key": "sk-from-secret"}')["ARN"]
        llm = build_configured_llm(Settings(llm="openai", openai_base_url=BASE, openai_api_key_secret_arn=arn,
                                            llm_max_retries=0))
    llm.summarize("user Dana", ["I moved to Lisbon."])

    assert route.calls[-1].request.headers["authorization"] == "Bearer sk-from-secret"
