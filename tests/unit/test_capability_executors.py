"""Each capability the answering model may ask for, run through the registry's dispatch on in-memory fakes
of the ports the executors declare: what each brings into the context, and only what the asking user reads."""

from __future__ import annotations

from typing import Any

import pytest

from engram.model.context import QueryContext
from engram.model.queries import InfoRequest
from engram.model.world import World
from engram.query import offer as offers
from engram.query.capabilities import CapabilityPorts
from tests.fakes.conversations import remember, said
from tests.fakes.ports import FakePorts

WORLD = World("wc")


@pytest.fixture(scope="module")
def fakes() -> FakePorts:
    """Dana's memory (where she lives and works, her boss) and Sam's, in one world."""
    ports = FakePorts()
    remember(ports, WORLD, said("Hi! My name is Dana and I live in Lisbon.", "I work at Acme Robotics as a firmware "
                                "engineer.", "Sarah is my boss. She prefers short status reports."))
    remember(ports, WORLD, said("I live in Porto.", user="sam", conversation="c2", prefix="s"))
    return ports


@pytest.fixture
def context(fakes: FakePorts) -> QueryContext:
    """A context holding Dana and Acme (as summaries), her conversation, and the person definition."""
    dana, acme = fakes.store.find_entity_by_name("wc", "dana"), fakes.store.find_entity_by_name("wc", "Acme Robotics")
    assert dana is not None and acme is not None
    held = QueryContext(query_id="q", world_id="wc", question="Where does Dana work?", conversation_ids=["c1"],
                        definitions=["person"])
    held.merge([offers.c.entity_summary(dana), offers.c.entity_summary(acme)])
    return held


def _run(fakes: FakePorts, context: QueryContext, capability: str, **params: Any) -> list[str]:
    typed = offers.offer(context).validate(InfoRequest(capability=capability, params=params))  # type: ignore[arg-type]
    ports: CapabilityPorts = fakes
    items = offers.execute(ports, WORLD, context, "dana", typed)
    context.merge(items)
    return [i.text for i in items]


def _id(fakes: FakePorts, name: str) -> str:
    entity = fakes.store.find_entity_by_name("wc", name)
    assert entity is not None
    return entity.entity_id


def test_expanding_an_entity_brings_its_full_record_with_the_users_facts_and_edges(
        fakes: FakePorts, context: QueryContext) -> None:
    both = context.model_copy(deep=True)
    (record,) = _run(fakes, context, "expand_entity", entity_id=_id(fakes, "dana"))
    assert record.startswith("dana (person)") and "lives in Lisbon" in record and "Acme Robotics" in record
    assert "Porto" not in record  # Sam's words are Sam's
    records = _run(fakes, both, "expand_entities", entity_ids=[_id(fakes, "dana"), _id(fakes, "Acme Robotics")])
    assert len(records) == 2


def test_entities_are_found_by_a_near_spelling_of_their_name_and_by_their_definition(
        fakes: FakePorts, context: QueryContext) -> None:
    [acme] = _run(fakes, context, "get_entity_by_name", name="Acme Robotic")
    assert acme.startswith("Acme Robotics") and "[summary" in acme
    people = _run(fakes, context, "get_entities_by_definition", definition="person")
    assert any(t.startswith("dana (person)") for t in people) and any(t.startswith("Sarah (person)") for t in people)


def test_listing_the_definitions_adds_them_to_what_the_context_holds(fakes: FakePorts, context: QueryContext) -> None:
    [listed] = _run(fakes, context, "list_entity_definitions")
    assert listed.startswith("Entity definitions: person (") and "organization" in context.definitions


def test_the_search_capabilities_run_the_fused_search_as_the_asking_user(
        fakes: FakePorts, context: QueryContext) -> None:
    assert any("Lisbon" in t for t in _run(fakes, context, "search_memories", query="Lisbon"))
    porto = _run(fakes, context, "search_memories", query="Porto")
    assert not any("I live in Porto" in t or "lives in Porto" in t for t in porto)  # Sam's words and facts are Sam's
    assert any(t.startswith(("dana", "Acme")) for t in _run(fakes, context, "search_entities", query="firmware engineer"))


def test_relationships_timeline_and_path_read_the_users_graph(fakes: FakePorts, context: QueryContext) -> None:
    dana, acme = _id(fakes, "dana"), _id(fakes, "Acme Robotics")
    assert "dana works at Acme Robotics" in _run(fakes, context, "get_relationships", entity_id=dana, depth=1)
    timeline = _run(fakes, context, "get_entity_timeline", entity_id=dana)
    assert any("lives in Lisbon" in t for t in timeline)
    assert "dana works at Acme Robotics" in _run(fakes, context, "find_path", from_entity_id=dana, to_entity_id=acme)


def test_the_conversation_history_is_the_asking_users_own_turns(fakes: FakePorts, context: QueryContext) -> None:
    turns = _run(fakes, context, "get_conversation_history", conversation_id="c1")
    assert turns[0] == "user: Hi! My name is Dana and I live in Lisbon." and len(turns) == 3
