"""engram-query as synthesized: the model answers at once, asks for more first, keeps asking until it is
forced to answer, asks for an id it was never shown, or stays unavailable; each run is read back from the
execution history."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest

from engram.enrichment.ingest import ingest_events
from engram.model.events import IngestRequest
from engram.model.queries import Answer, InfoRequest, NeedsMoreInfo, QueryConfig, QueryRequest, Source, WorldQuery
from engram.ports import LLM
from engram.ports.clients import Clients
from engram.query.submit import submit_query
from infra.constructs.workflows import RETRY_ATTEMPTS
from tests.fakes.llm import ScriptedLLM
from tests.workflow.executions import Executions

pytestmark = pytest.mark.workflow
WORLD = "wq"
MACHINE = "engram-query"
QUESTION = "Where does Dana live?"
T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
ANSWER = Answer(content="Dana lives in Lisbon.", confidence=0.8,
                sources=[Source(kind="event", id="q1", excerpt="I live in Lisbon.")])


@pytest.fixture(scope="module")
def world(workflow_clients: Clients, executions: Executions) -> str:
    """Dana's memories, enriched by engram-enrichment before any question is asked."""
    turns = ["Hi! My name is Dana and I live in Lisbon.", "I work at Acme Robotics as a firmware engineer.",
             "Sarah is my boss. She prefers short status reports."]
    request = IngestRequest.model_validate({"events": [
        {"event_id": f"q{i + 1}", "user_id": "dana", "conversation_id": "c1", "role": "user", "content": text,
         "occurred_at": (T0 + timedelta(minutes=i)).isoformat()} for i, text in enumerate(turns)]})
    enrichment_id = ingest_events(workflow_clients, workflow_clients.world(WORLD), request).enrichment_id
    assert enrichment_id is not None
    assert executions.wait(executions.named("engram-enrichment", enrichment_id))["status"] == "SUCCEEDED"
    return WORLD


def _ask(clients: Clients, max_info_requests: int = 3) -> WorldQuery:
    """What POST /v1/worlds/{world}/query does in sync mode: save the query, run engram-query to the end."""
    return submit_query(clients, WORLD, QueryRequest(user_id="dana", question=QUESTION,
                                                     config=QueryConfig(max_info_requests=max_info_requests)))


def _search(query: str) -> NeedsMoreInfo:
    return NeedsMoreInfo(info_requests=[InfoRequest(capability="search_memories", params={"query": query})],
                         reason="the context does not say")


def test_a_model_that_answers_at_once_takes_one_ask(world: str, workflow_clients: Clients, executions: Executions,
                                                    install_llm: Callable[[LLM], None]) -> None:
    llm = ScriptedLLM([ANSWER])
    install_llm(llm)
    query = _ask(workflow_clients)
    arn = executions.named(MACHINE, query.query_id)

    assert executions.wait(arn)["status"] == "SUCCEEDED"
    assert executions.states_entered(arn) == ["Init", "AnswerOrResearch", "Ask", "AnswerOrMoreInfo", "Finish",
                                              "Answered"]
    output = executions.output(arn)
    assert (output["status"], output["iterations"], output["info_requests_used"]) == ("completed", 1, 0)
    assert query.status == "completed" and query.info_requests_used == 0
    assert query.answer is not None and query.answer.content == "Dana lives in Lisbon." and not query.answer.forced
    assert [s.id for s in query.answer.sources] == ["q1"]
    assert [c.method for c in llm.calls] == ["answer"]
    assert query.model == "scripted" and query.model_calls == 1


def test_a_model_that_asks_twice_gets_two_fulfilments_then_answers(
        world: str, workflow_clients: Clients, executions: Executions,
        install_llm: Callable[[LLM], None]) -> None:
    dana = workflow_clients.store.find_entity_by_name(WORLD, "dana")
    assert dana is not None
    details = NeedsMoreInfo(info_requests=[InfoRequest(capability="expand_entity",
                                                       params={"entity_id": dana.entity_id})])
    llm = ScriptedLLM([_search("Acme Robotics"), details, ANSWER])
    install_llm(llm)
    query = _ask(workflow_clients)
    arn = executions.named(MACHINE, query.query_id)

    assert executions.wait(arn)["status"] == "SUCCEEDED"
    assert executions.states_entered(arn) == ["Init", "AnswerOrResearch", "Ask", "AnswerOrMoreInfo", "Fulfil", "Ask",
                                              "AnswerOrMoreInfo", "Fulfil", "Ask", "AnswerOrMoreInfo", "Finish", "Answered"]
    output = executions.output(arn)
    assert (output["status"], output["iterations"], output["info_requests_used"]) == ("completed", 3, 2)
    assert query.status == "completed" and query.info_requests_used == 2
    assert query.answer is not None and not query.answer.forced
    fulfilled = [t for t in query.trace if t.step == "fulfil"]
    assert [t.outcome for t in fulfilled] == ["fulfilled", "fulfilled"]  # both requests passed validation
    asks = llm.calls_to("answer")
    assert [c.args["remaining_info_requests"] for c in asks] == [3, 2, 1]
    context = workflow_clients.store.load_context(WORLD, query.query_id)
    assert context is not None and dana.entity_id in context.expanded_entity_ids


