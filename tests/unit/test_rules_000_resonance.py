"""The Resonance Intelligence System's rules as its quick reference states them (seed 000), one table row each:
the WorldQuery lifecycle and its config, the two-level QueryContext, Answer / NeedsMoreInfo, the capabilities
and their constraints, and the bounded loop. The rows are copied from the document; docs/rules.md
maps each to its code."""

from __future__ import annotations

import typing
from typing import Any

import pytest

from engram.app.inline import run_query
from engram.errors import CapabilityRejected
from engram.model.common import utcnow
from engram.model.context import QueryContext
from engram.model.heuristics import DEFAULT_HEURISTICS
from engram.model.queries import (
    Answer,
    ConfidenceLevel,
    ContextItem,
    InfoRequest,
    NeedsMoreInfo,
    QueryConfig,
    QueryRequest,
    QueryStatus,
    WorldQuery,
)
from engram.model.world import World
from engram.query import loop
from engram.query import offer as offers
from engram.query.submit import submit_query
from tests.fakes.conversations import remember, said
from tests.fakes.llm import ScriptedLLM
from tests.fakes.ports import FakePorts

MEMORY = said("Hi! My name is Dana and I live in Lisbon.", "I work at Acme Robotics as a firmware engineer.",
              "Sarah is my boss. She prefers short status reports.", prefix="r")

# `pending → processing → completed/failed`
STATUSES = ("pending", "processing", "completed", "failed")
# The document's config: `{ maxInfoRequests: 3, maxInitialEntities: 10, includeRelationships: true, temperature: 0.7 }`
DEFAULT_QUERY_CONFIG = [("max_info_requests", 3), ("max_initial_entities", 10), ("include_relationships", True),
                        ("temperature", 0.7)]
# Built-in capabilities 1-6 (`EXPAND_ENTITY` / `EXPAND_ENTITIES` are the first).
BUILT_IN_CAPABILITIES = ["expand_entity", "expand_entities", "search_entities", "get_entity_by_name",
                         "get_relationships", "list_entity_definitions", "get_entities_by_definition"]
# `confidence: 'high' | 'medium' | 'low'`
CONFIDENCE_LEVELS = ("high", "medium", "low")


def _ports(**overrides: object) -> tuple[FakePorts, World]:
    heuristics = DEFAULT_HEURISTICS.with_overrides(dict(overrides))
    fakes, world = FakePorts(heuristics=heuristics), World("wr", heuristics)
    remember(fakes, world, MEMORY)  # enriched by the offline model; the loop then asks a scripted one
    fakes.llm = ScriptedLLM([Answer(content="Lisbon.", confidence=0.9)])
    return fakes, world


def _submitted(fakes: FakePorts, config: QueryConfig | None = None) -> WorldQuery:
    return submit_query(fakes, "wr", QueryRequest(user_id="dana", question="Where does Dana live?", mode="async",
                                                   config=config or QueryConfig()))


def _stored(fakes: FakePorts, query_id: str) -> WorldQuery:
    query = fakes.store.get_query("wr", query_id)
    assert query is not None
    return query


def _context(*items: ContextItem, referenced: bool = False) -> QueryContext:
    context = QueryContext(query_id="q", world_id="w", question="Who are the main heroes?",
                           referenced_entities=referenced)
    context.merge(list(items))
    return context


def _summary(entity_id: str) -> ContextItem:
    return ContextItem(kind="entity", id=entity_id, text=f"{entity_id} (person) [summary]", full=False,
                       name=entity_id, entity_ids=[entity_id])


def _full(entity_id: str, *related: str) -> ContextItem:
    return ContextItem(kind="entity", id=entity_id, text=f"{entity_id} (person): the full record", full=True,
                       name=entity_id, entity_ids=[entity_id, *related])


def _fact(memory_id: str, *entity_ids: str) -> ContextItem:
    return ContextItem(kind="semantic", id=memory_id, text="a fact", entity_ids=list(entity_ids))


# ---------------------------------------------------------------- 1. WorldQuery: its lifecycle and config
def test_a_query_has_exactly_the_four_statuses_of_the_lifecycle() -> None:
    assert typing.get_args(QueryStatus) == STATUSES


def test_a_query_goes_pending_then_processing_then_completed() -> None:
    fakes, world = _ports()
    query = _submitted(fakes)
    assert _stored(fakes, query.query_id).status == "pending"
    state = loop.init(fakes, world, loop.LoopState(world_id="wr", query_id=query.query_id))
    assert _stored(fakes, query.query_id).status == "processing"  # startProcessing()
    loop.finish(fakes, loop.ask(fakes, world, state))
    assert _stored(fakes, query.query_id).status == "completed"  # complete()


