"""Correcting and deleting a fact through the HTTP API and the clients (issue 22): a correction changes the value,
confidence and valid time as the user's word, and search and answers read the new value; a deletion takes the fact
out of memory, the keyword index and the graph, and an audit row keeps both; another world's id is unknown (404)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anyio
import httpx
import pytest

from engram.app.compose import get_clients
from engram.ports.clients import Clients
from engram.sdk.client import AsyncEngramClient, EngramClient, NotFound
from tests.asgi import _Bridge, api_client
from tests.builder import enrich

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def api(clients: Clients) -> Iterator[httpx.Client]:
    with api_client(clients) as client:
        yield client


def _fact(api: httpx.Client, world: str, user: str, predicate: str) -> dict[str, Any]:
    """The user's one fact of the predicate, after their turn is stored and enriched."""
    facts = api.get(f"/v1/worlds/{world}/users/{user}/memories", params={"layer": "semantic"}).json()
    [fact] = [f for f in facts if f["predicate"] == predicate]
    return fact


def _say(api: httpx.Client, world: str, event_id: str, content: str, user: str = "ana") -> None:
    event = {"event_id": event_id, "user_id": user, "conversation_id": f"{user}-c", "role": "user", "content": content}
    assert api.post(f"/v1/worlds/{world}/events", json={"events": [event]}).status_code == 202
    enrich(get_clients(), world, [event_id])


def _audit(clients: Clients, world: str, memory_id: str) -> list[dict[str, Any]]:
    with clients.store.tx(world) as cur:  # type: ignore[attr-defined]
        cur.execute("SELECT action, before, after, note, user_id FROM memory_audit WHERE world_id = %s "
                    "AND memory_id = %s ORDER BY at", (world, memory_id))
        return list(cur.fetchall())


def _edges(clients: Clients, world: str, memory_id: str) -> int:
    with clients.store.tx(world) as cur:  # type: ignore[attr-defined]
        cur.execute("SELECT count(*) AS n FROM entity_relationships WHERE world_id = %s "
                    "AND %s = ANY(source_memory_ids)", (world, memory_id))
        return int(cur.fetchone()["n"])


def test_a_correction_changes_the_fact_and_search_and_answers_read_the_new_value(
        clients: Clients, api: httpx.Client) -> None:
    _say(api, "me-fix", "f1", "My name is Ana and I live in Madrid.")
    fact = _fact(api, "me-fix", "ana", "lives_in")
    url = f"/v1/worlds/me-fix/memories/{fact['memory_id']}"
    assert fact["object_entity_id"] and _edges(clients, "me-fix", fact["memory_id"]) == 1

    fixed = api.patch(url, json={"object_value": "Porto", "confidence": 0.99, "valid_from": "2026-01-01T00:00:00Z",
                                 "note": "I moved"})
    assert fixed.status_code == 200, fixed.text
    body = fixed.json()
    assert (body["object_value"], body["object_entity_id"], body["memory_id"]) == ("Porto", None, fact["memory_id"])
    cap = clients.world("me-fix").heuristics.extract.max_confidence
    assert body["confidence"] == pytest.approx(min(cap, 0.99)) and body["factors"]["source"] == "user"
    assert body["valid_from"].startswith("2026-01-01") and body["effective_confidence"] > 0
    assert _fact(api, "me-fix", "ana", "lives_in")["object_value"] == "Porto"

    hits = api.get("/v1/worlds/me-fix/search", params={"q": "Porto", "limit": 20}).json()["hits"]
    assert any(h["kind"] == "semantic" and h["doc_id"] == fact["memory_id"] and "Porto" in h["text"] for h in hits)
    semantic = [h for h in clients.index.search("me-fix", "Madrid", kinds=["semantic"], limit=20)]
    assert fact["memory_id"] not in {h.doc_id for h in semantic}  # the keyword document was rewritten
    answer = api.post("/v1/worlds/me-fix/queries", json={"user_id": "ana", "question": "Where does Ana live?"})
    assert answer.status_code == 200 and "Porto" in answer.json()["answer"]["content"], answer.text
    assert _edges(clients, "me-fix", fact["memory_id"]) == 0  # the edge to Madrid stood for the old value

    [audit] = _audit(clients, "me-fix", fact["memory_id"])
    assert (audit["action"], audit["note"], audit["user_id"]) == ("correct", "I moved", "ana")
    assert audit["before"]["object_value"] == "Madrid" and audit["after"]["object_value"] == "Porto"

    later = api.patch(url, json={"valid_to": "2025-01-01T00:00:00Z"})
    assert later.status_code == 422 and "valid_to" in later.text  # before the stored valid_from
    cleared = api.patch(url, json={"valid_from": None, "confidence": 0.5})
    assert cleared.status_code == 200 and cleared.json()["valid_from"] is None
    assert cleared.json()["confidence"] == pytest.approx(0.5)


