"""engram-query in research mode as synthesized: plan, gather, evaluate, gather again while the completeness
check asks for more (at most `max_research_iterations` rounds in all), synthesize; within its thinning
budgets; answered from retrieval when the model stays down. Each run is read back from the execution
history and from the stored query."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta

import psycopg
import pytest

from engram.enrichment.ingest import ingest_events
from engram.model.events import IngestRequest
from engram.model.queries import Answer, QueryConfig, QueryRequest, WorldQuery
from engram.model.research import PlannedSubQuestion, ResearchEvaluation
from engram.ports import LLM
from engram.ports.clients import Clients
from engram.query.submit import submit_query
from tests.fakes.llm import ScriptedLLM
from tests.workflow.executions import Executions

pytestmark = pytest.mark.workflow
WORLD = "wres"
MACHINE = "engram-query"
QUESTION = "Where does Dana work and who is her boss?"
T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
HEAD = ["Init", "AnswerOrResearch", "PlanResearch", "Gather", "Evaluate", "CompleteOrGatherMore"]
TAIL = ["Synthesize", "FinishResearch", "Researched"]


def _incomplete(question: str) -> ResearchEvaluation:
    return ResearchEvaluation(complete=False, notes=f"missing: {question}", follow_ups=[PlannedSubQuestion(
        question=question, requests=[{"capability": "search_memories", "params": {"query": question}}])])


@pytest.fixture(scope="module")
def world(workflow_clients: Clients, executions: Executions) -> str:
    """Dana works at Acme, then says Globex three days later (an open conflict), enriched by engram-enrichment."""
    turns = [(T0, "Hi! My name is Dana and I live in Lisbon."), (T0, "I work at Acme."),
             (T0, "Sarah is my boss. She prefers short status reports."), (T0 + timedelta(days=3), "I work at Globex.")]
    for n, (at, text) in enumerate(turns):
        request = IngestRequest.model_validate({"events": [
            {"event_id": f"r{n}", "user_id": "dana", "conversation_id": "c1", "role": "user", "content": text,
             "occurred_at": (at + timedelta(minutes=n)).isoformat()}]})
        enrichment_id = ingest_events(workflow_clients, workflow_clients.world(WORLD), request).enrichment_id
        assert enrichment_id is not None
        assert executions.wait(executions.named("engram-enrichment", enrichment_id))["status"] == "SUCCEEDED"
    assert len(workflow_clients.store.list_conflicts(WORLD, "open")) == 1
    return WORLD


def _research(clients: Clients, executions: Executions, **config: int) -> tuple[WorldQuery, str]:
    """What POST .../queries with mode research does: save the query, start engram-query; then wait for it."""
    started = submit_query(clients, WORLD, QueryRequest(user_id="dana", question=QUESTION, mode="research",
                                                        config=QueryConfig(**config)))
    assert started.status == "pending"
    arn = executions.named(MACHINE, started.query_id)
    assert executions.wait(arn)["status"] == "SUCCEEDED"
    query = clients.store.get_query(WORLD, started.query_id)
    assert query is not None
    return query, arn


@pytest.fixture
def tiny_budgets(pg_url: str) -> Iterator[None]:
    """This world's thinning budgets cut to tokens, so a small world overshoots them."""
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("INSERT INTO system_config (world_id, key, value) VALUES (%s, 'heuristics', %s) "
                     "ON CONFLICT (world_id, key) DO UPDATE SET value = EXCLUDED.value",
                     (WORLD, json.dumps({"research_drop_tokens": 60, "research_mask_tokens": 90,
                                         "research_compact_tokens": 120})))
    yield
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("DELETE FROM system_config WHERE world_id = %s", (WORLD,))


def test_an_incomplete_first_round_is_gathered_again_then_synthesized(
        world: str, workflow_clients: Clients, executions: Executions, install_llm: Callable[[LLM], None]) -> None:
    llm = ScriptedLLM(evaluations=[_incomplete("Sarah status reports"),
                                   ResearchEvaluation(complete=True, answered=["s1", "s2", "s3"])])
    install_llm(llm)
    query, arn = _research(workflow_clients, executions)

    assert executions.states_entered(arn) == [*HEAD, "Gather", "Evaluate", "CompleteOrGatherMore", *TAIL]
    output = executions.output(arn)
    assert (output["status"], output["iterations"]) == ("completed", 2)
    assert [c.method for c in llm.calls] == ["plan_research", "evaluate_research", "evaluate_research", "synthesize"]
    report = query.research
    assert report is not None and report.iterations == 2 and report.complete
    follow_up = report.sub_questions[-1]
    assert (follow_up.question, follow_up.iteration, follow_up.status) == ("Sarah status reports", 2, "answered")
    assert follow_up.evidence  # the second round ran its request
    assert [t.step for t in query.trace] == ["init", "plan", "gather", "evaluate", "gather", "evaluate", "synthesize",
                                             "finish"]
    # the two scripted evaluations' usage, counted per call (the plan and synthesis are the offline model's: free)
    assert (query.model_calls, query.input_tokens, query.output_tokens) == (2, 2 * 120, 2 * 30)