def test_a_model_that_keeps_asking_is_forced_to_answer_after_max_info_requests(
        world: str, workflow_clients: Clients, executions: Executions,
        install_llm: Callable[[LLM], None]) -> None:
    llm = ScriptedLLM([_search("Lisbon")], forced=Answer(content="Probably Lisbon.", confidence=0.4))
    install_llm(llm)
    query = _ask(workflow_clients, max_info_requests=2)
    arn = executions.named(MACHINE, query.query_id)

    assert executions.wait(arn)["status"] == "SUCCEEDED"
    assert executions.states_entered(arn) == ["Init", "AnswerOrResearch", "Ask", "AnswerOrMoreInfo", "Fulfil", "Ask",
                                              "AnswerOrMoreInfo", "Fulfil", "Ask", "AnswerOrMoreInfo", "Force", "Finish",
                                              "Answered"]
    output = executions.output(arn)
    assert (output["status"], output["iterations"], output["info_requests_used"]) == ("completed", 3, 2)
    assert query.status == "completed" and query.info_requests_used == 2
    assert query.answer is not None and query.answer.forced and query.answer.content == "Probably Lisbon."
    assert [c.method for c in llm.calls] == ["answer", "answer", "answer", "force_answer"]
    assert [c.args["can_request_more"] for c in llm.calls_to("answer")] == [True, True, False]


def test_a_request_for_an_entity_the_context_does_not_hold_ends_the_loop_with_a_low_confidence_forced_answer(
        world: str, workflow_clients: Clients, executions: Executions,
        install_llm: Callable[[LLM], None]) -> None:
    invented = NeedsMoreInfo(info_requests=[InfoRequest(capability="expand_entity", params={"entity_id": "ent_made_up"},
                                                        reason="Dana's employer")])
    llm = ScriptedLLM([invented], forced=Answer(content="Dana lives in Lisbon.", confidence=0.9))
    install_llm(llm)
    query = _ask(workflow_clients)
    arn = executions.named(MACHINE, query.query_id)

    assert executions.wait(arn)["status"] == "SUCCEEDED"
    assert executions.states_entered(arn) == ["Init", "AnswerOrResearch", "Ask", "AnswerOrMoreInfo", "Force", "Finish",
                                              "Answered"]
    assert query.status == "completed" and query.info_requests_used == 0  # nothing was run for it
    answer = query.answer
    assert answer is not None and answer.forced
    assert answer.confidence <= 0.3 and answer.confidence_level == "low"
    assert "Dana's employer" in answer.content and "Invalid entity ID: ent_made_up" in answer.content
    ask = next(t for t in query.trace if t.step == "ask")
    assert ask.outcome == "invalid_request"
    assert [c.method for c in llm.calls] == ["answer", "force_answer"]


def test_a_model_that_stays_unavailable_is_retried_then_the_question_is_answered_from_retrieval(
        world: str, workflow_clients: Clients, executions: Executions,
        install_llm: Callable[[LLM], None]) -> None:
    llm = ScriptedLLM([ANSWER], unavailable=["answer", "force_answer"])
    install_llm(llm)
    query = _ask(workflow_clients)
    arn = executions.named(MACHINE, query.query_id)

    assert executions.wait(arn)["status"] == "SUCCEEDED"
    assert executions.states_entered(arn) == ["Init", "AnswerOrResearch", "Ask", "AnswerFromRetrieval", "Finish",
                                              "Answered"]
    assert len(llm.calls_to("answer")) == 1 + RETRY_ATTEMPTS  # the state machine's retries, then the fallback
    assert query.status == "completed"
    answer = query.answer
    assert answer is not None and answer.basis == "retrieval" and answer.confidence_level == "low"
    assert answer.content.startswith("The language model is unavailable")
    assert "Lisbon" in answer.content and answer.sources  # what retrieval found, cited
    assert query.model_calls == 0
    fallback = next(t for t in query.trace if t.step == "fallback")
    assert fallback.detail["error"] == "LLMUnavailable"