@pytest.mark.parametrize("body", [{}, {"note": "only a note"}, {"confidence": 1.5}, {"confidence": -0.1},
                                  {"object_value": ""}, {"object_value": None}, {"confidence": None},
                                  {"valid_from": "2026-02-01T00:00:00Z", "valid_to": "2026-01-01T00:00:00Z"},
                                  {"valid_from": "not a date"}, {"object_value": "x", "status": "active"},
                                  {"object_value": "x" * 1001}])
def test_bad_bodies_answer_422(api: httpx.Client, body: dict[str, Any]) -> None:
    _say(api, "me-bad", "b1", "My name is Ana and I live in Madrid.")
    fact = _fact(api, "me-bad", "ana", "lives_in")
    reply = api.patch(f"/v1/worlds/me-bad/memories/{fact['memory_id']}", json=body)
    assert reply.status_code == 422, (body, reply.text)
    after = _fact(api, "me-bad", "ana", "lives_in")
    assert (after["object_value"], after["confidence"], after["valid_from"], after["valid_to"]) == \
        (fact["object_value"], fact["confidence"], fact["valid_from"], fact["valid_to"])


def test_a_deletion_removes_the_fact_everywhere_and_keeps_an_audit_row(clients: Clients, api: httpx.Client) -> None:
    _say(api, "me-del", "d1", "My name is Ana and I work at Acme.")
    fact = _fact(api, "me-del", "ana", "works_at")
    mid = fact["memory_id"]
    assert _edges(clients, "me-del", mid) == 1
    assert mid in {h.doc_id for h in clients.index.search("me-del", "Acme", kinds=["semantic"], limit=20)}

    gone = api.delete(f"/v1/worlds/me-del/memories/{mid}", params={"note": "not true"})
    assert gone.status_code == 200, gone.text
    assert gone.json()["memory_id"] == mid and gone.json()["audit_id"].startswith("aud_")
    facts = api.get("/v1/worlds/me-del/users/ana/memories", params={"layer": "semantic"}).json()
    assert mid not in {f["memory_id"] for f in facts}
    assert mid not in {h.doc_id for h in clients.index.search("me-del", "Acme", limit=50)}
    hits = api.get("/v1/worlds/me-del/search", params={"q": "Acme works", "limit": 50}).json()["hits"]
    assert mid not in {h["doc_id"] for h in hits}
    assert _edges(clients, "me-del", mid) == 0
    with clients.store.tx("me-del") as cur:  # type: ignore[attr-defined]
        cur.execute("SELECT count(*) AS n FROM index_outbox WHERE world_id = %s AND doc_id = %s AND done_at IS NULL",
                    ("me-del", mid))
        assert cur.fetchone()["n"] == 0

    [audit] = _audit(clients, "me-del", mid)
    assert (audit["action"], audit["note"], audit["after"]) == ("delete", "not true", None)
    assert audit["before"]["object_value"] == "Acme" and audit["before"]["memory_id"] == mid
    trail = api.get(f"/v1/worlds/me-del/memories/{mid}/audit").json()
    assert [a["action"] for a in trail] == ["delete"]

    assert api.delete(f"/v1/worlds/me-del/memories/{mid}").status_code == 404  # deleted once
    assert api.patch(f"/v1/worlds/me-del/memories/{mid}", json={"confidence": 0.2}).status_code == 404


