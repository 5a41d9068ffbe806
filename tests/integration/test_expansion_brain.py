"""The expansion brain on the real parts (PostgreSQL with pgvector, tantivy, the hash embedder): a two-hop question
("Where does the sister of Ana's boss live?") finds the turns that state the links, none of which names anyone
or reads like the question; never another world's turns, never through another user's facts."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from engram.model.common import new_id
from engram.model.entities import Relationship
from engram.model.memories import SemanticMemory
from engram.model.world import World
from engram.ports.clients import Clients
from engram.retrieval.graph import entity_weights
from engram.retrieval.search import search
from tests.builder import remember

pytestmark = pytest.mark.integration

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
NOW = T0 + timedelta(days=1)
TURNS = [  # (event id, conversation, content): Ana's, a session each; the links name no one
    ("t1", "c1", "My boss has been really kind to me lately."),
    ("t2", "c2", "His sister came over for dinner on Friday."),
    ("t3", "c3", "She moved to the coast last spring, right by the harbour."),
    ("t4", "c4", "I bought new running shoes for the marathon."),
    ("t5", "c5", "The weather was rainy all week long."),
]
QUESTION = "Where does the sister of Ana's boss live?"


def _world(clients: Clients, world: str, prefix: str = "") -> dict[str, str]:
    """Ana's turns, and the graph read from them: Ana -has_boss-> Rui -has_sister-> Eva -lives_in-> Porto, the
    last a fact of Ana's too; each edge evidenced by the turn that states it."""
    remember(clients, world, [{"event_id": prefix + i, "user_id": "ana", "conversation_id": conv, "role": "user",
                               "content": text, "occurred_at": (T0 + timedelta(minutes=n)).isoformat()}
                              for n, (i, conv, text) in enumerate(TURNS)], received_at=T0, now=T0)
    store = clients.store
    ids = {n: store.create_entity(world, n, "person" if n != "Porto" else "place").entity_id
           for n in ("Ana", "Rui", "Eva", "Porto")}
    fact = SemanticMemory(world_id=world, memory_id=new_id("mem"), user_id="ana", subject_entity_id=ids["Eva"],
                          predicate="lives_in", object_value="Porto", object_entity_id=ids["Porto"], confidence=0.9,
                          source_event_ids=[prefix + "t3"], created_at=T0, last_validated_at=T0)
    store.record_facts(world, [(fact, clients.embedder.embed(["Eva lives in Porto"])[0])], [], [])
    for a, rel, b, event, facts in [("Ana", "has_boss", "Rui", "t1", []), ("Rui", "has_sister", "Eva", "t2", []),
                                    ("Eva", "lives_in", "Porto", "t3", [fact.memory_id])]:
        store.upsert_relationship(Relationship(
            world_id=world, relationship_id=new_id("rel"), source_entity_id=ids[a], relation=rel,
            target_entity_id=ids[b], confidence=0.9, evidence_event_ids=[prefix + event], created_at=T0,
            source_memory_ids=facts))
    return ids


def _expanding(clients: Clients, world_id: str) -> World:
    """The world with the expansion brain on (it is off by default)."""
    world = clients.world(world_id)
    return replace(world, heuristics=world.heuristics.with_overrides({"search_expansion_limit": 60}))


@pytest.fixture(scope="module")
def graph_world(clients: Clients) -> dict[str, str]:
    ids = _world(clients, "wexp")
    _world(clients, "wexp-other", "o")  # the same turns and graph in another world: nothing of it may come back
    return ids


