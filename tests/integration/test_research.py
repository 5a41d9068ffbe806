"""Research mode's steps on the real parts (embedded PostgreSQL, tantivy, the offline model), driven in the
order engram-query drives them: a plan from the question's clauses, gathering, the completeness check, and
a synthesis that cites both sides of contradictory facts."""

from __future__ import annotations

import dataclasses
import json
from datetime import UTC, datetime, timedelta

import psycopg
import pytest

from engram.app.inline import run_query
from engram.model.queries import QueryConfig, QueryRequest, WorldQuery
from engram.model.research import PlannedSubQuestion, ResearchEvaluation, ResearchPlan
from engram.ports.clients import Clients
from engram.query import loop, research
from engram.query.submit import submit_query
from tests.asgi import api_client
from tests.builder import remember
from tests.fakes.llm import ScriptedLLM

pytestmark = pytest.mark.integration
WORLD = "wr"
T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
QUESTION = "Where does Dana work and who is her boss?"


def _say(clients: Clients, world: str, user: str, at: datetime, *texts: str) -> None:
    ids = [f"{world}-{user}-{at:%j%H%M}-{n}" for n in range(len(texts))]
    remember(clients, world, [
        {"event_id": i, "user_id": user, "conversation_id": f"c-{user}", "role": "user", "content": t,
         "occurred_at": (at + timedelta(minutes=n)).isoformat()}
        for n, (i, t) in enumerate(zip(ids, texts, strict=True))], now=at + timedelta(hours=1))


@pytest.fixture(scope="module")
def world(clients: Clients) -> str:
    """Dana said she works at Acme, then three days later at Globex: no rule decides, the conflict is open."""
    _say(clients, WORLD, "dana", T0, "Hi! My name is Dana and I live in Lisbon.", "I work at Acme.",
         "Sarah is my boss. She prefers short status reports.")
    _say(clients, WORLD, "dana", T0 + timedelta(days=3), "I work at Globex.")
    [conflict] = clients.store.list_conflicts(WORLD, "open")
    assert conflict.strategy == "ask_user"
    return WORLD


def _research(clients: Clients, question: str = QUESTION, **config: int) -> WorldQuery:
    query = submit_query(clients, WORLD, QueryRequest(user_id="dana", question=question, mode="research",
                                                      config=QueryConfig(**config)))
    run_query(clients, WORLD, query.query_id)  # the fixture's workflows only record the start
    done = clients.store.get_query(WORLD, query.query_id)
    assert done is not None
    return done


def test_a_research_query_over_contradictory_facts_cites_both_sides_and_names_the_conflict(
        clients: Clients, world: str) -> None:
    query = _research(clients)

    assert (query.mode, query.status) == ("research", "completed")
    report, answer = query.research, query.answer
    assert report is not None and answer is not None
    [conflict] = clients.store.list_conflicts(WORLD, "open")
    named = next(c for c in report.conflicts if c.conflict_id == conflict.conflict_id)
    assert (named.kind, named.status) == ("memory_conflict", "open")
    assert set(named.ids) == {conflict.memory_id, conflict.conflicting_memory_id}
    assert {conflict.memory_id, conflict.conflicting_memory_id} <= {s.id for s in answer.sources}
    assert "Acme" in answer.content and "Globex" in answer.content
    assert "Conflicting evidence" in answer.content and "open conflict" in answer.content
    assert "Sarah" in answer.content  # the second clause, answered too
    assert answer.confidence_level in ("medium", "low")  # an open conflict lowers it


def test_the_offline_plan_has_one_sub_question_per_clause_each_with_requests(clients: Clients, world: str) -> None:
    query = _research(clients)
    report = query.research
    assert report is not None
    questions = [s.question for s in report.sub_questions if s.iteration == 1]
    assert questions[:2] == ["Where does Dana work", "who is her boss"]
    first = report.sub_questions[0]
    assert [r.capability for r in first.requests][:2] == ["search_memories", "expand_entity"]  # Dana is named
    assert all(s.status == "answered" for s in report.sub_questions) and report.complete
    assert report.iterations == 1  # complete after the first round: no second one
    plan = next(t for t in query.trace if t.step == "plan")
    assert plan.detail["sub_questions"][:2] == questions[:2]


def test_the_trace_shows_the_research_states_in_order_and_the_query_reads_back_with_its_report(
        clients: Clients, world: str) -> None:
    query = _research(clients)
    assert [t.step for t in query.trace] == ["init", "plan", "gather", "evaluate", "synthesize", "finish"]
    gather = next(t for t in query.trace if t.step == "gather")
    assert gather.detail["served"] >= 3 and gather.detail["conflicts"] >= 1
    assert gather.detail["estimated_tokens"] <= gather.detail["budget"] == 40_000
    assert query.model == "offline-heuristic"


