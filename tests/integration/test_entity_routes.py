"""The entity routes as a client sees them: search by name and definition, an entity with its aliases,
facts and edges, relationships, paths, and the disambiguations a user settles."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import httpx
import pytest

from engram.enrichment.extract import extract_events
from engram.enrichment.ingest import ingest_events
from engram.enrichment.resolve import resolve_events
from engram.model.events import IngestRequest
from engram.ports.clients import Clients
from tests.asgi import api_client

pytestmark = pytest.mark.integration
WORLD = "w-routes"
T0 = datetime(2026, 4, 1, 9, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def api(clients: Clients) -> Iterator[httpx.Client]:
    with api_client(clients) as client:
        yield client


def _say(clients: Clients, *texts: str, world: str = WORLD, user: str = "dana", start: datetime = T0) -> list[str]:
    ids = [f"{world}-{start:%H%M}-{i}" for i in range(len(texts))]
    ingest_events(clients, clients.world(world), IngestRequest.model_validate({"events": [
        {"event_id": eid, "user_id": user, "conversation_id": "c1", "role": "user", "content": text,
         "occurred_at": (start + timedelta(minutes=i)).isoformat()} for i, (eid, text) in enumerate(zip(ids, texts, strict=True))]}))
    resolve_events(clients, clients.world(world), ids)
    extract_events(clients, clients.world(world), ids)
    return ids


@pytest.fixture(scope="module")
def graph(api: httpx.Client, clients: Clients) -> dict[str, str]:
    """Sam is dana's boss; dana works at Acme Robotics; two Katherines wait to be told apart."""
    _say(clients, "Sam Carter is my boss.", "I work at Acme Robotics.")
    for name in ("Katherine Johnson", "Katherine Johnston"):  # said, the second would resolve to the first
        clients.store.create_entity(WORLD, name, "person")
    names = {e.name: e.entity_id for e in clients.store.list_entities(WORLD, None, 50)}
    return {"sam": names["Sam Carter"], "acme": names["Acme Robotics"], "dana": names["dana"],
            "johnson": names["Katherine Johnson"], "johnston": names["Katherine Johnston"]}


def test_entities_are_listed_by_name_and_by_definition(api: httpx.Client, graph: dict[str, str]) -> None:
    by_name = api.get(f"/v1/worlds/{WORLD}/entities", params={"name": "acme robotcs"})
    assert by_name.status_code == 200, by_name.text
    assert [e["entity_id"] for e in by_name.json()] == [graph["acme"]]
    by_definition = api.get(f"/v1/worlds/{WORLD}/entities", params={"definition": "organization"}).json()
    assert [e["entity_id"] for e in by_definition] == [graph["acme"]]


def test_an_entity_comes_with_its_aliases_facts_and_relationships(api: httpx.Client, graph: dict[str, str]) -> None:
    reply = api.get(f"/v1/worlds/{WORLD}/entities/{graph['sam']}")
    assert reply.status_code == 200, reply.text
    body = reply.json()
    assert body["name"] == "Sam Carter" and body["aliases"] == ["Sam Carter"]
    assert [(a["alias"], a["user_id"], a["source"]) for a in body["alias_details"]] == [("Sam Carter", None, "created")]
    assert [f["predicate"] for f in body["facts"]] == ["boss_of"]
    assert [(r["relation"], r["target_entity_id"]) for r in body["relationships"]] == [("boss_of", graph["dana"])]
    assert body["relationships"][0]["source_memory_ids"] == [body["facts"][0]["memory_id"]]


def test_relationships_reach_the_requested_depth(api: httpx.Client, graph: dict[str, str]) -> None:
    one = api.get(f"/v1/worlds/{WORLD}/entities/{graph['sam']}/relationships", params={"depth": 1}).json()
    two = api.get(f"/v1/worlds/{WORLD}/entities/{graph['sam']}/relationships", params={"depth": 2}).json()
    assert {r["relation"] for r in one} == {"boss_of"} and {r["relation"] for r in two} == {"boss_of", "works_at"}


