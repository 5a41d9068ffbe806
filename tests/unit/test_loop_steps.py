"""The query loop's steps on in-memory fakes of their ports, driven as engram-query drives them: the first
context, the model's answer or its requests, their fulfilment, a forced answer, the fallback from retrieval
when the model is down, and the query's end."""

from __future__ import annotations

import pytest

from engram.errors import LLMUnavailable
from engram.model.queries import Answer, InfoRequest, NeedsMoreInfo, QueryRequest, Source, WorldQuery
from engram.model.world import World
from engram.query import loop
from engram.query.loop import LoopPorts
from engram.query.submit import submit_query
from tests.fakes.conversations import remember, said
from tests.fakes.llm import ScriptedLLM
from tests.fakes.ports import FakePorts

WORLD = World("wq")
MEMORY = said("Hi! My name is Dana and I live in Lisbon.", "I work at Acme Robotics as a firmware engineer.",
              "Sarah is my boss. She prefers short status reports.", "I love hiking in the mountains on weekends.",
              prefix="q")


def _asked(fakes: FakePorts, question: str = "Where does Dana live?") -> loop.LoopState:
    """A memory of Dana's four turns, and a query of hers submitted and initialised."""
    remember(fakes, WORLD, MEMORY)
    query = submit_query(fakes, "wq", QueryRequest(user_id="dana", question=question, mode="async"))
    ports: LoopPorts = fakes
    return loop.init(ports, WORLD, loop.LoopState(world_id="wq", query_id=query.query_id))


def _query(fakes: FakePorts, state: loop.LoopState) -> WorldQuery:
    query = fakes.store.get_query("wq", state.query_id)
    assert query is not None
    return query


def test_the_first_context_holds_the_search_hits_the_entities_as_summaries_and_the_conversation() -> None:
    fakes = FakePorts()
    state = _asked(fakes)
    context = fakes.store.load_context("wq", state.query_id)
    dana = fakes.store.find_entity_by_name("wq", "dana")
    assert context is not None and dana is not None
    assert "q1" in {i.id for i in context.items}
    assert dana.entity_id in context.summary_entity_ids() and context.stats().full_entities == 0
    assert "person" in context.definitions
    query = _query(fakes, state)
    assert query.status == "processing" and [t.step for t in query.trace] == ["init"]


def test_an_entity_the_question_names_comes_in_full_only_when_its_record_is_short() -> None:
    fakes = FakePorts()
    state = _asked(fakes)  # "Where does Dana live?": Dana's record (her facts) is longer than a stripped body
    dana = fakes.store.find_entity_by_name("wq", "dana")
    context = fakes.store.load_context("wq", state.query_id)
    assert dana is not None and context is not None and dana.entity_id in context.summary_entity_ids()
    roomy = World("wq", heuristics=WORLD.heuristics.with_overrides({"context_summary_body_chars": 5000}))
    query = submit_query(fakes, "wq", QueryRequest(user_id="dana", question="Where does Dana live?", mode="async"))
    state = loop.init(fakes, roomy, loop.LoopState(world_id="wq", query_id=query.query_id))
    context = fakes.store.load_context("wq", state.query_id)
    assert context is not None and dana.entity_id in context.full_entity_ids()
    record = next(i for i in context.items if i.id == dana.entity_id)
    assert "Lisbon" in record.text and dana.entity_id not in context.expandable_entity_ids()
    assert all(not i.full for i in context.items if i.kind == "entity" and i.id != dana.entity_id)  # the others


def test_initialising_again_changes_nothing() -> None:
    fakes = FakePorts()
    state = _asked(fakes)
    before = (_query(fakes, state), fakes.store.load_context("wq", state.query_id))
    loop.init(fakes, WORLD, state)
    assert (_query(fakes, state), fakes.store.load_context("wq", state.query_id)) == before


def test_an_answer_ends_the_loop_citing_only_what_the_context_holds() -> None:
    answer = Answer(content="You live in Lisbon.", confidence=0.9, sources=[
        Source(kind="event", id="q1", excerpt="I live in Lisbon"), Source(kind="event", id="q404", excerpt="made up")])
    fakes = FakePorts(llm=ScriptedLLM([answer]))
    state = loop.ask(fakes, WORLD, _asked(fakes))
    assert (state.outcome, state.iteration) == ("answer", 1)
    query = _query(fakes, state)
    assert query.answer is not None and [s.id for s in query.answer.sources] == ["q1"]
    assert query.answer.sources[0].contribution == 1.0 and query.answer.confidence_level == "high"
    assert query.model == "scripted" and query.model_calls == 1


