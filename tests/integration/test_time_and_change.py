"""Time and change on the real parts (embedded PostgreSQL, tantivy, the offline model; a model that reads each
message as the test says where the offline extractor does not read it yet): moves, first and third person, close
the old value's valid time as a resolved conflict; older news becomes history; a stated end closes a fact; memory,
search and answers read as of a past time; a fact's history through the HTTP API and the client, never another
world's."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from engram.enrichment.resolve import user_entity
from engram.local.server import build_app
from engram.model.memories import SemanticMemory
from engram.ports.clients import Clients
from engram.sdk.client import EngramClient, NotFound
from tests.asgi import _Bridge, api_client
from tests.builder import remember
from tests.fakes.readings import ReadingLLM

pytestmark = pytest.mark.integration
T0 = datetime(2026, 3, 4, 9, 0, tzinfo=UTC)
_seq = iter(range(1_000_000))


@pytest.fixture(scope="module")
def api(clients: Clients) -> Iterator[httpx.Client]:
    with api_client(clients) as client:
        yield client


def say(clients: Clients, world: str, text: str, *, days: float = 0, user: str = "dana",
        readings: Mapping[str, Sequence[Mapping[str, Any]]] | None = None) -> None:
    """One user turn, stored and enriched through the pipeline; `readings`: how the model reads it."""
    reader = dataclasses.replace(clients, llm=ReadingLLM(readings)) if readings else clients
    remember(reader, world, [{"event_id": f"{world}-{next(_seq)}", "user_id": user, "conversation_id": f"{user}-c",
                              "role": "user", "content": text,
                              "occurred_at": (T0 + timedelta(days=days)).isoformat()}],
             now=T0 + timedelta(days=days, hours=1))


def facts(clients: Clients, world: str, subject: str, predicate: str) -> dict[str, SemanticMemory]:
    entity = clients.store.find_entity_by_name(world, subject) or user_entity(clients, world, subject)
    return {f.object_value: f for f in clients.store.find_facts(world, entity.entity_id, predicate,
                                                                statuses=("active", "superseded"))}


def moved(clients: Clients, world: str) -> dict[str, SemanticMemory]:
    """Dana lived in Lisbon from T0 and says she moved to Porto 30 days later (2026-04-03)."""
    say(clients, world, "I live in Lisbon.")
    say(clients, world, "I moved to Porto.", days=30)
    return facts(clients, world, "dana", "lives_in")


# ---------------------------------------------------------------- the lifecycle over time
def test_a_third_person_move_supersedes_the_old_place_as_a_resolved_change(clients: Clients) -> None:
    world = "ft-third"
    lives = [{"subject": "Kalani Brandt", "predicate": "lives_in", "object_is_entity": True}]
    say(clients, world, "Kalani Brandt lives in Cork.", readings={
        "Kalani Brandt lives in Cork.": [{**lives[0], "object": "Cork"}]})
    say(clients, world, "Update: Kalani Brandt moved and now lives in Porto.", days=3, readings={
        "Update: Kalani Brandt moved and now lives in Porto.": [{**lives[0], "object": "Porto"}]})
    by_value = facts(clients, world, "Kalani Brandt", "lives_in")
    assert (by_value["Porto"].status, by_value["Cork"].status) == ("active", "superseded")
    assert by_value["Cork"].valid_to == by_value["Porto"].valid_from == T0 + timedelta(days=3)
    [conflict] = clients.store.list_conflicts(world, None)
    assert (conflict.status, conflict.strategy, conflict.resolved_by, conflict.winner_memory_id) == \
        ("resolved", "change", "rules", by_value["Porto"].memory_id)


def test_a_first_person_move_read_by_the_offline_model_closes_the_old_place(clients: Clients) -> None:
    say(clients, "ft-first", "I live in Lisbon.")
    say(clients, "ft-first", "I moved to Porto last week.", days=30)
    by_value = facts(clients, "ft-first", "dana", "lives_in")
    lisbon, porto = by_value["Lisbon"], by_value["Porto"]
    assert (lisbon.status, porto.status) == ("superseded", "active")
    assert lisbon.valid_to == porto.valid_from == datetime(2026, 3, 23, tzinfo=UTC)  # "last week", said on 04-03
    [conflict] = clients.store.list_conflicts("ft-first", "resolved")
    assert conflict.strategy == "change" and conflict.winner_memory_id == porto.memory_id


def test_older_news_said_later_is_history_not_the_current_value(clients: Clients) -> None:
    world = "ft-older"
    say(clients, world, "I live in Porto.")
    say(clients, world, "Back in 2019 I moved to Cork.", days=5, readings={"Back in 2019 I moved to Cork.": [
        {"subject": "__speaker__", "predicate": "lives_in", "object": "Cork", "valid_from": "2019-06-01"}]})
    by_value = facts(clients, world, "dana", "lives_in")
    assert (by_value["Porto"].status, by_value["Cork"].status) == ("active", "superseded")
    assert by_value["Cork"].valid_to == by_value["Porto"].valid_from == T0
    [conflict] = clients.store.list_conflicts(world, None)
    assert (conflict.strategy, conflict.winner_memory_id) == ("history", by_value["Porto"].memory_id)


def test_a_stated_end_closes_the_fact_and_its_edge_without_a_new_value(clients: Clients) -> None:
    world = "ft-end"
    say(clients, world, "I work at Acme Robotics.")
    say(clients, world, "I no longer work at Acme Robotics.", days=10, readings={
        "I no longer work at Acme Robotics.": [{"subject": "__speaker__", "predicate": "works_at",
                                               "object": "Acme Robotics", "object_is_entity": True,
                                               "negated": True}]})
    [acme] = facts(clients, world, "dana", "works_at").values()
    assert (acme.status, acme.valid_to) == ("superseded", T0 + timedelta(days=10))
    assert clients.store.list_conflicts(world, None) == []
    entity = clients.store.find_entity_by_name(world, "Acme Robotics")
    assert entity is not None and clients.store.relationships(world, entity.entity_id, 1) == []


# ---------------------------------------------------------------- as of a past time, through the API
def test_memories_as_of_a_past_time_are_the_facts_true_then(clients: Clients, api: httpx.Client) -> None:
    moved(clients, "ft-mem")
    url = "/v1/worlds/ft-mem/users/dana/memories"

    def places(**params: str) -> list[tuple[str, str]]:
        reply = api.get(url, params={"layer": "semantic", **params})
        assert reply.status_code == 200, reply.text
        return [(f["object_value"], f["status"]) for f in reply.json() if f["predicate"] == "lives_in"]

    assert places(as_of="2026-03-20T00:00:00Z") == [("Lisbon", "superseded")]  # true then, superseded since
    assert places(as_of="2026-04-10T00:00:00") == [("Porto", "active")]  # no offset: UTC
    assert places(as_of="2026-03-01T00:00:00Z") == []  # nothing was known yet
    assert sorted(places()) == [("Lisbon", "superseded"), ("Porto", "active")]  # today: every fact, as it stands
    episodes = api.get(url, params={"layer": "episodic", "as_of": "2026-03-20T00:00:00Z"}).json()
    assert [e["content"] for e in episodes] == ["I live in Lisbon."]


def test_a_search_as_of_a_past_time_finds_what_was_true_and_said_by_then(clients: Clients, api: httpx.Client) -> None:
    moved(clients, "ft-search")
    then = api.get("/v1/worlds/ft-search/search", params={"q": "dana lives in", "user_id": "dana",
                                                         "as_of": "2026-03-20T00:00:00Z"}).json()
    assert [h["text"] for h in then["hits"] if h["kind"] == "semantic"] == ["dana lives in Lisbon"]
    assert not any("Porto" in h["text"] for h in then["hits"])
    now = api.get("/v1/worlds/ft-search/search", params={"q": "dana lives in", "user_id": "dana"}).json()
    assert [h["text"] for h in now["hits"] if h["kind"] == "semantic"] == ["dana lives in Porto"]


def test_a_question_as_of_a_past_time_is_answered_with_what_was_true_then(clients: Clients, api: httpx.Client) -> None:
    moved(clients, "ft-ask")
    ask = {"user_id": "dana", "question": "Where do I live?"}
    then = api.post("/v1/worlds/ft-ask/queries", json={**ask, "config": {"as_of": "2026-03-20T00:00:00Z"}})
    assert then.status_code == 200, then.text
    answer = then.json()["answer"]["content"]
    assert "Lisbon" in answer and "Porto" not in answer
    assert then.json()["config"]["as_of"] == "2026-03-20T00:00:00Z"
    today = api.post("/v1/worlds/ft-ask/queries", json=ask).json()["answer"]["content"]
    assert "Porto" in today


@pytest.mark.parametrize("call", [
    lambda api: api.get("/v1/worlds/ft-bad/users/dana/memories", params={"as_of": "last tuesday"}),
    lambda api: api.get("/v1/worlds/ft-bad/search", params={"q": "porto", "as_of": "2026-13-45"}),
    lambda api: api.post("/v1/worlds/ft-bad/queries", json={"user_id": "dana", "question": "Where?",
                                                            "config": {"as_of": "soon"}}),
])
def test_an_as_of_that_is_no_time_is_refused_with_a_422_that_names_it(api: httpx.Client, call: Any) -> None:
    reply = call(api)
    assert reply.status_code == 422 and reply.headers["content-type"].startswith("application/json")
    assert reply.json()["error"]["code"] == "invalid_input" and "as_of" in reply.text


# ---------------------------------------------------------------- a fact's history
def test_a_facts_history_lists_its_values_with_their_times_and_what_closed_them(
        clients: Clients, api: httpx.Client) -> None:
    by_value = moved(clients, "ft-history")
    lisbon, porto = by_value["Lisbon"], by_value["Porto"]
    reply = api.get(f"/v1/worlds/ft-history/memories/{porto.memory_id}/history")
    assert reply.status_code == 200, reply.text
    history = reply.json()
    assert (history["subject"], history["predicate"], history["current"]) == ("dana", "lives_in", [porto.memory_id])
    old, new = history["versions"]
    assert (old["object_value"], old["status"], old["valid_from"], old["valid_to"]) == (
        "Lisbon", "superseded", "2026-03-04T09:00:00Z", "2026-04-03T09:00:00Z")
    assert (old["superseded_by"], old["closed_by"]["strategy"]) == (porto.memory_id, "change")
    assert (new["object_value"], new["status"], new["valid_to"], new["closed_by"]) == ("Porto", "active", None, None)
    assert api.get(f"/v1/worlds/ft-history/memories/{lisbon.memory_id}/history").json()["versions"] == \
        history["versions"]  # asked through any of its values, the same history
    missing = api.get("/v1/worlds/ft-history/memories/sem_nope/history")
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"
    # Another world holds no such fact: its history is as unknown as one never made.
    assert api.get(f"/v1/worlds/ft-other/memories/{porto.memory_id}/history").status_code == 404

    with EngramClient("http://engram.local", transport=_Bridge(httpx.ASGITransport(app=build_app()))  # type: ignore[arg-type]
                      ) as client:
        read = client.memory_history("ft-history", porto.memory_id)
        assert [v.object_value for v in read.versions] == ["Lisbon", "Porto"]
        assert [f.object_value for f in client.memories("ft-history", "dana", as_of=T0 + timedelta(days=1))
                if f.predicate == "lives_in"] == ["Lisbon"]
        assert "Lisbon" in (client.ask("ft-history", "dana", "Where do I live?",
                                       as_of=T0 + timedelta(days=1)).answer or _none()).content
        with pytest.raises(NotFound):
            client.memory_history("ft-other", porto.memory_id)


def _none() -> Any:
    raise AssertionError("no answer")
