"""The query loop's steps on the real parts, driven in the order the state machine drives them."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime

import pytest

from engram.app.inline import run_query
from engram.errors import CapabilityRejected
from engram.model.context import QueryContext
from engram.model.queries import Answer, InfoRequest, NeedsMoreInfo, QueryConfig, QueryRequest, Source
from engram.ports.clients import Clients
from engram.query import loop
from engram.query import offer as offers
from engram.query.submit import submit_query
from engram.retrieval.search import search
from tests.builder import remember
from tests.fakes.llm import ScriptedLLM

pytestmark = pytest.mark.integration


def _drive(clients: Clients, world_id: str, query_id: str) -> loop.FinalState:
    """What engram-query does: Init, Ask, (Fulfil, Ask)*, Force when out of requests, Finish."""
    return loop.FinalState.model_validate(run_query(clients, world_id, query_id))


@pytest.fixture(scope="module")
def world(clients: Clients) -> str:
    events = [
        ("q1", "Hi! My name is Dana and I live in Lisbon."),
        ("q2", "I work at Acme Robotics as a firmware engineer."),
        ("q3", "Sarah is my boss. She prefers short status reports."),
        ("q4", "I love hiking in the mountains on weekends."),
    ]
    remember(clients, "wq", [{"event_id": i, "user_id": "dana", "conversation_id": "c1", "role": "user", "content": t,
                              "occurred_at": datetime(2026, 3, 1, 9, n, tzinfo=UTC).isoformat()}
                             for n, (i, t) in enumerate(events)])
    return "wq"


def test_fused_search_finds_the_event_that_states_a_fact(clients: Clients, world: str) -> None:
    result = search(clients, clients.world(world), "Where does Dana live?", user_id="dana")
    assert "q1" in [h.doc_id for h in result.hits]
    assert any("lives in Lisbon" in h.text for h in result.hits[:3])
    assert result.interpretation and result.search_time_ms > 0
    assert all(h.ranks for h in result.hits)


def test_a_question_is_answered_with_sources_from_memory(clients: Clients, world: str) -> None:
    query = submit_query(clients, world, QueryRequest(user_id="dana", question="Where does Dana live?"))
    final = _drive(clients, world, query.query_id)
    answered = clients.store.get_query(world, query.query_id)
    assert final.status == "completed" and answered is not None
    assert answered.answer is not None and "Lisbon" in answered.answer.content
    assert "q1" in {s.id for s in answered.answer.sources}
    assert answered.model == "offline-heuristic"
    assert [t.step for t in answered.trace][:2] == ["init", "ask"]


def test_an_unanswerable_question_asks_for_more_then_is_forced_and_admits_it(clients: Clients, world: str) -> None:
    query = submit_query(clients, world, QueryRequest(user_id="dana", question="What is the capital of Mongolia?",
                                                      config=QueryConfig(max_info_requests=1)))
    final = _drive(clients, world, query.query_id)
    answered = clients.store.get_query(world, query.query_id)
    assert answered is not None and answered.answer is not None
    assert final.info_requests_used <= 1
    assert answered.answer.confidence <= 0.5


# ---------------------------------------------------------------- the context: summaries first, records on request
def test_the_first_context_holds_entities_as_summaries_and_expanding_one_brings_its_full_record(
        clients: Clients, world: str) -> None:
    query = submit_query(clients, world, QueryRequest(user_id="dana", question="Where does Dana live?"))
    state = loop.init(clients, clients.world(world), loop.LoopState(world_id=world, query_id=query.query_id))
    context = clients.store.load_context(world, query.query_id)
    assert context is not None
    dana = clients.store.find_entity_by_name(world, "dana")
    assert dana is not None and dana.entity_id in context.summary_entity_ids()
    assert context.stats().entity_summaries >= 1 and context.stats().full_entities == 0

    # A model that asks for Dana's record (the offline one answers from the hits in one call: tests/unit).
    scripted = dataclasses.replace(clients, llm=ScriptedLLM([  # type: ignore[arg-type]
        NeedsMoreInfo(info_requests=[InfoRequest(capability="expand_entity", params={"entity_id": dana.entity_id})]),
        Answer(content="Dana lives in Lisbon.", confidence=0.8,
               sources=[Source(kind="entity", id=dana.entity_id, excerpt="Dana", contribution=0.7),
                        Source(kind="entity", id=dana.entity_id, excerpt="Dana")])]))
    state = loop.ask(scripted, clients.world(state.world_id), state)
    assert state.outcome == "needs_more_info"
    context = clients.store.load_context(world, query.query_id)
    assert context is not None
    assert [(r.capability, r.params) for r in context.pending_requests] == [
        ("expand_entity", {"entity_id": dana.entity_id})]
    state = loop.ask(scripted, clients.world(state.world_id), loop.fulfil(clients, clients.world(state.world_id), state))
    final = loop.finish(clients, state)

    context = clients.store.load_context(world, query.query_id)
    answered = clients.store.get_query(world, query.query_id)
    assert context is not None and answered is not None and answered.answer is not None
    record = next(i for i in context.items if i.id == dana.entity_id)
    assert record.full and "Lisbon" in record.text and dana.entity_id in context.expanded_entity_ids
    assert dana.entity_id not in context.expandable_entity_ids()
    assert final.info_requests_used == 1 and "Lisbon" in answered.answer.content
    assert sum(s.contribution or 0 for s in answered.answer.sources) == pytest.approx(1.0, abs=0.01)
    assert [t.step for t in answered.trace] == ["init", "ask", "fulfil", "ask", "finish"]
    assert answered.trace[1].detail["requests"][0]["capability"] == "expand_entity"


def test_merge_upgrades_a_summary_to_its_record_once_and_keeps_other_items_unique() -> None:
    from engram.model.context import QueryContext
    from engram.model.queries import ContextItem

    context = QueryContext(query_id="x", world_id="w", question="?")
    summary = ContextItem(kind="entity", id="e1", text="Dana (person)", full=False, name="Dana", score=0.5)
    record = ContextItem(kind="entity", id="e1", text="Dana (person). Dana lives in Lisbon", full=True, score=0.9,
                         entity_ids=["e1", "e2"])
    event = ContextItem(kind="event", id="q1", text="user: hi", entity_ids=["e3"])
    assert context.merge([summary, event, event]) == 2
    assert context.expandable_entity_ids() == ["e1"]  # the summaries not loaded yet
    assert context.model_copy(update={"referenced_entities": True}).expandable_entity_ids() == ["e1", "e3"]
    assert context.merge([record]) == 1 and context.merge([record, summary]) == 0
    assert [i.text for i in context.items] == ["Dana (person). Dana lives in Lisbon", "user: hi"]
    assert context.all_entity_ids() == ["e1"] and context.expandable_entity_ids() == []
    context.referenced_entities = True  # the world's query_referenced_entities: the ids items mention count too
    assert context.all_entity_ids() == ["e1", "e2", "e3"] and context.expandable_entity_ids() == ["e2", "e3"]
    stats = context.stats(chars_per_token=4.0)
    assert (stats.items, stats.full_entities, stats.entity_summaries) == (2, 1, 0)
    assert stats.estimated_tokens == stats.characters // 4 and stats.by_kind == {"entity": 1, "event": 1}


def test_thinning_compacts_then_strips_long_bodies_then_drops_low_scores() -> None:
    from engram.model.context import QueryContext
    from engram.model.heuristics import DEFAULT_HEURISTICS
    from engram.model.queries import ContextItem
    from engram.query import budget

    h = DEFAULT_HEURISTICS.with_overrides({"context_token_budget": 80, "context_keep_at_least": 3,
                                           "context_summary_body_chars": 100})
    items = [ContextItem(kind="summary", id=f"s{n}", text="word " * 100, score=n / 10) for n in range(6)]
    context = QueryContext(query_id="x", world_id="w", question="?", items=items, conversation=["line"] * 6)
    taken = budget.thin(context, h)
    assert taken == ["compacted", "stripped the bodies of summaries", "dropped 3 low-scoring items"]
    assert [i.id for i in context.items] == ["s3", "s4", "s5"]
    assert all(len(i.text) <= 101 for i in context.items) and len(context.conversation) == 3
    assert context.stats(h.query.chars_per_token).estimated_tokens <= 80


# ---------------------------------------------------------------- capabilities, constrained to the context
def _offer(clients: Clients, world: str) -> tuple[QueryContext, offers.Offer]:
    query = submit_query(clients, world, QueryRequest(user_id="dana", question="Where does Dana work?"))
    loop.init(clients, clients.world(world), loop.LoopState(world_id=world, query_id=query.query_id))
    context = clients.store.load_context(world, query.query_id)
    assert context is not None
    return context, offers.offer(context)


def test_every_id_a_request_names_must_be_one_the_context_holds(clients: Clients, world: str) -> None:
    context, offer = _offer(clients, world)
    held = context.all_entity_ids()[0]

    def rejected(capability: str, **params: object) -> str:
        with pytest.raises(CapabilityRejected) as caught:
            offer.validate(InfoRequest(capability=capability, params=params))  # type: ignore[arg-type]
        return caught.value.message

    assert rejected("expand_entity", entity_id="ent_other") == "expand_entity: Invalid entity ID: ent_other"
    assert "Invalid entity ID: ent_other" in rejected("expand_entities", entity_ids=[held, "ent_other"])
    assert "Invalid entity ID: ent_other" in rejected("find_path", from_entity_id=held, to_entity_id="ent_other")
    assert "depth" in rejected("get_relationships", entity_id=held, depth=9)
    assert "entity_id" in rejected("expand_entity")  # missing
    assert "'planet' is not one the context holds" in rejected("get_entities_by_definition", definition="planet")
    assert "conversation 'c9'" in rejected("get_conversation_history", conversation_id="c9")
    assert "extra" in rejected("search_memories", query="x", world_id="another-world").lower()
    assert offer.validate(InfoRequest(capability="expand_entity", params={"entity_id": held})).entity_id == held  # type: ignore[union-attr]
    assert any(held in line for line in offer.describe())


def test_each_capability_reads_the_real_store_and_returns_context_items(clients: Clients, world: str) -> None:
    context, _ = _offer(clients, world)
    dana = clients.store.find_entity_by_name(world, "dana")
    assert dana is not None

    def run(capability: str, **params: object) -> list[str]:
        typed = offers.offer(context).validate(InfoRequest(capability=capability, params=params))  # type: ignore[arg-type]
        items = offers.execute(clients, clients.world(context.world_id), context, "dana", typed)
        context.merge(items)
        return [i.text for i in items]

    acme = run("get_entity_by_name", name="Acme Robotic")  # fuzzy: one letter short
    assert acme and acme[0].startswith("Acme Robotics") and "[summary" in acme[0]
    definitions = run("list_entity_definitions")
    assert "person" in context.definitions and "person (" in definitions[0]
    people = run("get_entities_by_definition", definition="person")
    assert any(t.startswith("dana (person)") for t in people) and any(t.startswith("Sarah (person)") for t in people)
    assert any(t.startswith(("dana", "Acme")) for t in run("search_entities", query="firmware engineer"))
    (record,) = run("expand_entity", entity_id=dana.entity_id)
    assert "Lisbon" in record and "Acme Robotics" in record
    assert any("Acme Robotics" in t for t in run("get_relationships", entity_id=dana.entity_id, depth=1))
    assert any("Lisbon" in t for t in run("search_memories", query="Lisbon"))
