"""The Anthropic adapter against the real `anthropic` client over HTTP: recorded Messages API replies
(tests/fixtures/anthropic) go in through respx, engram values and engram errors come out."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anthropic
import httpx
import httpx2
import pytest
import respx
from respx.mocks import HTTPXMocker

from engram.adapters.anthropic import (
    AnswerTool,
    AnthropicLLM,
    SynthesisTool,
    build_llm,
)
from engram.adapters.structured import bare, lean, tool_schema
from engram.config import Settings
from engram.errors import ConfigurationError, EngramError, ExtractionRejected, InvalidInput, LLMUnavailable
from engram.model.context import QueryContext
from engram.model.entities import EntitySighting
from engram.model.heuristics import DEFAULT_HEURISTICS
from engram.model.insights import InflectionAssessment
from engram.model.memories import OntologyPredicate
from engram.model.queries import Answer, ContextItem, NeedsMoreInfo
from engram.model.requests import InfoRequest
from engram.model.research import EvidenceConflict, ResearchEvaluation, ResearchPlan, SubQuestion
from engram.model.signals import Signal
from engram.ports import ContextDigest, ExtractionResult, KnownFact, Reference, Usage, WindowEvent, WrittenSummary
from engram.prompts import answer as answer_prompt
from engram.prompts import digest as digest_prompt
from engram.prompts import extraction as extraction_prompt
from engram.prompts import inflection as inflection_prompt
from engram.prompts import research as research_prompt
from engram.prompts import summary as summary_prompt
from engram.query.budget import apply_digest

pytestmark = pytest.mark.integration

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "anthropic"
API = "https://api.anthropic.com"
BEDROCK = "https://bedrock-runtime.us-east-1.amazonaws.com"
MODEL, FAST_MODEL = "claude-sonnet-4-5", "claude-haiku-4-5"
T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


# ---------------------------------------------------------------- respx for httpx2
class _Httpx2Mocker(HTTPXMocker):
    """respx for the `httpx2` clients the anthropic SDK (>= 1.0) sends through; respx 0.23 patches
    only `httpx`. Requests are mirrored into httpx for respx's routes, replies mirrored back."""

    name = "httpx2"
    targets = ["httpx2._client.Client"]

    @classmethod
    def mock(cls, spec: Any) -> Callable[..., httpx2.BaseTransport]:
        def _transport_for_url(self: httpx2.Client, *args: Any, **kwargs: Any) -> httpx2.BaseTransport:
            return _RespxTransport(cls.handler)

        return _transport_for_url


class _RespxTransport(httpx2.BaseTransport):
    def __init__(self, handler: Callable[[httpx.Request], httpx.Response]) -> None:
        self.handler = handler

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        mirrored = httpx.Request(request.method, str(request.url), headers=list(request.headers.raw),
                                 content=request.read())
        try:
            reply = self.handler(mirrored)
        except httpx.TransportError as exc:  # a timeout or refused connection, as httpx2 would raise it
            raise getattr(httpx2, type(exc).__name__)(str(exc), request=request) from exc
        return httpx2.Response(reply.status_code, headers=list(reply.headers.raw), content=reply.read(),
                               request=request)


# ---------------------------------------------------------------- recorded replies
def recorded(name: str) -> httpx.Response | Exception:
    """One recorded reply: an HTTP response, or the transport exception it stands for."""
    data = json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))
    if "raises" in data:
        exc: Exception = getattr(httpx, data["raises"])(data["message"])
        return exc
    return httpx.Response(data["status"], headers=data["headers"], json=data["body"])


def replay(*names: str) -> list[httpx.Response | Exception]:
    return [recorded(n) for n in names]


def sent(route: respx.Route, call: int = -1) -> dict[str, Any]:
    body: dict[str, Any] = json.loads(route.calls[call].request.content)
    return body


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[respx.Router]:
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    with respx.mock(base_url=API, using="httpx2") as router:
        yield router


@pytest.fixture
def llm() -> AnthropicLLM:
    client = anthropic.Anthropic(api_key="test-key", max_retries=0, timeout=2.0)
    return AnthropicLLM(client, model=MODEL, fast_model=FAST_MODEL)


EVENTS = [
    WindowEvent(event_id="evt_01", role="user", content="I moved to Lisbon last spring.", occurred_at=T0,
                speaker="Dana"),
    WindowEvent(event_id="evt_02", role="user", content="I always prefer window seats.", occurred_at=T0,
                speaker="Dana"),
]


def _context() -> QueryContext:
    return QueryContext(query_id="q_01", world_id="w", question="Where does Dana live, and with whom does she work?",
                        items=[
                            ContextItem(kind="event", id="evt_01", text="user: I moved to Lisbon last spring.",
                                        score=0.7, entity_ids=["ent_dana"]),
                            ContextItem(kind="semantic", id="sem_01", text="Dana lives_in Lisbon", score=0.92,
                                        entity_ids=["ent_dana", "ent_lisbon"]),
                            ContextItem(kind="relationship", id="rel_01", text="Dana works_with Priya", score=0.5,
                                        entity_ids=["ent_dana", "ent_priya"]),
                        ])