def test_a_query_that_fails_goes_from_processing_to_failed() -> None:
    fakes, world = _ports()
    query = _submitted(fakes)
    loop.init(fakes, world, loop.LoopState(world_id="wr", query_id=query.query_id))
    assert loop.fail(fakes, "wr", query.query_id, {"Error": "States.Timeout"}).status == "failed"  # fail()
    assert _stored(fakes, query.query_id).status == "failed"


@pytest.mark.parametrize(("field", "value"), DEFAULT_QUERY_CONFIG)
def test_the_default_query_config_is_the_documents(field: str, value: object) -> None:
    assert getattr(QueryConfig(), field) == value


def test_the_configured_temperature_is_the_one_the_model_is_asked_with() -> None:
    temperatures: list[float] = []

    class Recording(ScriptedLLM):
        def answer(self, context: QueryContext, *, can_request_more: bool, remaining_info_requests: int,
                   temperature: float) -> Any:
            temperatures.append(temperature)
            return super().answer(context, can_request_more=can_request_more,
                                  remaining_info_requests=remaining_info_requests, temperature=temperature)

    fakes, world = _ports()
    fakes.llm = Recording([Answer(content="Lisbon.", confidence=0.9)])
    query = _submitted(fakes)
    loop.ask(fakes, world, loop.init(fakes, world, loop.LoopState(world_id="wr", query_id=query.query_id)))
    assert temperatures == [0.7]


@pytest.mark.parametrize(("used", "remaining", "can_request"), [(0, 3, True), (1, 2, True), (2, 1, True),
                                                                (3, 0, False), (4, 0, False)])
def test_each_info_request_round_counts_against_the_limit_of_three(used: int, remaining: int,
                                                                    can_request: bool) -> None:
    query = WorldQuery(world_id="w", query_id="q", user_id="u", question="?", created_at=utcnow(),
                       info_requests_used=used)  # recordInfoRequest() as many times
    assert (query.remaining_info_requests, query.can_request_more_info) == (remaining, can_request)


@pytest.mark.parametrize("max_initial_entities", [1, 2])
def test_the_initial_context_holds_at_most_max_initial_entities_summaries(max_initial_entities: int) -> None:
    fakes, world = _ports()
    query = _submitted(fakes, QueryConfig(max_initial_entities=max_initial_entities))
    loop.init(fakes, world, loop.LoopState(world_id="wr", query_id=query.query_id))
    context = fakes.store.load_context("wr", query.query_id)
    assert context is not None and 1 <= len(context.summary_entity_ids()) <= max_initial_entities


@pytest.mark.parametrize("include_relationships", [True, False])
def test_relationships_join_the_initial_context_only_when_the_config_includes_them(
        include_relationships: bool) -> None:
    fakes, world = _ports()
    query = _submitted(fakes, QueryConfig(include_relationships=include_relationships))
    loop.init(fakes, world, loop.LoopState(world_id="wr", query_id=query.query_id))
    context = fakes.store.load_context("wr", query.query_id)
    assert context is not None
    assert any(i.kind == "relationship" for i in context.items) is include_relationships


# ---------------------------------------------------------------- 2. QueryContext: two-level entities
@pytest.mark.parametrize(("items", "all_ids", "expandable"), [
    ((), [], []),
    ((_summary("e1"),), ["e1"], ["e1"]),
    ((_full("e1"),), ["e1"], []),
    ((_full("e1", "e2"), _summary("e3")), ["e1", "e3"], ["e3"]),
    ((_summary("e1"), _fact("m1", "e1", "e9")), ["e1"], ["e1"]),  # e9 is only mentioned: not known
])
def test_all_entity_ids_are_the_full_and_summary_entities_and_the_expandable_ones_the_summaries_not_loaded(
        items: tuple[ContextItem, ...], all_ids: list[str], expandable: list[str]) -> None:
    context = _context(*items)
    assert context.all_entity_ids() == all_ids and context.expandable_entity_ids() == expandable
    assert bool(context.expandable_entity_ids()) is bool(expandable)  # hasExpandableEntities()


def test_a_world_may_let_requests_name_the_entities_items_only_mention() -> None:
    context = _context(_summary("e1"), _fact("m1", "e1", "e9"), referenced=True)
    assert context.all_entity_ids() == ["e1", "e9"] and context.expandable_entity_ids() == ["e1", "e9"]
    fakes, world = _ports(query_referenced_entities=True)
    query = _submitted(fakes)
    loop.init(fakes, world, loop.LoopState(world_id="wr", query_id=query.query_id))
    stored = fakes.store.load_context("wr", query.query_id)
    assert stored is not None and stored.referenced_entities