def test_the_completeness_check_stops_the_research_after_two_rounds_in_all(
        world: str, workflow_clients: Clients, executions: Executions, install_llm: Callable[[LLM], None]) -> None:
    llm = ScriptedLLM(evaluations=[_incomplete("Dana's employer")])  # never satisfied
    install_llm(llm)
    query, arn = _research(workflow_clients, executions, max_research_iterations=2)

    rounds = ["Gather", "Evaluate", "CompleteOrGatherMore"]
    assert executions.states_entered(arn) == HEAD + rounds + TAIL
    assert [c.args["can_continue"] for c in llm.calls_to("evaluate_research")] == [True, False]
    report = query.research
    assert report is not None and (report.iterations, report.complete) == (2, False)
    assert query.status == "completed" and query.answer is not None


def test_with_one_round_allowed_the_first_evaluation_goes_straight_to_synthesis(
        world: str, workflow_clients: Clients, executions: Executions, install_llm: Callable[[LLM], None]) -> None:
    llm = ScriptedLLM(evaluations=[_incomplete("Dana's employer")])
    install_llm(llm)
    _, arn = _research(workflow_clients, executions, max_research_iterations=1)
    assert executions.states_entered(arn) == HEAD + TAIL
    assert [c.args["can_continue"] for c in llm.calls_to("evaluate_research")] == [False]


def test_the_offline_research_cites_both_sides_of_the_open_conflict(
        world: str, workflow_clients: Clients, executions: Executions) -> None:
    query, arn = _research(workflow_clients, executions)

    assert executions.states_entered(arn) == HEAD + TAIL  # both clauses answered in the first round
    [conflict] = workflow_clients.store.list_conflicts(WORLD, "open")
    answer = query.answer
    assert answer is not None and query.model == "offline-heuristic"
    assert {conflict.memory_id, conflict.conflicting_memory_id} <= {s.id for s in answer.sources}
    assert "Acme" in answer.content and "Globex" in answer.content and "open conflict" in answer.content


def test_the_thinning_budgets_are_enforced_on_every_round_and_reported(
        world: str, workflow_clients: Clients, executions: Executions, install_llm: Callable[[LLM], None],
        tiny_budgets: None) -> None:
    llm = ScriptedLLM(evaluations=[_incomplete("Sarah status reports"), _incomplete("Lisbon")])
    install_llm(llm)
    query, _ = _research(workflow_clients, executions)

    report = query.research
    assert report is not None and report.budgets is not None and report.budgets.compact == 120
    assert report.peak_gathered_tokens > 120 >= report.peak_sent_tokens
    gathers = [t for t in query.trace if t.step == "gather"]
    assert len(gathers) == 2  # the default two rounds in all
    for gather in gathers:
        assert gather.detail["estimated_tokens"] <= 120 and gather.detail["budget"] == 60
        assert gather.detail["thinned"]
    # What the model reasoned over was thinned; only the compaction digest reads the context as gathered.
    assert max(c.args["items"] for c in llm.calls if "items" in c.args and c.method != "digest") < 20
    assert len(llm.calls_to("digest")) == 2  # gathered past the compaction budget each round: the model digests it


def test_a_model_that_stays_unavailable_is_retried_then_the_research_is_answered_from_retrieval(
        world: str, workflow_clients: Clients, executions: Executions, install_llm: Callable[[LLM], None]) -> None:
    llm = ScriptedLLM(unavailable=["plan_research"], synthesis=Answer(content="unused", confidence=0.9))
    install_llm(llm)
    query, arn = _research(workflow_clients, executions)

    assert executions.states_entered(arn) == ["Init", "AnswerOrResearch", "PlanResearch", "ResearchFromRetrieval",
                                              "FinishResearch", "Researched"]
    assert len(llm.calls_to("plan_research")) > 1  # the state machine's retries came first
    answer = query.answer
    assert answer is not None and answer.basis == "retrieval" and answer.content.startswith(
        "The language model is unavailable")
    assert [t.step for t in query.trace][-2:] == ["fallback", "finish"]
