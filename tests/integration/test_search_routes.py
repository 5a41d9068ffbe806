"""The search routes as a client sees them: fused search over a user's memories or the whole world, and
find-similar; bad parameters answer 422 and nothing of another world comes back."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from engram.ports.clients import Clients
from tests.asgi import api_client
from tests.builder import enrich

pytestmark = pytest.mark.integration

TURNS = [("s1", "ana", "I went to the pottery class on Monday."), ("s2", "bo", "Pottery sounds relaxing!"),
         ("s3", "ana", "My sister Lia lives in Porto."), ("s4", "bo", "I am training for a marathon.")]


@pytest.fixture(scope="module")
def api(clients: Clients) -> Iterator[httpx.Client]:
    with api_client(clients) as client:
        for world in ("ws", "ws-other"):
            events = [{"event_id": i, "user_id": who, "conversation_id": "c1", "role": "user", "content": text}
                      for i, who, text in TURNS]
            assert client.post(f"/v1/worlds/{world}/events", json={"events": events}).status_code == 202
            enrich(clients, world, [i for i, _w, _t in TURNS])
        yield client


def test_search_without_a_user_covers_the_whole_world(api: httpx.Client) -> None:
    body = api.get("/v1/worlds/ws/search", params={"q": "pottery class", "limit": 20}).json()
    ids = {h["doc_id"] for h in body["hits"]}
    assert {"s1", "s2"} <= ids
    assert body["query_class"] and body["weights"] and body["brains"]["keyword"]["candidates"] >= 2
    assert body["hits"][0]["explanation"] and body["hits"][0]["ranks"]


def test_search_for_a_user_keeps_to_their_own_and_the_worlds_shared_memories(api: httpx.Client) -> None:
    body = api.get("/v1/worlds/ws/search", params={"q": "pottery class", "user_id": "bo", "limit": 20}).json()
    assert "s1" not in {h["doc_id"] for h in body["hits"]}
    assert all(h["user_id"] in (None, "bo") for h in body["hits"])


def test_find_similar_returns_neighbours_by_meaning_with_their_reason(api: httpx.Client) -> None:
    hits = api.get("/v1/worlds/ws/similar", params={"kind": "event", "id": "s1", "limit": 3}).json()
    assert hits and "s1" not in {h["doc_id"] for h in hits}
    assert all(h["explanation"].startswith("cosine") for h in hits)


@pytest.mark.parametrize("params", [{"q": ""}, {"q": "x", "limit": 0}, {"q": "x", "limit": 51},
                                    {"q": "x", "user_id": "no/slash"}])
def test_bad_search_parameters_answer_422(api: httpx.Client, params: dict) -> None:
    assert api.get("/v1/worlds/ws/search", params=params).status_code == 422


def test_find_similar_refuses_an_unknown_kind(api: httpx.Client) -> None:
    assert api.get("/v1/worlds/ws/similar", params={"kind": "nonsense", "id": "s1"}).status_code == 422