def test_a_first_context_that_holds_the_answer_is_answered_in_one_model_call() -> None:
    fakes = FakePorts()  # the offline model: the search hits say where Dana lives, so it asks for nothing more
    state = loop.ask(fakes, WORLD, _asked(fakes))
    query = _query(fakes, state)
    assert (state.outcome, state.iteration) == ("answer", 1) and [t.step for t in query.trace] == ["init", "ask"]
    assert query.answer is not None and "Lisbon" in query.answer.content


def test_the_model_asks_for_an_entitys_record_gets_it_and_then_answers() -> None:
    fakes = FakePorts()
    state = _asked(fakes)
    dana = fakes.store.find_entity_by_name("wq", "dana")
    assert dana is not None
    fakes.llm = ScriptedLLM([NeedsMoreInfo(info_requests=[InfoRequest(capability="expand_entity",
                                                                      params={"entity_id": dana.entity_id})]),
                             Answer(content="Dana lives in Lisbon.", confidence=0.9,
                                    sources=[Source(kind="entity", id=dana.entity_id, excerpt="Dana")])])
    state = loop.ask(fakes, WORLD, state)
    context = fakes.store.load_context("wq", state.query_id)
    assert state.outcome == "needs_more_info" and dana is not None and context is not None
    assert [(r.capability, r.params) for r in context.pending_requests] == [
        ("expand_entity", {"entity_id": dana.entity_id})]
    state = loop.fulfil(fakes, WORLD, state)
    context = fakes.store.load_context("wq", state.query_id)
    assert context is not None and context.pending_requests == []
    record = next(i for i in context.items if i.id == dana.entity_id)
    assert record.full and "Lisbon" in record.text
    state = loop.ask(fakes, WORLD, state)
    final = loop.finish(fakes, state)
    query = _query(fakes, state)
    assert (final.status, final.info_requests_used) == ("completed", 1)
    assert query.answer is not None and "Lisbon" in query.answer.content
    assert [t.step for t in query.trace] == ["init", "ask", "fulfil", "ask", "finish"]


def test_a_request_outside_the_offer_leads_to_a_forced_answer_that_says_what_was_missing() -> None:
    invalid = NeedsMoreInfo(info_requests=[InfoRequest(capability="expand_entity", params={"entity_id": "ent_other"})])
    fakes = FakePorts(llm=ScriptedLLM([invalid], forced=Answer(content="Probably Lisbon.", confidence=0.9)))
    state = loop.ask(fakes, WORLD, _asked(fakes))
    assert state.outcome == "invalid_request"
    state = loop.force(fakes, WORLD, state)
    query = _query(fakes, state)
    assert state.outcome == "answer" and query.answer is not None and query.answer.forced
    assert query.answer.confidence <= WORLD.heuristics.query.answer_degraded_confidence
    assert "I could not get everything needed" in query.answer.content and "ent_other" in query.answer.content


def test_with_the_model_down_the_answer_falls_back_to_what_retrieval_found_and_says_so() -> None:
    fakes = FakePorts(llm=ScriptedLLM(unavailable=["answer"]))
    state = _asked(fakes)
    with pytest.raises(LLMUnavailable):
        loop.ask(fakes, WORLD, state)  # the state machine retries, then catches it into Fallback
    state = loop.fallback(fakes, WORLD, state, {"Error": "LLMUnavailable", "Cause": "overloaded"})
    query = _query(fakes, state)
    assert state.outcome == "answer" and query.answer is not None
    assert query.answer.basis == "retrieval" and query.answer.content.startswith("The language model is unavailable")
    # Dana's turn saying so, or the episode holding it (the learned ranker may put either first)
    assert any(s.kind in ("event", "episodic") and "Lisbon" in s.excerpt for s in query.answer.sources)
    assert query.answer.confidence_level == "low"
    assert query.trace[-1].detail["error"] == "LLMUnavailable"


def test_a_failed_query_keeps_the_cause() -> None:
    fakes = FakePorts()
    state = _asked(fakes)
    final = loop.fail(fakes, "wq", state.query_id, {"Error": "States.Timeout", "Cause": "the ask task timed out"})
    query = _query(fakes, state)
    assert final.status == "failed" and query.status == "failed"
    assert query.error == "States.Timeout: the ask task timed out" and query.completed_at is not None