def test_a_summary_carries_the_id_name_and_definition_and_expanding_it_replaces_it_with_the_full_record() -> None:
    context = _context(_summary("e1"))
    [summary] = context.items
    assert (summary.id, summary.name, summary.full) == ("e1", "e1", False) and "(person)" in summary.text
    assert context.merge([_full("e1")]) == 1 and context.merge([_full("e1"), _summary("e1")]) == 0
    assert context.full_entity_ids() == ["e1"] and context.summary_entity_ids() == []


def test_an_entity_marked_expanded_is_not_expandable_again() -> None:
    context = _context(_summary("e1"), _summary("e2"))
    context.mark_expanded("e1")
    assert context.expandable_entity_ids() == ["e2"]


def test_the_stats_estimate_the_contexts_tokens() -> None:
    context = _context(_summary("e1"), _full("e2"))
    stats = context.stats(chars_per_token=4.0)
    assert (stats.full_entities, stats.entity_summaries) == (1, 1)
    assert stats.estimated_tokens == stats.characters // 4


# ---------------------------------------------------------------- 3. Answer and NeedsMoreInfo
@pytest.mark.parametrize(("confidence", "level"), [(0.9, "high"), (0.75, "high"), (0.6, "medium"),
                                                   (0.45, "medium"), (0.3, "low"), (0.0, "low")])
def test_an_answers_confidence_is_high_medium_or_low(confidence: float, level: str) -> None:
    assert typing.get_args(ConfidenceLevel) == CONFIDENCE_LEVELS
    fakes, world = _ports()
    fakes.llm = ScriptedLLM([Answer(content="Lisbon.", confidence=confidence)])
    query = _submitted(fakes)
    loop.ask(fakes, world, loop.init(fakes, world, loop.LoopState(world_id="wr", query_id=query.query_id)))
    answer = _stored(fakes, query.query_id).answer
    assert answer is not None and answer.confidence_level == level


def test_an_answer_has_content_confidence_sources_and_optional_follow_ups() -> None:
    answer = Answer(content="The heroes are Dana and Sam.", confidence=0.8)
    assert (answer.sources, answer.suggested_follow_ups) == ([], [])


def test_needs_more_info_has_a_reason_and_its_requests() -> None:
    reply = NeedsMoreInfo(reason="a named entity's full record is missing", info_requests=[
        InfoRequest(capability="expand_entity", params={"entity_id": "e1"})])
    assert reply.reason and [r.capability for r in reply.info_requests] == ["expand_entity"]
    assert isinstance(reply, NeedsMoreInfo) and not isinstance(reply, Answer)  # isNeedsMoreInfo / isAnswer


# ---------------------------------------------------------------- 4. The capabilities and their constraints
@pytest.mark.parametrize("capability", BUILT_IN_CAPABILITIES)
def test_every_built_in_capability_is_offered(capability: str) -> None:
    assert capability in offers.CAPABILITIES


def test_searching_entities_is_unconstrained() -> None:
    offer = offers.offer(_context())
    assert offers.CAPABILITIES["search_entities"].ids == {}
    assert offer.validate(InfoRequest(capability="search_entities", params={"query": "anything at all"}))


@pytest.mark.parametrize(("capability", "params"), [
    ("expand_entity", {"entity_id": "e1"}),
    ("expand_entities", {"entity_ids": ["e1"]}),
])
@pytest.mark.parametrize(("held", "valid"), [("summary", True), ("full", False), ("absent", False)])
def test_an_entity_to_expand_must_be_an_expandable_one(capability: str, params: dict[str, Any], held: str,
                                                       valid: bool) -> None:
    items = {"summary": (_summary("e1"),), "full": (_full("e1"),), "absent": ()}[held]
    offer = offers.offer(_context(*items))
    request = InfoRequest(capability=capability, params=params)  # type: ignore[arg-type]
    if valid:
        assert offer.validate(request)
    else:
        with pytest.raises(CapabilityRejected, match=f"^{capability}: Invalid entity ID: e1$"):
            offer.validate(request)


@pytest.mark.parametrize(("capability", "params"), [
    ("get_relationships", {"entity_id": "e9"}),
    ("expand_entity", {"entity_id": "e9"}),
])
def test_an_invalid_entity_id_is_refused_with_the_documents_error(capability: str, params: dict[str, Any]) -> None:
    with pytest.raises(CapabilityRejected) as refused:
        offers.offer(_context(_summary("e1"))).validate(InfoRequest(capability=capability, params=params))  # type: ignore[arg-type]
    assert refused.value.message == f"{capability}: Invalid entity ID: e9"
    assert refused.value.details == {"errors": ["Invalid entity ID: e9"]}


def test_every_invalid_id_of_a_request_is_listed() -> None:
    with pytest.raises(CapabilityRejected) as refused:
        offers.offer(_context(_summary("e1"))).validate(
            InfoRequest(capability="expand_entities", params={"entity_ids": ["e7", "e1", "e8"]}))
    assert refused.value.details == {"errors": ["Invalid entity ID: e7", "Invalid entity ID: e8"]}