def test_an_incomplete_evaluation_gathers_again_and_stops_after_the_allowed_rounds(clients: Clients,
                                                                                  world: str) -> None:
    never = ResearchEvaluation(complete=False, answered=[], notes="still missing", follow_ups=[PlannedSubQuestion(
        question="Dana's employer", requests=[{"capability": "search_memories", "params": {"query": "employer"}}])])
    llm = ScriptedLLM(evaluations=[never])
    scripted = dataclasses.replace(clients, llm=llm)  # type: ignore[arg-type]

    query = _research(scripted, max_research_iterations=2)

    assert [t.step for t in query.trace if t.step in ("gather", "evaluate")] == ["gather", "evaluate"] * 2
    assert [c.args["can_continue"] for c in llm.calls_to("evaluate_research")] == [True, False]
    report = query.research
    assert report is not None and report.iterations == 2 and not report.complete
    assert [s.iteration for s in report.sub_questions if s.question == "Dana's employer"] == [2]
    last = [t for t in query.trace if t.step == "evaluate"][-1]
    assert last.outcome == "complete" and last.detail["stopped"] == "no research iterations left"
    assert query.status == "completed" and query.answer is not None


def test_a_request_naming_an_id_the_context_does_not_hold_is_skipped_not_fatal(clients: Clients, world: str) -> None:
    plan = ResearchPlan(sub_questions=[
        PlannedSubQuestion(question="Who is ent_made_up?", requests=[
            {"capability": "expand_entity", "params": {"entity_id": "ent_made_up"}},
            {"capability": "search_memories", "params": {"query": "boss"}}])])
    scripted = dataclasses.replace(clients, llm=ScriptedLLM(plan=plan))  # type: ignore[arg-type]

    query = _research(scripted)

    report = query.research
    assert report is not None
    [sub] = [s for s in report.sub_questions if s.iteration == 1]
    assert sub.rejected == ["expand_entity: Invalid entity ID: ent_made_up"]
    assert sub.evidence  # the search still ran
    assert query.status == "completed"


def test_each_research_step_is_idempotent_on_its_iteration(clients: Clients, world: str) -> None:
    query = submit_query(clients, WORLD, QueryRequest(user_id="dana", question=QUESTION, mode="research"))
    planned = research.plan(clients, clients.world(WORLD),
                            loop.init(clients, clients.world(WORLD), loop.LoopState(world_id=WORLD, query_id=query.query_id)))
    gathered = research.gather(clients, clients.world(planned.world_id), planned)
    again = research.gather(clients, clients.world(planned.world_id), planned)  # Express runs at least once: a replay changes nothing
    assert again == gathered
    assert research.evaluate(clients, clients.world(gathered.world_id), gathered) == research.evaluate(clients, clients.world(gathered.world_id), gathered)
    stored = clients.store.get_query(WORLD, query.query_id)
    assert stored is not None
    assert [t.step for t in stored.trace] == ["init", "plan", "gather", "evaluate"]


def test_the_thinning_budgets_hold_and_are_reported(clients: Clients, world: str, pg_url: str) -> None:
    with psycopg.connect(pg_url, autocommit=True) as conn:  # a world with tiny budgets, to see them bite
        conn.execute("INSERT INTO system_config (world_id, key, value) VALUES (%s, 'heuristics', %s) "
                     "ON CONFLICT (world_id, key) DO UPDATE SET value = EXCLUDED.value",
                     (WORLD, json.dumps({"research_drop_tokens": 60, "research_mask_tokens": 90,
                                         "research_compact_tokens": 120})))
    try:
        query = _research(clients)
    finally:
        with psycopg.connect(pg_url, autocommit=True) as conn:
            conn.execute("DELETE FROM system_config WHERE world_id = %s", (WORLD,))
    report = query.research
    assert report is not None and report.budgets is not None
    assert (report.budgets.drop, report.budgets.mask, report.budgets.compact) == (60, 90, 120)
    assert report.peak_gathered_tokens > 120 >= report.peak_sent_tokens
    assert any(m.startswith("masked long bodies") for m in report.thinned)
    assert any(m.startswith("dropped") for m in report.thinned)
    context = clients.store.load_context(WORLD, query.query_id)
    assert context is not None and context.stats().estimated_tokens <= 120
    conflict_sides = {i for c in report.conflicts for i in c.ids}
    assert conflict_sides <= {i.id for i in context.items}  # both sides of a conflict survive thinning


def test_research_over_http_answers_202_then_reads_back_completed_with_its_report(clients: Clients,
                                                                                   world: str) -> None:
    with api_client(clients) as api:
        started = api.post(f"/v1/worlds/{WORLD}/queries", json={"user_id": "dana", "question": QUESTION,
                                                                 "mode": "research"})
        assert started.status_code == 202, started.text
        body = api.get(f"/v1/worlds/{WORLD}/queries/{started.json()['query_id']}").json()
        assert api.post(f"/v1/worlds/{WORLD}/queries", json={
            "user_id": "dana", "question": QUESTION, "mode": "research",
            "config": {"max_research_iterations": 9}}).status_code == 422
    assert (body["mode"], body["status"]) == ("research", "completed")
    assert body["research"]["budgets"] == {"drop": 40_000, "mask": 60_000, "compact": 80_000}
    assert body["research"]["conflicts"] and body["answer"]["sources"]
    assert [t["step"] for t in body["trace"]][:3] == ["init", "plan", "gather"]
