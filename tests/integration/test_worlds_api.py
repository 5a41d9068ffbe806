"""Worlds through the HTTP API: an event_id sent again with other content is refused (409) and nothing of its
batch is stored, a question to a world with no event answers 404 `unknown_world`, and `GET /v1/worlds` lists the
worlds the caller may read, with the clients' `worlds()`."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import anyio
import httpx
import pytest

from engram.config import get_settings
from engram.enrichment.ingest import ingest_events
from engram.errors import EventIdConflict
from engram.model.events import IngestRequest
from engram.ports.clients import Clients
from engram.sdk.client import AsyncEngramClient, EngramClient
from tests.asgi import _Bridge, api_client

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def api(clients: Clients) -> Iterator[httpx.Client]:
    with api_client(clients) as client:
        yield client


def _event(event_id: str, content: str, **fields: str) -> dict[str, str]:
    return {"event_id": event_id, "user_id": "ana", "conversation_id": "c1", "role": "user", "content": content,
            **fields}


def _post(api: httpx.Client, world: str, *events: dict[str, str], **kwargs: object) -> httpx.Response:
    return api.post(f"/v1/worlds/{world}/events", json={"events": list(events)}, **kwargs)  # type: ignore[arg-type]


def test_an_event_id_sent_again_with_other_content_answers_409_naming_it_and_stores_nothing_of_the_batch(
        api: httpx.Client) -> None:
    assert _post(api, "w-conflict", _event("k1", "I live in Madrid."), _event("k2", "I have a cat.")).status_code \
        == 202
    refused = _post(api, "w-conflict", _event("k1", "I live in Porto."), _event("k2", "I have a cat."),
                    _event("k3", "I work at Acme."))
    assert refused.status_code == 409, refused.text
    error = refused.json()["error"]
    assert (error["code"], error["details"]) == ("event_id_conflict", {"event_ids": ["k1"]}) and "k1" in error["message"]
    assert api.get("/v1/worlds/w-conflict/events/k3").status_code == 404
    assert api.get("/v1/worlds/w-conflict/events/k1").json()["content"] == "I live in Madrid."
    for other in (_event("k2", "I have a cat.", user_id="bo"), _event("k2", "I have a cat.", conversation_id="c9"),
                  _event("k2", "I have a cat.", role="assistant")):
        assert _post(api, "w-conflict", other).status_code == 409


def test_the_same_event_sent_again_identically_stays_an_acknowledged_duplicate(api: httpx.Client) -> None:
    assert _post(api, "w-replay", _event("r1", "I live in Madrid.")).status_code == 202
    again = _post(api, "w-replay", _event("r1", "I live in Madrid.", occurred_at="2026-01-01T00:00:00Z"))
    assert again.status_code == 202 and (again.json()["accepted"], again.json()["duplicates"]) == (0, 1)
    assert _post(api, "elsewhere", _event("r1", "Another world, another event.")).status_code == 202


def test_an_event_id_repeated_inside_one_batch_with_other_content_answers_409_and_stores_nothing(
        api: httpx.Client) -> None:
    refused = _post(api, "w-inner", _event("i1", "One."), _event("i2", "Two."), _event("i1", "Not one."))
    assert refused.status_code == 409 and refused.json()["error"]["details"] == {"event_ids": ["i1"]}
    assert api.get("/v1/worlds/w-inner/events/i2").status_code == 404


def test_two_batches_racing_with_one_new_id_and_other_content_store_one_batch_whole_and_refuse_the_other(
        clients: Clients) -> None:
    world = clients.world("w-race")
    for n in range(5):
        batches = {side: IngestRequest.model_validate({"events": [
            _event(f"race{n}", f"Said by {side}."), _event(f"race{n}-{side}", f"Only {side} sent this.")]})
            for side in ("a", "b")}
        start, outcome = threading.Barrier(2), dict[str, str]()

        def send(side: str, batch: IngestRequest, start: threading.Barrier, outcome: dict[str, str]) -> None:
            start.wait()
            try:
                ingest_events(clients, world, batch)
                outcome[side] = "stored"
            except EventIdConflict as exc:
                outcome[side] = f"refused {exc.details}"

        threads = [threading.Thread(target=send, args=(side, batch, start, outcome)) for side, batch in batches.items()]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        winner = next(side for side, result in outcome.items() if result == "stored")
        loser = "b" if winner == "a" else "a"
        assert outcome[loser] == f"refused {{'event_ids': ['race{n}']}}"
        stored = {e.event_id: e.content for e in clients.store.get_events("w-race", [
            f"race{n}", f"race{n}-a", f"race{n}-b"])}
        assert stored == {f"race{n}": f"Said by {winner}.", f"race{n}-{winner}": f"Only {winner} sent this."}


def test_a_question_to_a_world_with_no_event_answers_404_unknown_world(api: httpx.Client) -> None:
    for mode in ("sync", "async", "research"):
        reply = api.post("/v1/worlds/w-never-used/queries", json={"user_id": "ana", "question": "Where?",
                                                                  "mode": mode})
        assert reply.status_code == 404 and reply.json()["error"]["code"] == "unknown_world", reply.text
    assert api.get("/v1/worlds/w-never-used/queries").json() == []


def test_the_worlds_are_listed_with_their_counts_and_an_api_key_sees_only_its_own(
        api: httpx.Client, monkeypatch: pytest.MonkeyPatch) -> None:
    assert _post(api, "w-list-a", _event("l1", "Hello."), _event("l2", "Hi.", user_id="bo", conversation_id="c2")
                 ).status_code == 202
    assert _post(api, "w-list-b", _event("l1", "Hello.")).status_code == 202
    listed = {w["world_id"]: w for w in api.get("/v1/worlds").json()}
    assert {"w-list-a", "w-list-b"} <= set(listed)
    assert {k: listed["w-list-a"][k] for k in ("events", "users", "conversations")} == {
        "events": 2, "users": 2, "conversations": 2}
    assert "last_event_at" in listed["w-list-a"]
    monkeypatch.setenv("ENGRAM_API_KEYS", "k1=w-list-a,w-list-empty;admin=*")
    get_settings.cache_clear()
    try:
        assert api.get("/v1/worlds").status_code == 401
        assert api.get("/v1/worlds", headers={"Authorization": "Bearer nope"}).status_code == 401
        own = api.get("/v1/worlds", headers={"Authorization": "Bearer k1"})
        assert [w["world_id"] for w in own.json()] == ["w-list-a"], own.text
        every = api.get("/v1/worlds", headers={"Authorization": "Bearer admin"}).json()
        assert {w["world_id"] for w in every} == set(listed)
    finally:
        monkeypatch.delenv("ENGRAM_API_KEYS")
        get_settings.cache_clear()


def test_the_clients_list_the_worlds_and_raise_conflict_on_an_event_id_sent_with_other_content(
        api: httpx.Client) -> None:
    from engram.local.server import build_app
    from engram.sdk.client import Conflict

    app = build_app()
    with EngramClient("http://engram.local", transport=_Bridge(httpx.ASGITransport(app=app))  # type: ignore[arg-type]
                      ) as client:
        client.add_events("w-sdk", [_event("s1", "I live in Madrid.")])
        assert "w-sdk" in {w.world_id for w in client.worlds()}
        with pytest.raises(Conflict) as refused:
            client.add_events("w-sdk", [_event("s1", "I live in Porto.")])
        assert refused.value.details == {"event_ids": ["s1"]}

    async def listed() -> set[str]:
        async with AsyncEngramClient("http://engram.local", transport=httpx.ASGITransport(app=app)  # type: ignore[arg-type]
                                     ) as client:
            return {w.world_id for w in await client.worlds()}

    assert "w-sdk" in anyio.run(listed)