def test_an_unknown_id_and_another_worlds_id_answer_404_and_change_nothing(clients: Clients, api: httpx.Client) -> None:
    _say(api, "me-a", "a1", "My name is Ana and I live in Madrid.")
    theirs = _fact(api, "me-a", "ana", "lives_in")
    _say(api, "me-b", "b1", "My name is Bo and I live in Oslo.", user="bo")
    for method, body in (("PATCH", {"object_value": "Rome"}), ("DELETE", None)):
        for world, mid in (("me-b", theirs["memory_id"]), ("me-a", "sem_nope"), ("me-zz", theirs["memory_id"])):
            reply = api.request(method, f"/v1/worlds/{world}/memories/{mid}", json=body)
            assert reply.status_code == 404, (method, world, reply.text)
            assert reply.json()["error"]["code"] == "not_found"
    assert api.get(f"/v1/worlds/me-b/memories/{theirs['memory_id']}/audit").status_code == 404
    assert _fact(api, "me-a", "ana", "lives_in")["object_value"] == "Madrid"
    assert _audit(clients, "me-a", theirs["memory_id"]) == []


def test_the_clients_correct_and_delete_a_fact(clients: Clients, api: httpx.Client) -> None:
    from engram.local.server import build_app

    _say(api, "me-sdk", "s1", "My name is Ana and I live in Madrid.")
    _say(api, "me-sdk", "s2", "I work at Acme.")
    lives, works = _fact(api, "me-sdk", "ana", "lives_in"), _fact(api, "me-sdk", "ana", "works_at")
    app = build_app()
    with EngramClient("http://engram.local", transport=_Bridge(httpx.ASGITransport(app=app))  # type: ignore[arg-type]
                      ) as client:
        fixed = client.correct_memory("me-sdk", lives["memory_id"], object_value="Lisbon", confidence=0.7)
        assert (fixed.object_value, fixed.confidence) == ("Lisbon", pytest.approx(0.7))
        assert [a.action for a in client.memory_audit("me-sdk", lives["memory_id"])] == ["correct"]
        with pytest.raises(NotFound):
            client.delete_memory("me-sdk", "sem_nope")

    async def run() -> tuple[Any, Any]:
        async with AsyncEngramClient("http://engram.local", transport=httpx.ASGITransport(app=app)  # type: ignore[arg-type]
                                     ) as client:
            fixed = await client.correct_memory("me-sdk", works["memory_id"], object_value="Initech", note="typo")
            return fixed, await client.delete_memory("me-sdk", lives["memory_id"], note="moved away")

    fixed, deleted = anyio.run(run)
    assert fixed.object_value == "Initech" and deleted.memory_id == lives["memory_id"]
    remaining = {f["memory_id"] for f in api.get("/v1/worlds/me-sdk/users/ana/memories").json()}
    assert lives["memory_id"] not in remaining and works["memory_id"] in remaining


def test_a_confidence_correction_keeps_the_edge_and_erasing_the_user_erases_their_audit_rows(
        clients: Clients, api: httpx.Client) -> None:
    _say(api, "me-erase", "e1", "My name is Ana and I live in Madrid.")
    fact = _fact(api, "me-erase", "ana", "lives_in")
    fixed = api.patch(f"/v1/worlds/me-erase/memories/{fact['memory_id']}", json={"confidence": 0.3})
    assert fixed.status_code == 200 and fixed.json()["object_entity_id"] == fact["object_entity_id"]
    assert _edges(clients, "me-erase", fact["memory_id"]) == 1
    assert len(_audit(clients, "me-erase", fact["memory_id"])) == 1

    erased = api.delete("/v1/worlds/me-erase/users/ana")
    assert erased.status_code == 200 and erased.json()["deleted"]["memory_audit"] == 1
    assert _audit(clients, "me-erase", fact["memory_id"]) == []