def test_paths_run_from_one_entity_to_another(api: httpx.Client, graph: dict[str, str]) -> None:
    reply = api.get(f"/v1/worlds/{WORLD}/paths", params={"from": graph["sam"], "to": graph["acme"]})
    assert reply.status_code == 200, reply.text
    [path] = reply.json()
    assert path["names"] == ["Sam Carter", "dana", "Acme Robotics"]
    assert api.get(f"/v1/worlds/{WORLD}/paths", params={"from": graph["sam"], "to": graph["acme"],
                                                        "max_length": 1}).json() == []
    assert api.get(f"/v1/worlds/{WORLD}/paths", params={"to": graph["acme"]}).status_code == 422


def test_a_disambiguation_is_listed_then_settled_and_the_alias_is_learned(api: httpx.Client, clients: Clients,
                                                                         graph: dict[str, str]) -> None:
    [event_id] = _say(clients, "Katherine Johns sent the slides.", start=T0 + timedelta(hours=1))
    [waiting] = api.get(f"/v1/worlds/{WORLD}/disambiguations", params={"user_id": "dana"}).json()
    assert (waiting["event_id"], waiting["text"], waiting["method"]) == (event_id, "Katherine Johns",
                                                                         "disambiguation_required")
    assert {c["entity_id"] for c in waiting["candidates"]} == {graph["johnson"], graph["johnston"]}

    settled = api.post(f"/v1/worlds/{WORLD}/disambiguations/{waiting['mention_id']}/resolution",
                       json={"entity_id": graph["johnston"]})

    assert settled.status_code == 200, settled.text
    body = settled.json()
    assert (body["mention"]["method"], body["mention"]["entity_id"]) == ("user", graph["johnston"])
    assert (body["alias"]["alias"], body["alias"]["user_id"]) == ("Katherine Johns", "dana")
    assert api.get(f"/v1/worlds/{WORLD}/disambiguations").json() == []
    again = api.post(f"/v1/worlds/{WORLD}/disambiguations/{waiting['mention_id']}/resolution",
                     json={"entity_id": graph["johnston"]})
    assert again.status_code == 409 and again.json()["error"]["code"] == "conflict"


def test_settling_refuses_a_bad_answer_an_unknown_mention_and_another_worlds_entity(
        api: httpx.Client, clients: Clients, graph: dict[str, str]) -> None:
    base = f"/v1/worlds/{WORLD}/disambiguations"
    unknown = "men_" + "0" * 32
    assert api.post(f"{base}/{unknown}/resolution", json={"entity_id": graph["sam"]}).status_code == 404
    assert api.post(f"{base}/{unknown}/resolution", json={}).status_code == 422
    assert api.post(f"{base}/{unknown}/resolution", json={"entity_id": graph["sam"], "new_entity": True}
                    ).status_code == 422
    for malformed in ("abc", "1", "men_" + "0" * 300):  # not a mention id: a serial number is none any more
        assert api.post(f"{base}/{malformed}/resolution", json={"entity_id": graph["sam"]}).status_code == 422


def test_another_worlds_entities_are_not_found(api: httpx.Client, graph: dict[str, str]) -> None:
    assert api.get(f"/v1/worlds/w-elsewhere/entities/{graph['sam']}").status_code == 404
    assert api.get(f"/v1/worlds/w-elsewhere/entities/{graph['sam']}/relationships").status_code == 404
    assert api.get("/v1/worlds/w-elsewhere/paths", params={"from": graph["sam"], "to": graph["acme"]}
                   ).status_code == 404
    assert api.get("/v1/worlds/w-elsewhere/entities", params={"name": "Sam"}).json() == []


def test_the_routes_are_in_the_openapi_document(api: httpx.Client) -> None:
    paths = api.get("/v1/openapi.json").json()["paths"]
    assert {"/v1/worlds/{world}/paths", "/v1/worlds/{world}/disambiguations",
            "/v1/worlds/{world}/disambiguations/{mention_id}/resolution"} <= set(paths)
