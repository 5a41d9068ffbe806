"""Research mode's steps on in-memory fakes of their ports, driven as engram-query drives them: the plan, the
gathering, the completeness check that may send it back, and a synthesis that cites both sides of
contradictory facts."""

from __future__ import annotations

from datetime import timedelta

from engram.model.queries import InfoRequest, QueryConfig, QueryRequest, WorldQuery
from engram.model.research import PlannedSubQuestion, ResearchEvaluation, ResearchPlan
from engram.model.world import World
from engram.ports import ContextDigest
from engram.query import loop, research
from engram.query.research import ResearchPorts, ResearchState
from engram.query.submit import submit_query
from tests.fakes.conversations import T0, remember, said
from tests.fakes.llm import ScriptedLLM
from tests.fakes.ports import FakePorts

WORLD = World("wr")
QUESTION = "Where does Dana work and who is her boss?"


def _planned(fakes: FakePorts, max_research_iterations: int = 2) -> ResearchState:
    """Dana said she works at Acme, then three days later at Globex (no rule decides: the conflict is open);
    a research query of hers, initialised and planned."""
    remember(fakes, WORLD, said("Hi! My name is Dana and I live in Lisbon.", "I work at Acme.",
                                "Sarah is my boss. She prefers short status reports."))
    remember(fakes, WORLD, said("I work at Globex.", first=4, start=T0 + timedelta(days=3)))
    query = submit_query(fakes, "wr", QueryRequest(user_id="dana", question=QUESTION, mode="research",
                                                   config=QueryConfig(max_research_iterations=max_research_iterations)))
    ports: ResearchPorts = fakes
    return research.plan(ports, WORLD, loop.init(ports, WORLD, loop.LoopState(world_id="wr", query_id=query.query_id)))


def _query(fakes: FakePorts, state: ResearchState) -> WorldQuery:
    query = fakes.store.get_query("wr", state.query_id)
    assert query is not None and query.research is not None
    return query


def test_the_plan_has_a_sub_question_per_clause_each_with_the_requests_to_answer_it() -> None:
    fakes = FakePorts()
    state = _planned(fakes)
    report = _query(fakes, state).research
    assert state.outcome == "planned" and report is not None
    assert [s.question for s in report.sub_questions][:2] == ["Where does Dana work", "who is her boss"]
    assert [r.capability for r in report.sub_questions[0].requests][:2] == ["search_memories", "expand_entity"]
    assert all(s.status == "pending" for s in report.sub_questions)


def test_gathering_runs_the_requests_and_brings_in_both_sides_of_an_open_conflict() -> None:
    fakes = FakePorts()
    state = research.gather(fakes, WORLD, _planned(fakes))
    report = _query(fakes, state).research
    [conflict] = fakes.store.list_conflicts("wr", "open")
    assert state.outcome == "gathered" and report is not None
    assert all(s.status == "gathered" and s.evidence for s in report.sub_questions)
    [named] = [c for c in report.conflicts if c.conflict_id == conflict.conflict_id]
    assert (named.kind, named.status) == ("memory_conflict", "open")
    context = fakes.store.load_context("wr", state.query_id)
    assert context is not None and set(named.ids) <= {i.id for i in context.items}


def test_an_incomplete_evaluation_gathers_again_until_no_rounds_remain() -> None:
    never = ResearchEvaluation(complete=False, answered=[], notes="still missing", follow_ups=[PlannedSubQuestion(
        question="Dana's employer", requests=[InfoRequest(capability="search_memories", params={"query": "employer"})])])
    llm = ScriptedLLM(evaluations=[never])
    fakes = FakePorts(llm=llm)
    state = research.evaluate(fakes, WORLD, research.gather(fakes, WORLD, _planned(fakes, max_research_iterations=2)))
    assert (state.outcome, state.remaining_iterations) == ("incomplete", 1)
    state = research.evaluate(fakes, WORLD, research.gather(fakes, WORLD, state))
    assert state.outcome == "complete"  # no round left: the synthesis comes next
    assert [c.args["can_continue"] for c in llm.calls_to("evaluate_research")] == [True, False]
    query = _query(fakes, state)
    assert query.research is not None and query.research.iterations == 2 and not query.research.complete
    assert query.trace[-1].detail["stopped"] == "no research iterations left"