def test_the_turns_stating_each_link_of_a_two_hop_question_are_reached(clients: Clients,
                                                                       graph_world: dict[str, str]) -> None:
    world = clients.world("wexp")
    reached = entity_weights(clients, "wexp", [graph_world["Ana"]], world.heuristics)
    assert reached[graph_world["Rui"]] == 0.5 and reached[graph_world["Eva"]] == 0.25
    vector = clients.embedder.embed([QUESTION])[0]
    turns = clients.store.linked_turns("wexp", reached, vector, user_id=None, limit=20)
    via = {t.event_id: t.via for t in turns}
    assert {"t1", "t2", "t3"} <= via.keys() and not via.keys() & {"t4", "t5"}
    assert via["t1"] == via["t2"] == "relationship" and via["t3"] in ("fact", "relationship")
    assert all(t.user_id == "ana" and t.text for t in turns) and not any(t.event_id.startswith("o") for t in turns)
    # The strongest link counts: the boss's turn is one hop from Ana (weight 1), the sister's home two (0.5).
    weight = {t.event_id: t.weight for t in turns}
    assert weight["t1"] == 1.0 and weight["t3"] <= 0.5


def test_the_fused_search_ranks_the_linking_turns_through_the_expansion_brain(clients: Clients,
                                                                              graph_world: dict[str, str]) -> None:
    result = search(clients, _expanding(clients, "wexp"), QUESTION, user_id=None, now=NOW)
    assert result.brains["expansion"].candidates >= 3
    ranked = [h.doc_id for h in result.hits]
    assert not any(h.doc_id.startswith("o") or set(h.event_ids) & {"ot1", "ot2", "ot3"} for h in result.hits)
    assert {"t1", "t2", "t3"} <= set(ranked[:5])
    assert all("expansion" in h.ranks for h in result.hits if h.doc_id in ("t1", "t2", "t3"))
    # Ana's other words are hers (linked as said) but link nothing: they rank below every linking turn.
    assert all(ranked.index(t) < ranked.index(o) for t in ("t1", "t2", "t3") for o in ("t4", "t5") if o in ranked)


def test_another_user_reaches_nothing_through_anas_facts_and_turns(clients: Clients,
                                                                  graph_world: dict[str, str]) -> None:
    world = _expanding(clients, "wexp")
    vector = clients.embedder.embed([QUESTION])[0]
    reached = entity_weights(clients, "wexp", [graph_world["Ana"]], world.heuristics)
    assert clients.store.linked_turns("wexp", reached, vector, user_id="sam", limit=20) == []
    mine = clients.store.linked_turns("wexp", reached, vector, user_id="ana", limit=20)
    assert {"t1", "t2", "t3"} <= {t.event_id for t in mine}
    other = search(clients, world, QUESTION, user_id="sam", now=NOW)
    assert other.brains["expansion"].candidates == 0 and all(h.user_id in (None, "sam") for h in other.hits)


def test_a_turn_stating_a_superseded_fact_is_not_linked(clients: Clients) -> None:
    """"Where does Eva live now?" must not come back with the turn of the home she left: a turn that states a
    fact since superseded is left to the other brains; the turn of the current fact is linked."""
    ids = _world(clients, "wexp-moved")
    old = SemanticMemory(world_id="wexp-moved", memory_id=new_id("mem"), user_id="ana", subject_entity_id=ids["Eva"],
                         predicate="lives_in", object_value="Leeds", confidence=0.9, source_event_ids=["t4"],
                         created_at=T0, last_validated_at=T0, status="superseded", valid_to=T0 + timedelta(hours=1))
    now = SemanticMemory(world_id="wexp-moved", memory_id=new_id("mem"), user_id="ana", subject_entity_id=ids["Eva"],
                         predicate="works_at", object_value="Olivo Labs", confidence=0.9, source_event_ids=["t5"],
                         created_at=T0, last_validated_at=T0)
    clients.store.record_facts("wexp-moved", [(f, clients.embedder.embed([f"Eva {f.predicate} {f.object_value}"])[0])
                                              for f in (old, now)], [], [])
    reached = {ids["Eva"]: 1.0}
    vector = clients.embedder.embed(["Where does Eva live now?"])[0]
    via = {t.event_id: t.via for t in clients.store.linked_turns("wexp-moved", reached, vector, user_id=None,
                                                                 limit=20)}
    assert via.get("t5") == "fact" and "t3" in via
    assert "t4" not in via
