"""A question's names in one round trip (`match_names`, the search's entity path) on PostgreSQL: the same matches as
one name at a time, each entity's external reference and walk as the store's own walk reads them, the question's
weights as `entity_weights` gives them; never another world's entity or another user's private alias, never over
edges the user does not see; and the reads leave no world on the pooled connection."""

from __future__ import annotations

import pytest

from engram.model.entities import EntityAlias
from engram.model.heuristics import DEFAULT_HEURISTICS
from engram.ports.clients import Clients
from engram.retrieval.entities import question_entities
from engram.retrieval.graph import entity_weights
from tests.integration.test_expansion_brain import _world

pytestmark = pytest.mark.integration

H = DEFAULT_HEURISTICS
MATCH = {"fuzzy_min": H.resolve.fuzzy_min, "alias_accept": H.resolve.alias_accept,
         "limit": H.resolve.disambiguation_candidates}


@pytest.fixture(scope="module")
def ids(clients: Clients) -> dict[str, str]:
    found = _world(clients, "wqe")
    _world(clients, "wqe-other", "o")  # the same names in another world: never matched from "wqe"
    # Rui's nickname is Ana's own: another user's question never finds him by it.
    clients.store.add_alias(EntityAlias(world_id="wqe", entity_id=found["Rui"], alias="Bossman", user_id="ana",
                                        confidence=1.0, source="user"))
    return found


@pytest.mark.parametrize("user", [None, "ana", "sam"])
def test_names_in_one_read_match_as_one_at_a_time_with_the_walk_of_each(clients: Clients, ids: dict[str, str],
                                                                        user: str | None) -> None:
    names = ["Ana", "Eva", "Bossman", "Evaa", "Nobody"]
    together = clients.store.match_names("wqe", names, user, **MATCH, walk_depth=2, walk_limit=50)
    assert len(together) == len(names)
    for name, matches in zip(names, together, strict=True):
        alone = clients.store.match_name("wqe", name, user, **MATCH)
        assert [m.model_copy(update={"external_ref": None, "near": None}) for m in matches] == alone
        for m in matches:
            entity = clients.store.get_entity("wqe", m.entity_id)
            assert entity is not None  # this world's: never the other world's namesake
            assert m.external_ref == entity.external_ref
            if m.near is not None:
                assert list(m.near) == clients.store.connected_entities("wqe", [m.entity_id], 2, 50, user_id=user)
    by_name = dict(zip(names, together, strict=True))
    assert {m.entity_id for m in by_name["Bossman"]} == ({ids["Rui"]} if user == "ana" else set())
    assert by_name["Nobody"] == []
    # A walk was read with the name, over the edges the user sees: none of them is Sam's to walk.
    assert any(m.near for m in by_name["Eva"]) == (user != "sam")


@pytest.mark.parametrize("user", [None, "ana", "sam"])
def test_the_questions_weights_are_the_walk_from_its_entities(clients: Clients, ids: dict[str, str],
                                                              user: str | None) -> None:
    entities, weights = question_entities(clients, "wqe", "Did Ana ever meet Eva in Porto?", user, H)
    assert {ids["Ana"], ids["Eva"], ids["Porto"]} <= {e.entity_id for e in entities}
    assert {e.user_id for e in entities if e.name == "Ana"} == {None, "ana"}  # hers, made when she spoke, and the one named
    assert weights == entity_weights(clients, "wqe", [e.entity_id for e in entities], H, user_id=user)
    assert (ids["Rui"] in weights) == (user != "sam")  # one hop from Eva, on edges Ana's facts and turns stand for


def test_nothing_is_walked_without_depth_and_no_name_reads_nothing(clients: Clients, ids: dict[str, str]) -> None:
    [matches] = clients.store.match_names("wqe", ["Ana"], None, **MATCH)
    assert matches and all(m.near is None for m in matches)
    assert clients.store.match_names("wqe", [], None, **MATCH) == []
    flat = H.with_overrides({"graph_depth": 0})
    entities, weights = question_entities(clients, "wqe", "What did Eva say?", None, flat)
    assert weights == {ids["Eva"]: 1.0} and [e.entity_id for e in entities] == [ids["Eva"]]


def test_a_read_in_one_round_trip_leaves_no_world_on_the_connection(clients: Clients, ids: dict[str, str]) -> None:
    store = clients.store
    assert store.read_once("wqe", [("SELECT current_setting('engram.world_id', true) AS w", {})]) == [[{"w": "wqe"}]]
    for _ in range(store.pool.get_stats().get("pool_size", 1)):
        with store.pool.connection() as conn:
            assert not conn.autocommit
            assert conn.execute("SELECT current_setting('engram.world_id', true)").fetchone() in ((None,), ("",))