def _system(text: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": text, "cache_control": {"type": "ephemeral"}}]


# ---------------------------------------------------------------- the four tools
def test_extraction_sends_the_fast_model_a_forced_record_facts_tool_with_the_pydantic_schema(
        api: respx.Router, llm: AnthropicLLM) -> None:
    route = api.post("/v1/messages").mock(return_value=recorded("record_facts"))

    llm.extract(EVENTS, ["Dana", "Lisbon"])

    body = sent(route)
    assert body["model"] == FAST_MODEL
    assert body["tool_choice"] == {"type": "tool", "name": "record_facts"}
    assert [t["name"] for t in body["tools"]] == ["record_facts"]
    assert body["tools"][0]["input_schema"] == lean(ExtractionResult.model_json_schema())
    assert body["tools"][0]["description"]
    assert body["system"] == _system(extraction_prompt.SYSTEM)
    assert body["messages"] == extraction_prompt.messages(EVENTS, ["Dana", "Lisbon"])
    assert "[evt_01]" in body["messages"][0]["content"] and "Known entities: Dana, Lisbon" in body["messages"][0]["content"]
    assert body["max_tokens"] == 2048
    assert route.calls.last.request.headers["authorization"] == "Bearer test-key"
    assert "anthropic-version" in route.calls.last.request.headers


def test_extraction_returns_the_recorded_triples_and_counts_the_tokens(api: respx.Router, llm: AnthropicLLM) -> None:
    api.post("/v1/messages").mock(return_value=recorded("record_facts"))

    reply = llm.extract(EVENTS, [])

    lives, prefers = reply.value.triples
    assert (lives.subject, lives.predicate, lives.object, lives.object_is_entity) == ("Dana", "lives_in", "Lisbon", True)
    assert (lives.event_id, lives.confidence, lives.valid_from) == ("evt_01", 0.9, T0)
    assert (prefers.object, prefers.object_is_entity, prefers.valid_from) == ("window seats", False, None)
    assert reply.usage == Usage(input_tokens=812, output_tokens=96, calls=1, cache_write_tokens=412)
    assert reply.model == FAST_MODEL


def test_extraction_carries_the_windows_references_and_candidates_and_returns_the_coreferences(
        api: respx.Router, llm: AnthropicLLM) -> None:
    route = api.post("/v1/messages").mock(return_value=recorded("record_facts_coreference"))
    events = [*EVENTS, WindowEvent(event_id="evt_04", role="user", content="She told my boss the launch will slip.",
                                   occurred_at=T0, speaker="Dana")]
    references = [Reference(reference_id="evt_04@0", event_id="evt_04", text="She", kind="pronoun", start=0),
                  Reference(reference_id="evt_04@31", event_id="evt_04", text="my boss", kind="description",
                            start=31)]
    candidates = [EntitySighting(entity_id="ent_priya", name="Priya Sharma", entity_type="person", event_id="evt_01",
                                 occurred_at=T0),
                  EntitySighting(entity_id="ent_sam", name="Sam Carter", entity_type="person", relation="boss",
                                 related_entity_id="ent_dana"),
                  EntitySighting(entity_id="ent_dana", name="Dana", entity_type="person", event_id="evt_01",
                                 occurred_at=T0)]

    reply = llm.extract(events, ["Dana"], references=references, candidates=candidates)

    body = sent(route)
    assert body["tools"][0]["input_schema"] == lean(ExtractionResult.model_json_schema())
    assert body["messages"] == extraction_prompt.messages(events, ["Dana"], references, candidates)
    content = body["messages"][0]["content"]
    assert '- evt_04@0: "She" (pronoun) in [evt_04]' in content
    assert "- ent_priya: Priya Sharma (person; mentioned in [evt_01])" in content
    assert "- ent_sam: Sam Carter (person; the boss of Dana)" in content
    assert [(c.reference_id, c.entity_id, c.confidence) for c in reply.value.coreferences] == [
        ("evt_04@0", "ent_priya", 0.92), ("evt_04@31", "ent_sam", 0.88)]
    assert reply.usage == Usage(input_tokens=904, output_tokens=121, calls=1, cache_read_tokens=412)  # one call


ONTOLOGY = [OntologyPredicate(concept="lives_in", description="the city a person lives in",
                              synonyms=["resides_in", "home city"]),
            OntologyPredicate(concept="prefers", synonyms=["seat preference"])]


def test_the_worlds_ontology_rides_in_the_cached_system_prefix_and_synonyms_come_back_as_its_predicates(
        api: respx.Router, llm: AnthropicLLM) -> None:
    route = api.post("/v1/messages").mock(return_value=recorded("record_facts_ontology"))

    reply = llm.extract(EVENTS, ["Dana"], predicates=ONTOLOGY)

    body = sent(route)
    instructions, ontology = body["system"]
    assert instructions == {"type": "text", "text": extraction_prompt.SYSTEM}  # the prefix ends after the ontology
    assert ontology == {"type": "text", "text": extraction_prompt.ontology(ONTOLOGY),
                        "cache_control": {"type": "ephemeral"}}
    assert "- lives_in: the city a person lives in (also said as: resides_in, home city)" in ontology["text"]
    assert "- prefers (also said as: seat preference)" in ontology["text"]
    assert body["messages"] == extraction_prompt.messages(EVENTS, ["Dana"])  # the per-window part is unchanged
    assert [(t.predicate, t.object) for t in reply.value.triples] == [
        ("lives_in", "Lisbon"), ("prefers", "window seats"), ("travels_with", "her sister")]  # free stays free
    assert reply.usage.cache_read_tokens == 688


def test_an_answer_cites_only_ids_in_the_context_and_drops_invented_ones(api: respx.Router, llm: AnthropicLLM) -> None:
    api.post("/v1/messages").mock(return_value=recorded("answer"))

    reply = llm.answer(_context(), can_request_more=False, remaining_info_requests=0, temperature=0.2)

    answer = reply.value
    assert isinstance(answer, Answer)
    assert answer.content == "Dana lives in Lisbon and works with Priya."
    assert answer.confidence == 0.86
    # "mem_invented_99" is in no context item; the repeated "sem_01" is cited once.
    assert [(s.kind, s.id) for s in answer.sources] == [("semantic", "sem_01"), ("event", "evt_01"),
                                                        ("semantic", "rel_01")]
    assert answer.sources[0].excerpt == "Dana lives_in Lisbon" and answer.sources[0].score == 0.92
    assert answer.suggested_follow_ups == ["Since when has Dana lived in Lisbon?"]
    assert answer.forced is False
    assert (reply.usage, reply.model) == (Usage(1530, 118, 1, cache_read_tokens=380), MODEL)
    assert reply.usage.sent_tokens == 1530 + 380
    assert [s.contribution for s in answer.sources] == [0.6, 0.3, 0.1]


def test_a_model_that_may_ask_for_more_chooses_between_answer_and_request_info(
        api: respx.Router, llm: AnthropicLLM) -> None:
    route = api.post("/v1/messages").mock(return_value=recorded("answer"))

    llm.answer(_context(), can_request_more=True, remaining_info_requests=2, temperature=0.2)

    body = sent(route)
    assert body["model"] == MODEL
    assert body["tool_choice"] == {"type": "any"}
    assert [(t["name"], t["input_schema"]) for t in body["tools"]] == [
        ("answer", tool_schema("answer")), ("request_info", tool_schema("request_info"))]
    # lean and bare: no titles, descriptions or defaults; the question's signals asked for on `answer` only
    assert tool_schema("answer") == bare(lean(AnswerTool.model_json_schema())) | {"properties": {
        **bare(lean(AnswerTool.model_json_schema()))["properties"],
        "sources": {"items": {"$ref": "#/$defs/CitedItem"}, "type": "array"}}}
    assert "question_signals" not in tool_schema("request_info")["properties"]
    assert body["system"] == _system(answer_prompt.SYSTEM)
    content = body["messages"][0]["content"]
    assert "- semantic sem_01: Dana lives_in Lisbon" in content
    assert "Info requests remaining: 2." in content


def test_a_request_for_more_information_becomes_needs_more_info(api: respx.Router, llm: AnthropicLLM) -> None:
    api.post("/v1/messages").mock(return_value=recorded("request_info"))

    reply = llm.answer(_context(), can_request_more=True, remaining_info_requests=3, temperature=0.2)

    assert isinstance(reply.value, NeedsMoreInfo)
    (request,) = reply.value.info_requests
    assert (request.capability, request.params) == ("get_relationships", {"entity_id": "ent_dana", "depth": 1})
    assert reply.value.reason == "the question asks about Dana's colleagues"
    assert reply.usage == Usage(1490, 74, 1, cache_read_tokens=380)
    assert [(s.signal_type, s.content) for s in reply.signals] == [("Goal", "find out who Dana works with")]


def test_the_answer_call_also_returns_the_questions_signals_so_no_extraction_call_is_made(
        api: respx.Router, llm: AnthropicLLM) -> None:
    route = api.post("/v1/messages").mock(return_value=recorded("answer"))

    reply = llm.answer(_context(), can_request_more=True, remaining_info_requests=2, temperature=0.2)

    assert route.call_count == 1
    assert [(s.signal_type, s.confidence) for s in reply.signals] == [("Question", 0.95)]
    assert "question_signals" in sent(route)["tools"][0]["input_schema"]["properties"]


def test_the_instructions_and_capability_definitions_are_a_cached_prefix_the_same_every_round(
        api: respx.Router, llm: AnthropicLLM) -> None:
    route = api.post("/v1/messages").mock(return_value=recorded("request_info"))
    first = _context()
    later = first.model_copy(update={"items": [*first.items, ContextItem(
        kind="entity", id="ent_sam", text="Sam (person) [summary]", full=False)]})

    llm.answer(first, can_request_more=True, remaining_info_requests=3, temperature=0.2)
    llm.answer(later, can_request_more=True, remaining_info_requests=2, temperature=0.2)

    one, two = sent(route, 0), sent(route, 1)
    # tools, then system: the prompt-cache prefix, marked at its end and identical across rounds
    assert (one["tools"], one["system"]) == (two["tools"], two["system"])
    assert one["system"][-1]["cache_control"] == {"type": "ephemeral"}
    request_info = next(t for t in one["tools"] if t["name"] == "request_info")
    assert "expand_entity {entity_id}" in request_info["description"]  # the capabilities ride with request_info
    # what changes per round, the items and the ids a request may name, is in the user message only
    assert "ent_sam" not in one["messages"][0]["content"]
    assert "- entity ent_sam: Sam (person) [summary]" in two["messages"][0]["content"]


def test_a_model_out_of_info_requests_is_forced_to_answer(api: respx.Router, llm: AnthropicLLM) -> None:
    route = api.post("/v1/messages").mock(return_value=recorded("answer"))

    llm.answer(_context(), can_request_more=False, remaining_info_requests=0, temperature=0.2)

    body = sent(route)
    assert body["tool_choice"] == {"type": "tool", "name": "answer"}
    assert [t["name"] for t in body["tools"]] == ["answer"]
    assert "No more information can be requested" in body["messages"][0]["content"]


def test_a_forced_answer_offers_only_the_answer_tool_and_is_marked_forced(api: respx.Router, llm: AnthropicLLM) -> None:
    route = api.post("/v1/messages").mock(return_value=recorded("answer"))

    reply = llm.force_answer(_context(), temperature=0.0)

    assert sent(route)["tool_choice"] == {"type": "tool", "name": "answer"}
    assert reply.value.forced is True
    assert [s.id for s in reply.value.sources] == ["sem_01", "evt_01", "rel_01"]


def test_a_summary_is_written_through_the_write_summary_tool_and_names_only_offered_facts_it_confirms(
        api: respx.Router, llm: AnthropicLLM) -> None:
    route = api.post("/v1/messages").mock(return_value=recorded("write_summary"))
    facts = [KnownFact(memory_id="sem_lives", subject="Dana", predicate="lives_in", object="Lisbon"),
             KnownFact(memory_id="sem_seats", subject="Dana", predicate="prefers", object="window seats"),
             KnownFact(memory_id="sem_tea", subject="Dana", predicate="likes", object="green tea")]
    items = ["I am planning a trip to Porto in May."]

    reply = llm.summarize("conversation c1", items, facts)

    body = sent(route)
    assert (body["model"], body["tool_choice"]) == (FAST_MODEL, {"type": "tool", "name": "write_summary"})
    assert body["tools"][0]["input_schema"] == lean(WrittenSummary.model_json_schema())
    assert "confirmed_fact_ids" in body["tools"][0]["input_schema"]["properties"]
    assert body["system"] == _system(summary_prompt.SYSTEM)
    assert body["messages"] == summary_prompt.messages("conversation c1", items, facts)
    assert "- [sem_lives] Dana lives in Lisbon" in body["messages"][0]["content"]
    assert reply.value.summary.startswith("Dana lives in Lisbon")
    # each confirmed once; an id the model was never shown is dropped; a fact it left out is not confirmed
    assert reply.value.confirmed_fact_ids == ["sem_lives", "sem_seats"]
    assert (reply.usage, reply.model) == (Usage(640, 38, 1), FAST_MODEL)


# ---------------------------------------------------------------- invalid output
def test_invalid_tool_input_is_retried_once_and_the_valid_retry_is_kept(api: respx.Router, llm: AnthropicLLM) -> None:
    route = api.post("/v1/messages").mock(side_effect=replay("record_facts_invalid", "record_facts"))

    reply = llm.extract(EVENTS, [])

    assert route.call_count == 2
    first, retry = sent(route, 0), sent(route, 1)
    assert retry["messages"][0] == first["messages"][0] and len(retry["messages"]) == 3
    # corrective: the model sees its own invalid call and what was wrong with it
    (invalid_call,) = [b for b in retry["messages"][1]["content"] if b["type"] == "tool_use"]
    (feedback,) = retry["messages"][2]["content"]
    assert retry["messages"][1]["role"] == "assistant" and invalid_call["name"] == "record_facts"
    assert feedback["type"] == "tool_result" and feedback["tool_use_id"] == invalid_call["id"] and feedback["is_error"]
    assert "event_id" in feedback["content"] and "confidence" in feedback["content"]
    assert [t.predicate for t in reply.value.triples] == ["lives_in", "prefers"]
    assert reply.usage == Usage(input_tokens=810 + 812, output_tokens=41 + 96, calls=2, cache_read_tokens=412,
                                cache_write_tokens=412)


def test_invalid_tool_input_twice_is_rejected_after_exactly_two_requests(api: respx.Router, llm: AnthropicLLM) -> None:
    route = api.post("/v1/messages").mock(side_effect=replay("record_facts_invalid", "record_facts_invalid",
                                                             "record_facts"))

    with pytest.raises(ExtractionRejected) as caught:
        llm.extract(EVENTS, [])

    assert route.call_count == 2
    assert "invalid record_facts input" in caught.value.message
    assert caught.value.details["model"] == FAST_MODEL
    assert caught.value.details["calls"] == 2 and caught.value.details["output_tokens"] > 0  # the ledger counts them


def test_a_reply_without_a_tool_call_is_retried_like_invalid_output(api: respx.Router, llm: AnthropicLLM) -> None:
    route = api.post("/v1/messages").mock(side_effect=replay("text_only", "record_facts"))
    assert len(llm.extract(EVENTS, []).value.triples) == 2
    assert route.call_count == 2

    route.side_effect = replay("text_only", "text_only")
    with pytest.raises(ExtractionRejected, match="no tool call"):
        llm.extract(EVENTS, [])


# ---------------------------------------------------------------- provider failures
@pytest.mark.parametrize(("fixture", "error"), [
    ("rate_limit_429", LLMUnavailable),
    ("overloaded_529", LLMUnavailable),
    ("api_error_500", LLMUnavailable),
    ("timeout", LLMUnavailable),
    ("authentication_401", ConfigurationError),
    ("invalid_request_400", InvalidInput),
])
def test_provider_failures_become_engram_errors_without_a_retry_of_their_own(
        api: respx.Router, llm: AnthropicLLM, fixture: str, error: type[EngramError]) -> None:
    route = api.post("/v1/messages").mock(side_effect=replay(fixture, "record_facts"))

    with pytest.raises(error) as caught:
        llm.extract(EVENTS, [])

    # The class name is what the state machines retry on: the adapter leaves retrying to them.
    assert type(caught.value) is error
    assert route.call_count == 1


def test_a_rate_limit_carries_the_providers_retry_after(api: respx.Router, llm: AnthropicLLM) -> None:
    api.post("/v1/messages").mock(return_value=recorded("rate_limit_429"))

    with pytest.raises(LLMUnavailable) as caught:
        llm.answer(_context(), can_request_more=True, remaining_info_requests=1, temperature=0.2)

    assert caught.value.details == {"status": 429, "retry_after": "7"}


def test_an_overloaded_provider_names_its_status(api: respx.Router, llm: AnthropicLLM) -> None:
    api.post("/v1/messages").mock(return_value=recorded("overloaded_529"))

    with pytest.raises(LLMUnavailable, match="529"):
        llm.summarize("conversation c1", ["x"])


def test_an_unreachable_provider_is_unavailable(api: respx.Router, llm: AnthropicLLM) -> None:
    api.post("/v1/messages").mock(side_effect=httpx.ConnectError("connection refused"))

    with pytest.raises(LLMUnavailable, match="unreachable"):
        llm.extract(EVENTS, [])


def test_build_llm_wires_the_key_models_and_retries_from_settings(api: respx.Router) -> None:
    settings = Settings(llm="anthropic", ANTHROPIC_API_KEY="sk-settings", llm_max_retries=0, llm_timeout_s=2.0)
    route = api.post("/v1/messages").mock(side_effect=replay("overloaded_529", "write_summary"))
    built = build_llm(settings)

    with pytest.raises(LLMUnavailable):
        built.summarize("conversation c1", ["x"])
    assert route.call_count == 1  # llm_max_retries=0 reached the SDK
    assert route.calls.last.request.headers["authorization"] == "Bearer sk-settings"
    assert sent(route)["model"] == settings.anthropic_fast_model
    assert built.name == settings.anthropic_model


def test_build_llm_refuses_anthropic_without_a_key() -> None:
    with pytest.raises(ConfigurationError, match="ANTHROPIC_API_KEY"):
        build_llm(Settings(llm="anthropic", ANTHROPIC_API_KEY=None))


# ---------------------------------------------------------------- Anthropic on Bedrock
BEDROCK_MODEL, BEDROCK_FAST = "us.anthropic.claude-sonnet-4-5-20250929-v1:0", "us.anthropic.claude-haiku-4-5-20251001-v1:0"


@pytest.fixture
def bedrock(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[respx.Router]:
    """Fake AWS credentials in the environment and nothing else the SDK could pick up instead."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAIOSFODNN7EXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-credentials"))
    for name in ("AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_BEARER_TOKEN_BEDROCK", "ANTHROPIC_BEDROCK_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    with respx.mock(base_url=BEDROCK, using="httpx2") as router:
        yield router


def test_bedrock_requests_are_sigv4_signed_and_name_the_model_in_the_path(bedrock: respx.Router) -> None:
    route = bedrock.post(f"/model/{BEDROCK_FAST}/invoke").mock(return_value=recorded("record_facts"))
    client = anthropic.AnthropicBedrock(aws_region="us-east-1", max_retries=0, timeout=2.0)
    llm = AnthropicLLM(client, model=BEDROCK_MODEL, fast_model=BEDROCK_FAST)

    reply = llm.extract(EVENTS, ["Dana"])

    request = route.calls.last.request
    authorization = request.headers["authorization"]
    assert authorization.startswith("AWS4-HMAC-SHA256 ")
    assert "/us-east-1/bedrock/aws4_request" in authorization and "SignedHeaders=" in authorization
    assert "x-amz-date" in request.headers
    body = sent(route)
    assert "model" not in body and "anthropic_version" in body  # Bedrock takes the model from the path
    assert body["tool_choice"] == {"type": "tool", "name": "record_facts"}
    assert body["tools"][0]["input_schema"] == lean(ExtractionResult.model_json_schema())
    assert body["system"] == _system(extraction_prompt.SYSTEM)
    assert [t.object for t in reply.value.triples] == ["Lisbon", "window seats"]
    assert reply.usage == Usage(812, 96, 1, cache_write_tokens=412)
    assert reply.model == BEDROCK_FAST


def test_build_llm_with_bedrock_answers_through_the_configured_model(bedrock: respx.Router) -> None:
    settings = Settings(llm="bedrock", bedrock_region="us-east-1", llm_max_retries=0, llm_timeout_s=2.0)
    route = bedrock.post(f"/model/{settings.bedrock_model}/invoke").mock(return_value=recorded("answer"))

    reply = build_llm(settings).answer(_context(), can_request_more=False, remaining_info_requests=0,
                                       temperature=0.2)

    assert route.call_count == 1
    assert route.calls.last.request.headers["authorization"].startswith("AWS4-HMAC-SHA256 ")
    assert isinstance(reply.value, Answer) and [s.id for s in reply.value.sources] == ["sem_01", "evt_01", "rel_01"]


def test_bedrock_throttling_is_unavailable(bedrock: respx.Router) -> None:
    bedrock.post(f"/model/{BEDROCK_FAST}/invoke").mock(return_value=recorded("bedrock_throttling_429"))
    client = anthropic.AnthropicBedrock(aws_region="us-east-1", max_retries=0, timeout=2.0)

    with pytest.raises(LLMUnavailable) as caught:
        AnthropicLLM(client, model=BEDROCK_MODEL, fast_model=BEDROCK_FAST).summarize("conversation c1", ["x"])

    assert caught.value.details["status"] == 429


# ---------------------------------------------------------------- inflection points
def _signal(signal_id: str, signal_type: str, content: str, status: str | None = None) -> Signal:
    return Signal.model_validate({
        "world_id": "w", "signal_id": signal_id, "conversation_id": "c1", "user_id": "dana", "event_id": "evt_02",
        "signal_type": signal_type, "content": content, "content_hash": signal_id, "confidence": 0.8,
        "assumption_status": status, "occurred_at": T0, "created_at": T0, "updated_at": T0})


SIGNALS = [_signal("sig_q1", "Question", "How would rural demand compare with our urban numbers?"),
           _signal("sig_q2", "Question", "Why do the big competitors avoid these regions?"),
           _signal("sig_a1", "Assumption", "I assume the vans can do two rounds a day.", "untested")]


def test_an_inflection_is_read_by_the_fast_model_through_a_forced_report_inflection_tool(
        api: respx.Router, llm: AnthropicLLM) -> None:
    route = api.post("/v1/messages").mock(return_value=recorded("report_inflection"))

    reply = llm.detect_inflection(EVENTS, SIGNALS, h=DEFAULT_HEURISTICS)

    body = sent(route)
    assert (body["model"], body["tool_choice"]) == (FAST_MODEL, {"type": "tool", "name": "report_inflection"})
    assert [t["name"] for t in body["tools"]] == ["report_inflection"]
    assert body["tools"][0]["input_schema"] == lean(InflectionAssessment.model_json_schema())
    assert body["system"] == _system(inflection_prompt.SYSTEM)
    assert body["messages"] == inflection_prompt.messages(EVENTS, SIGNALS)
    content = body["messages"][0]["content"]
    assert "[evt_01] Dana (user): I moved to Lisbon last spring." in content
    assert "- sig_a1 Assumption (untested): I assume the vans can do two rounds a day." in content
    assessment = reply.value
    assert (assessment.kind, assessment.confidence, assessment.signal_ids) == ("research_depth", 0.86,
                                                                               ["sig_q1", "sig_q2"])
    assert assessment.suggested_topic == "rural delivery demand and the competitors' reasons to stay out"
    assert (reply.usage, reply.model) == (Usage(702, 81, 1), FAST_MODEL)


def test_an_inflection_reply_without_the_tool_is_retried_once_then_rejected(api: respx.Router,
                                                                            llm: AnthropicLLM) -> None:
    route = api.post("/v1/messages").mock(side_effect=replay("text_only", "report_inflection"))
    assert llm.detect_inflection(EVENTS, SIGNALS, h=DEFAULT_HEURISTICS).value.kind == "research_depth"
    assert route.call_count == 2

    route.side_effect = replay("text_only", "text_only")
    with pytest.raises(ExtractionRejected, match="no tool call"):
        llm.detect_inflection(EVENTS, SIGNALS, h=DEFAULT_HEURISTICS)


def test_an_inflection_check_on_an_overloaded_provider_is_unavailable(api: respx.Router, llm: AnthropicLLM) -> None:
    api.post("/v1/messages").mock(return_value=recorded("overloaded_529"))

    with pytest.raises(LLMUnavailable, match="529"):
        llm.detect_inflection(EVENTS, [], h=DEFAULT_HEURISTICS)


# ---------------------------------------------------------------- research: plan, evaluate, synthesize
def _research_context() -> QueryContext:
    context = _context()
    return context.model_copy(update={"items": [*context.items,
        ContextItem(kind="semantic", id="sem_02", text="Dana works at Acme", score=0.7, entity_ids=["ent_dana"]),
        ContextItem(kind="semantic", id="sem_03", text="Dana works at Globex", score=0.7, entity_ids=["ent_dana"])]})


SUB_QUESTIONS = [
    SubQuestion(sub_id="s1", question="Where does Dana live?", iteration=1, status="gathered",
                requests=[InfoRequest(capability="expand_entity", params={"entity_id": "ent_dana"})],
                evidence=["sem_01", "evt_01"]),
    SubQuestion(sub_id="s2", question="Who does Dana work with?", iteration=1, status="gathered",
                requests=[InfoRequest(capability="get_relationships", params={"entity_id": "ent_dana"})],
                evidence=["rel_01"]),
]
WORK_CONFLICT = EvidenceConflict(kind="memory_conflict", ids=("sem_02", "sem_03"), conflict_id="cfl_01",
                                 statements=("Dana works at Acme", "Dana works at Globex"), status="open")


def test_a_research_plan_is_asked_of_the_fast_model_through_a_forced_plan_research_tool(
        api: respx.Router, llm: AnthropicLLM) -> None:
    route = api.post("/v1/messages").mock(return_value=recorded("plan_research"))

    # a world with query_referenced_entities: the entities the items mention are ids a request may name
    reply = llm.plan_research(_context().model_copy(update={"referenced_entities": True}), max_sub_questions=4)

    body = sent(route)
    assert (body["model"], body["tool_choice"]) == (FAST_MODEL, {"type": "tool", "name": "plan_research"})
    assert [t["name"] for t in body["tools"]] == ["plan_research"]
    assert body["tools"][0]["input_schema"] == lean(ResearchPlan.model_json_schema())
    assert body["system"] == _system(research_prompt.PLAN_SYSTEM)  # the same every query: cached
    content = body["messages"][0]["content"]
    assert "Question: Where does Dana live, and with whom does she work?" in content
    assert "Plan at most 4 sub-questions." in content
    assert "[ent_dana, ent_lisbon, ent_priya]" in content  # the ids this round allows
    plan = reply.value
    assert [s.question for s in plan.sub_questions] == ["Where does Dana live?", "Who does Dana work with?"]
    assert [(r.capability, r.params) for r in plan.sub_questions[1].requests] == [
        ("get_relationships", {"entity_id": "ent_dana", "depth": 1}),
        ("search_entities", {"query": "colleague team works with", "limit": 5})]
    assert (reply.usage, reply.model) == (Usage(1184, 162, 1, cache_read_tokens=512), FAST_MODEL)


def test_an_invalid_plan_is_retried_once_with_what_was_wrong_then_rejected(api: respx.Router,
                                                                          llm: AnthropicLLM) -> None:
    route = api.post("/v1/messages").mock(side_effect=replay("plan_research_invalid", "plan_research"))
    assert len(llm.plan_research(_context(), max_sub_questions=4).value.sub_questions) == 2
    feedback = sent(route, 1)["messages"][2]["content"][0]
    assert feedback["is_error"] and "capability" in feedback["content"] and "requests" in feedback["content"]

    route.side_effect = replay("plan_research_invalid", "plan_research_invalid")
    with pytest.raises(ExtractionRejected, match="invalid plan_research input"):
        llm.plan_research(_context(), max_sub_questions=4)


def test_the_completeness_check_shows_the_sub_questions_and_keeps_follow_ups_only_when_a_round_remains(
        api: respx.Router, llm: AnthropicLLM) -> None:
    route = api.post("/v1/messages").mock(return_value=recorded("evaluate_research"))

    reply = llm.evaluate_research(_context(), SUB_QUESTIONS, can_continue=True, max_follow_ups=3)

    body = sent(route)
    assert (body["model"], body["tool_choice"]) == (FAST_MODEL, {"type": "tool", "name": "evaluate_research"})
    assert body["tools"][0]["input_schema"] == lean(ResearchEvaluation.model_json_schema())
    assert body["system"] == _system(research_prompt.EVALUATE_SYSTEM)
    content = body["messages"][0]["content"]
    assert "- s1 (gathered): Where does Dana live? [tried: expand_entity {'entity_id': 'ent_dana'}; found: " \
           "sem_01, evt_01]" in content
    assert "Up to 3 follow-up sub-questions are allowed." in content
    verdict = reply.value
    assert (verdict.complete, verdict.answered) == (False, ["s1"])
    [follow_up] = verdict.follow_ups
    assert follow_up.requests[0].capability == "find_path"
    assert (reply.usage, reply.model) == (Usage(1402, 118, 1, cache_read_tokens=498), FAST_MODEL)

    last = llm.evaluate_research(_context(), SUB_QUESTIONS, can_continue=False, max_follow_ups=3)
    assert "No more research rounds are left" in sent(route)["messages"][0]["content"]
    assert last.value.follow_ups == [] and last.value.answered == ["s1"]


def test_a_synthesis_on_the_main_model_cites_only_context_ids_and_names_the_conflict(
        api: respx.Router, llm: AnthropicLLM) -> None:
    route = api.post("/v1/messages").mock(return_value=recorded("synthesize_research"))

    reply = llm.synthesize(_research_context(), SUB_QUESTIONS, [WORK_CONFLICT], temperature=0.2)

    body = sent(route)
    assert (body["model"], body["tool_choice"]) == (MODEL, {"type": "tool", "name": "synthesize_research"})
    assert body["tools"][0]["input_schema"] == lean(SynthesisTool.model_json_schema())
    assert body["system"] == _system(research_prompt.SYNTHESIZE_SYSTEM)
    assert '- C1 (open): sem_02 "Dana works at Acme" against sem_03 "Dana works at Globex"' in \
        body["messages"][0]["content"]
    answer = reply.value
    assert [s.id for s in answer.sources] == ["sem_01", "evt_01", "rel_01", "sem_02", "sem_03"]  # no invented id
    assert answer.content.endswith("the conflict is open (C1), so neither is confirmed.")  # named: nothing added
    assert answer.confidence == 0.62 and answer.suggested_follow_ups == ["Does Dana work at Acme or at Globex now?"]
    assert (reply.usage, reply.model) == (Usage(2210, 196, 1, cache_write_tokens=402), MODEL)


def test_a_conflict_the_synthesis_leaves_unnamed_is_named_after_it(api: respx.Router, llm: AnthropicLLM) -> None:
    api.post("/v1/messages").mock(return_value=recorded("synthesize_research"))
    home = EvidenceConflict(kind="contradicting_facts", ids=("sem_01", "evt_01"), status="unrecorded",
                            statements=("Dana lives_in Lisbon", "I moved to Lisbon last spring."))

    answer = llm.synthesize(_research_context(), SUB_QUESTIONS, [WORK_CONFLICT, home], temperature=0.2).value

    addendum = answer.content.split("\n\nConflicting evidence not addressed above:\n")[1]
    assert addendum == '- C2 (unrecorded): sem_01 "Dana lives_in Lisbon" against evt_01 "I moved to Lisbon last spring."'


def test_a_research_step_on_an_overloaded_provider_is_unavailable(api: respx.Router, llm: AnthropicLLM) -> None:
    api.post("/v1/messages").mock(return_value=recorded("overloaded_529"))

    with pytest.raises(LLMUnavailable, match="529"):
        llm.plan_research(_context(), max_sub_questions=4)


# ---------------------------------------------------------------- research: the 80k-token compaction digest
def test_the_compaction_digest_is_asked_of_the_fast_model_and_only_condenses_items_the_context_holds(
        api: respx.Router, llm: AnthropicLLM) -> None:
    route = api.post("/v1/messages").mock(return_value=recorded("digest_context"))
    context = _context().model_copy(update={"conversation": [
        "- Dana (2 March 2026): hi!", "- Dana (2 March 2026): I moved to Lisbon last spring.",
        "- Dana (2 March 2026): who do I work with again?", "- assistant (2 March 2026): let me look."]})

    reply = llm.digest(context, keep_lines=3)

    body = sent(route)
    assert (body["model"], body["tool_choice"]) == (FAST_MODEL, {"type": "tool", "name": "digest_context"})
    assert [t["name"] for t in body["tools"]] == ["digest_context"]
    assert body["tools"][0]["input_schema"] == lean(ContextDigest.model_json_schema())
    assert body["system"] == _system(digest_prompt.SYSTEM)  # the same every query: cached
    content = body["messages"][0]["content"]
    assert "- event evt_01: user: I moved to Lisbon last spring." in content  # every item, by kind and id
    assert "- Dana (2 March 2026): hi!" in content  # the whole conversation, also lines an item shows
    assert "Digest the conversation into at most 3 lines." in content
    assert (reply.usage, reply.model) == (Usage(81240, 74, 1), FAST_MODEL)

    assert apply_digest(context, reply.value) == 1  # sem_99 is no item of the context: ignored, never added
    assert context.conversation == ["- Dana: moved to Lisbon last spring; asks who she works with."]
    assert [(i.id, i.text) for i in context.items] == [
        ("evt_01", "Dana moved to Lisbon (last spring)."), ("sem_01", "Dana lives_in Lisbon"),
        ("rel_01", "Dana works_with Priya")]