def test_the_synthesis_cites_both_sides_of_the_conflict_and_names_it() -> None:
    fakes = FakePorts()
    state = research.evaluate(fakes, WORLD, research.gather(fakes, WORLD, _planned(fakes)))
    assert state.outcome == "complete"
    state = research.synthesize(fakes, WORLD, state)
    query = _query(fakes, state)
    [conflict] = fakes.store.list_conflicts("wr", "open")
    assert state.outcome == "answer" and query.answer is not None
    assert {conflict.memory_id, conflict.conflicting_memory_id} <= {s.id for s in query.answer.sources}
    assert "Acme" in query.answer.content and "Globex" in query.answer.content
    assert "Conflicting evidence" in query.answer.content
    assert [t.step for t in query.trace] == ["init", "plan", "gather", "evaluate", "synthesize"]


def test_a_request_naming_an_id_the_context_does_not_hold_is_skipped_not_fatal() -> None:
    plan = ResearchPlan(sub_questions=[PlannedSubQuestion(question="Who is ent_made_up?", requests=[
        InfoRequest(capability="expand_entity", params={"entity_id": "ent_made_up"}),
        InfoRequest(capability="search_memories", params={"query": "boss"})])])
    fakes = FakePorts(llm=ScriptedLLM(plan=plan))
    state = research.gather(fakes, WORLD, _planned(fakes))
    report = _query(fakes, state).research
    assert report is not None
    [sub] = report.sub_questions
    assert sub.rejected == ["expand_entity: Invalid entity ID: ent_made_up"]
    assert sub.evidence and sub.status == "gathered"  # the search still ran


def test_a_follow_up_round_that_gathers_nothing_new_stops_the_research_with_rounds_left() -> None:
    never = ResearchEvaluation(complete=False, answered=[], notes="still missing", follow_ups=[PlannedSubQuestion(
        question="Dana's employer", requests=[InfoRequest(capability="search_memories", params={"query": "employer"})])])
    llm = ScriptedLLM(evaluations=[never])
    fakes = FakePorts(llm=llm)
    state = research.evaluate(fakes, WORLD, research.gather(fakes, WORLD, _planned(fakes, max_research_iterations=4)))
    rounds = 1
    while state.outcome == "incomplete":
        state = research.evaluate(fakes, WORLD, research.gather(fakes, WORLD, state))
        rounds += 1
    query = _query(fakes, state)
    added = [t.detail["items_added"] for t in query.trace if t.step == "gather"]
    assert added[-1] == 0 and all(n > 0 for n in added[1:-1])  # the same follow-up again finds nothing new
    assert rounds < 4 and state.remaining_iterations > 0
    assert query.trace[-1].detail["stopped"] == "the last round gathered nothing new"
    assert len(llm.calls_to("evaluate_research")) == rounds


def _over_budget() -> World:
    """WORLD with its research budgets so low that anything gathered is past the compaction threshold."""
    return World("wr", WORLD.heuristics.with_overrides({"research_drop_tokens": 20, "research_mask_tokens": 30,
                                                        "research_compact_tokens": 40}))


def test_a_context_gathered_past_the_compaction_threshold_is_digested_by_the_model_and_the_call_counted() -> None:
    digested = ContextDigest(conversation=["- dana: works at Acme, then Globex; Sarah is her boss."])
    llm = ScriptedLLM(digested=digested)
    fakes = FakePorts(llm=llm)
    planned = _planned(fakes)
    calls_before = _query(fakes, planned).model_calls
    state = research.gather(fakes, _over_budget(), planned)
    [call] = llm.calls_to("digest")
    assert call.args["keep_lines"] == WORLD.heuristics.query.context_compact_conversation
    query = _query(fakes, state)
    step = query.trace[-1]
    assert (step.step, step.detail["digest_model"], step.detail["tokens"]["input"]) == ("gather", "scripted", 120)
    assert query.model_calls == calls_before + 1
    assert any(m.startswith("compacted (gathered ") for m in step.detail["thinned"])
    context = fakes.store.load_context("wr", state.query_id)
    assert context is not None and context.conversation == digested.conversation


def test_a_digest_the_provider_cannot_give_leaves_the_compaction_to_the_rules_and_the_research_goes_on() -> None:
    fakes = FakePorts(llm=ScriptedLLM(unavailable=["digest"]))
    state = research.gather(fakes, _over_budget(), _planned(fakes))
    assert state.outcome == "gathered"
    step = _query(fakes, state).trace[-1]
    assert "digest_model" not in step.detail
    assert any(m.endswith("by rules: the digest call failed)") for m in step.detail["thinned"])