def test_a_definition_must_be_one_the_context_holds() -> None:
    context = _context(_summary("e1"))
    context.definitions = ["person"]
    offer = offers.offer(context)
    assert offer.validate(InfoRequest(capability="get_entities_by_definition", params={"definition": "person"}))
    with pytest.raises(CapabilityRejected, match="planet"):
        offer.validate(InfoRequest(capability="get_entities_by_definition", params={"definition": "planet"}))


@pytest.mark.parametrize(("memory_capabilities", "offered"), [
    (True, [*BUILT_IN_CAPABILITIES, *offers.MEMORY_CAPABILITIES]),
    (False, BUILT_IN_CAPABILITIES),  # the document's six (seven names: EXPAND_ENTITY / EXPAND_ENTITIES) alone
])
def test_a_world_may_offer_the_six_built_in_capabilities_alone(memory_capabilities: bool, offered: list[str]) -> None:
    context = _context(_summary("e1"))
    context.memory_capabilities = memory_capabilities
    offer = offers.offer(context)
    assert list(offer.capabilities) == offered
    search = InfoRequest(capability="search_memories", params={"query": "Lisbon"})
    if memory_capabilities:
        assert offer.validate(search) and not any("capabilities offered" in line for line in offer.describe())
    else:
        with pytest.raises(CapabilityRejected, match=r"^search_memories: not offered in this world"):
            offer.validate(search)
        assert offer.describe()[0] == f"- capabilities offered (no other): [{', '.join(BUILT_IN_CAPABILITIES)}]"
        assert not any("conversation" in line for line in offer.describe())
    assert offer.validate(InfoRequest(capability="expand_entity", params={"entity_id": "e1"}))


# ---------------------------------------------------------------- the bounded loop and the forced answer
@pytest.mark.parametrize(("overrides", "request_", "said"), [
    # a world withdrawing engram's four capabilities answers a request for one as an invalid request
    ({"query_memory_capabilities": False}, InfoRequest(capability="search_memories", params={"query": "Lisbon"}),
     "not offered in this world"),
    # the document's constraint violation: an entity id the context does not hold
    ({}, InfoRequest(capability="expand_entity", params={"entity_id": "ent_made_up"}), "Invalid entity ID: ent_made_up"),
], ids=["withdrawn_capability", "unknown_entity_id"])
def test_a_constraint_violation_forces_a_low_confidence_answer(overrides: dict[str, Any], request_: InfoRequest,
                                                               said: str) -> None:
    fakes, _world = _ports(**overrides)
    fakes.llm = ScriptedLLM([NeedsMoreInfo(info_requests=[request_])],
                            forced=Answer(content="Probably Lisbon.", confidence=0.9))
    query = _submitted(fakes)
    run_query(typing.cast(Any, fakes), "wr", query.query_id)
    answered = _stored(fakes, query.query_id)
    assert answered.answer is not None and answered.answer.forced and answered.answer.confidence_level == "low"
    assert answered.info_requests_used == 0 and said in answered.answer.content


@pytest.mark.parametrize("max_info_requests", [0, 1, 3])
def test_a_model_that_keeps_asking_gets_max_info_requests_rounds_then_a_forced_low_confidence_answer(
        max_info_requests: int) -> None:
    fakes, _world = _ports()
    fakes.llm = ScriptedLLM([NeedsMoreInfo(info_requests=[
        InfoRequest(capability="search_memories", params={"query": "Lisbon"})])],
        forced=Answer(content="Dana lives in Lisbon.", confidence=0.9))
    query = _submitted(fakes, QueryConfig(max_info_requests=max_info_requests))
    final = run_query(typing.cast(Any, fakes), "wr", query.query_id)
    answered = _stored(fakes, query.query_id)
    assert final["info_requests_used"] == max_info_requests and answered.status == "completed"
    assert answered.answer is not None and answered.answer.forced and answered.answer.confidence_level == "low"
    assert [t.step for t in answered.trace].count("fulfil") == max_info_requests


def test_a_world_may_keep_the_models_confidence_in_an_answer_forced_by_the_limit() -> None:
    fakes, _world = _ports(query_forced_answer_low=False)
    fakes.llm = ScriptedLLM([NeedsMoreInfo(info_requests=[
        InfoRequest(capability="search_memories", params={"query": "Lisbon"})])],
        forced=Answer(content="Dana lives in Lisbon.", confidence=0.9))
    query = _submitted(fakes, QueryConfig(max_info_requests=1))
    run_query(typing.cast(Any, fakes), "wr", query.query_id)
    answer = _stored(fakes, query.query_id).answer
    assert answer is not None and answer.forced and answer.confidence_level == "high"
