"""The HTTP API as a client sees it, through the local server's ASGI app and the real handlers."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engram.config import get_settings
from engram.ports.clients import Clients
from tests.asgi import api_client
from tests.builder import enrich

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def api(clients: Clients) -> Iterator[httpx.Client]:
    with api_client(clients) as client:
        yield client


EVENT = {"user_id": "ana", "conversation_id": "c1", "role": "user", "content": "My name is Ana and I live in Madrid."}


def test_events_are_accepted_with_scores_and_a_query_is_answered_with_sources(api: httpx.Client) -> None:
    accepted = api.post("/v1/worlds/wa/events", json={"events": [{**EVENT, "event_id": "a1"}]})
    assert accepted.status_code == 202, accepted.text
    body = accepted.json()
    assert body["accepted"] == 1 and body["events"][0]["importance"] == pytest.approx(0.6)
    from engram.app.compose import get_clients

    enrich(get_clients(), "wa", ["a1"])
    assert api.get("/v1/worlds/wa/events/a1").json()["enrichment_status"] == "enriched"
    answer = api.post("/v1/worlds/wa/queries", json={"user_id": "ana", "question": "Where does Ana live?"})
    assert answer.status_code == 200, answer.text
    result = answer.json()
    assert "Madrid" in result["answer"]["content"] and "a1" in {s["id"] for s in result["answer"]["sources"]}
    again = api.get(f"/v1/worlds/wa/queries/{result['query_id']}").json()
    assert again["status"] == "completed" and again["question"] == "Where does Ana live?" and again["user_id"] == "ana"
    assert again["config"]["max_info_requests"] == 3 and again["remaining_info_requests"] == 3 - again["info_requests_used"]
    assert again["created_at"] <= again["completed_at"] and again["answer"]["confidence_level"] in ("high", "medium", "low")
    timings = again["timings"]
    assert timings["total_ms"] == pytest.approx(timings["model_ms"] + timings["loop_ms"], abs=0.05)
    assert timings["steps"] == len(again["trace"])
    assert [q["query_id"] for q in api.get("/v1/worlds/wa/queries", params={"user_id": "ana"}).json()] == \
        [result["query_id"]]
    hits = api.get("/v1/worlds/wa/search", params={"q": "Madrid", "user_id": "ana"}).json()
    assert "a1" in {h["doc_id"] for h in hits["hits"]} and hits["search_time_ms"] >= 0


def test_invalid_events_answer_422_with_the_path_of_each_bad_field_and_store_nothing(api: httpx.Client) -> None:
    bad = {"events": [{**EVENT, "event_id": "ok-1"}, {**EVENT, "role": "robot", "content": ""}]}
    reply = api.post("/v1/worlds/wa/events", json=bad)
    assert reply.status_code == 422
    locations = [".".join(map(str, d["loc"])) for d in reply.json()["error"]["details"]]
    assert any("events.1.role" in loc for loc in locations) and any("events.1.content" in loc for loc in locations)
    assert api.get("/v1/worlds/wa/events/ok-1").status_code == 404


def test_limits_and_shapes_are_enforced(api: httpx.Client) -> None:
    assert api.post("/v1/worlds/wa/events", json={"events": [EVENT] * 101}).status_code == 422
    assert api.post("/v1/worlds/wa/events", json={"events": [{**EVENT, "content": "x" * 32_001}]}).status_code == 422
    assert api.post("/v1/worlds/wa/events", content=b"{not json", headers={"content-type": "application/json"}
                    ).status_code == 400
    assert api.post("/v1/worlds/wa/events", content=b"x" * 1_100_000).status_code == 413
    assert api.post("/v1/worlds/bad%20world/events", json={"events": [EVENT]}).status_code == 422
    assert api.post("/v1/worlds/wa/queries", json={"user_id": "ana", "question": "?",
                                                   "config": {"max_info_requests": 9}}).status_code == 422
    missing = api.get("/v1/worlds/wa/queries/qry_nope")
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"
    assert api.get("/v1/nowhere").status_code == 404


def test_health_openapi_and_swagger_are_served(api: httpx.Client) -> None:
    health = api.get("/v1/health").json()
    assert health["status"] == "ok" and health["dependencies"]["database"] == "up"
    spec = api.get("/v1/openapi.json").json()
    assert "/v1/worlds/{world}/queries" in spec["paths"] and "/v1/worlds/{world}/search" in spec["paths"]
    assert "swagger" in api.get("/v1/docs").text.lower()


def test_api_keys_require_a_bearer_and_limit_the_worlds(api: httpx.Client, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ENGRAM_API_KEYS", "k1=wa;admin=*")
    get_settings.cache_clear()
    try:
        assert api.get("/v1/worlds/wa/conflicts").status_code == 401
        assert api.get("/v1/worlds/wa/conflicts", headers={"Authorization": "Bearer nope"}).status_code == 401
        assert api.get("/v1/worlds/wa/conflicts", headers={"Authorization": "Bearer k1"}).status_code == 200
        denied = api.get("/v1/worlds/other/conflicts", headers={"Authorization": "Bearer k1"})
        assert denied.status_code == 403 and denied.json()["error"]["code"] == "forbidden"
        assert api.get("/v1/worlds/other/conflicts", headers={"Authorization": "Bearer admin"}).status_code == 200
    finally:
        monkeypatch.delenv("ENGRAM_API_KEYS")
        get_settings.cache_clear()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=20),
                         lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8),
                                                                                            children, max_size=3),
                         max_leaves=10))
def test_arbitrary_json_never_gets_a_5xx(api: httpx.Client, body: object) -> None:
    for path in ("/v1/worlds/wa/events", "/v1/worlds/wa/queries"):
        assert api.post(path, json=body).status_code < 500


def test_the_enrichment_sweep_answers_202_with_counts_and_refuses_a_bad_value(api: httpx.Client) -> None:
    reply = api.post("/v1/worlds/wa/enrichments", json={"include_failed": True})
    assert reply.status_code == 202
    assert set(reply.json()) == {"events", "enrichment_ids", "not_started"}
    assert api.post("/v1/worlds/wa/enrichments", json={"include_failed": "sometimes"}).status_code == 422


def test_an_async_query_answers_202_with_its_id_and_is_read_back_completed(api: httpx.Client) -> None:
    started = api.post("/v1/worlds/wa/queries", json={"user_id": "ana", "question": "Where do I live?",
                                                     "mode": "async"})
    assert started.status_code == 202, started.text
    query_id = started.json()["query_id"]
    assert api.get(f"/v1/worlds/wa/queries/{query_id}").json()["query_id"] == query_id


def test_erasing_a_user_answers_the_counts_and_their_events_are_gone(api: httpx.Client) -> None:
    event = {**EVENT, "event_id": "erase-me", "user_id": "zoe"}
    assert api.post("/v1/worlds/wz/events", json={"events": [event]}).status_code == 202
    reply = api.delete("/v1/worlds/wz/users/zoe")
    assert reply.status_code == 200, reply.text
    assert reply.json()["deleted"]["chat_events"] == 1
    assert api.get("/v1/worlds/wz/events/erase-me").status_code == 404
    assert api.delete("/v1/worlds/wz/users/bad%20id").status_code == 422


def _config(api: httpx.Client, method: str, world: str, body: object = None, status: int = 200) -> dict:
    reply = api.request(method, f"/v1/worlds/{world}/config", json=body)
    assert reply.status_code == status, reply.text
    return reply.json()


def test_a_worlds_config_is_read_replaced_patched_and_reset(api: httpx.Client) -> None:
    fresh = _config(api, "GET", "wcfg")
    assert fresh["overrides"] == {"heuristics": {}, "tag_categories": {}, "llm_budget": None} and fresh["ignored"] == {}
    assert fresh["heuristics"]["rrf_k"] == 60 and "weather" in fresh["tag_categories"]

    tuned = _config(api, "PUT", "wcfg", {"heuristics": {"rrf_k": 30, "base_importance": {"userinput": 0.5}},
                                         "tag_categories": {"travel": ["flight", "hotel"]}})
    assert tuned["heuristics"]["rrf_k"] == 30 and tuned["heuristics"]["base_importance"]["userinput"] == 0.5
    assert tuned["heuristics"]["base_importance"]["default"] == 0.5 and tuned["tag_categories"]["travel"] == ["flight", "hotel"]
    scored = api.post("/v1/worlds/wcfg/events", json={"events": [{**EVENT, "content": "I booked a flight."}]}).json()
    assert "travel" in scored["events"][0]["tags"] and scored["events"][0]["importance"] == pytest.approx(0.5)

    patched = _config(api, "PATCH", "wcfg", {"heuristics": {"rrf_k": None, "search_limit": 5}},
                      )
    assert patched["heuristics"]["rrf_k"] == 60 and patched["heuristics"]["search_limit"] == 5
    assert patched["overrides"]["heuristics"] == {"base_importance": {"userinput": 0.5}, "search_limit": 5}
    assert patched["overrides"]["tag_categories"] == {"travel": ["flight", "hotel"]}

    for method, bad, named in [("PUT", {"heuristics": {"no_such_rule": 1}}, "no_such_rule"),
                               ("PUT", {"colour": "blue"}, "colour"),
                               ("PUT", {"heuristics": {"rrf_k": "many"}}, "rrf_k"),
                               ("PUT", {"heuristics": {"decay_half_life_days": 0}}, "decay_half_life_days"),
                               ("PUT", {"heuristics": {"weight_semantic": -0.4}}, "weight_semantic"),
                               ("PUT", {"tag_categories": {"travel": "flight"}}, "travel"),
                               ("PATCH", {"heuristics": {"search_limit": "five"}}, "search_limit"),
                               ("PATCH", {"colour": "blue"}, "colour")]:
        error = _config(api, method, "wcfg", bad, 422)["error"]
        assert error["code"] == "invalid_input" and named in json.dumps(error["details"]), (bad, error)
    assert _config(api, "GET", "wcfg")["overrides"] == patched["overrides"]  # a refused write changes nothing

    reset = _config(api, "DELETE", "wcfg")
    assert reset["overrides"] == {"heuristics": {}, "tag_categories": {}, "llm_budget": None} and reset["heuristics"]["search_limit"] == 10
    paths = api.get("/v1/openapi.json").json()["paths"]
    assert {"get", "put", "patch", "delete"} <= set(paths["/v1/worlds/{world}/config"])


def test_a_stored_config_that_no_longer_validates_is_ignored_not_a_5xx_and_can_be_reset(
        api: httpx.Client, clients: Clients) -> None:
    with clients.store.tx("wbad") as cur:  # type: ignore[attr-defined]
        for key, value in (("heuristics", {"rrf_k": "many"}), ("tag_categories", ["not", "a map"]),
                           ("colour", "blue")):
            cur.execute("INSERT INTO system_config (world_id, key, value) VALUES ('wbad', %s, %s)",
                        (key, json.dumps(value)))
    assert api.post("/v1/worlds/wbad/events", json={"events": [{**EVENT, "event_id": "bad-1"}]}).status_code == 202
    assert api.get("/v1/worlds/wbad/search", params={"q": "Madrid"}).status_code == 200
    assert api.post("/v1/worlds/wbad/queries", json={"user_id": "ana", "question": "Where?"}).status_code == 200
    config = _config(api, "GET", "wbad")
    assert set(config["ignored"]) == {"heuristics", "tag_categories", "colour"} and config["heuristics"]["rrf_k"] == 60
    assert _config(api, "DELETE", "wbad")["ignored"] == {}
    with clients.store.tx("wbad") as cur:  # type: ignore[attr-defined]
        cur.execute("SELECT count(*) AS n FROM system_config WHERE world_id = 'wbad'")
        assert cur.fetchone()["n"] == 0


# ---------------------------------------------------------------- the local server reads no body it will refuse
MB = 1_000_000


def _asgi(path: str, headers: dict[str, str], chunks: list[bytes]) -> tuple[int, dict, int]:
    """POST `chunks` to the local server's ASGI app as a client streaming them; the status, the JSON body and
    how many chunks the app read."""
    import anyio

    from engram.local.server import build_app

    app = build_app()
    read = 0
    sent: list[dict] = []

    async def receive() -> dict:
        nonlocal read
        read += 1
        return {"type": "http.request", "body": chunks[read - 1], "more_body": read < len(chunks)}

    async def send(message: dict) -> None:
        sent.append(message)

    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST", "scheme": "http",
             "path": path, "raw_path": path.encode(), "query_string": b"", "root_path": "", "client": ("127.0.0.1", 1),
             "server": ("127.0.0.1", 8000), "headers": [(k.lower().encode(), v.encode()) for k, v in headers.items()]}
    anyio.run(app, scope, receive, send)
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return sent[0]["status"], json.loads(body), read


def test_the_local_server_refuses_a_body_declared_too_large_before_reading_any_of_it(api: httpx.Client) -> None:
    chunks = [b"x" * MB] * 8
    for path in ("/v1/worlds/wa/events", "/v1/worlds/wa/import"):
        status, body, read = _asgi(path, {"content-length": str(8 * MB), "content-type": "application/json"}, chunks)
        assert (status, body["error"]["code"], read) == (413, "payload_too_large", 0)


def test_the_local_server_stops_reading_an_undeclared_body_at_the_limit(api: httpx.Client) -> None:
    status, body, read = _asgi("/v1/worlds/wa/events", {"content-type": "application/json"}, [b"x" * (MB // 2)] * 8)
    assert (status, body["error"]["code"]) == (413, "payload_too_large") and read == 3  # the chunk that went over


def test_the_local_server_checks_the_key_before_reading_the_body(api: httpx.Client,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ENGRAM_API_KEYS", "k1=wa")
    get_settings.cache_clear()
    try:
        event = json.dumps({"events": [{**EVENT, "event_id": "keyed-1"}]}).encode()
        declared = {"content-length": str(len(event)), "content-type": "application/json"}
        for headers, status in (({}, 401), ({"authorization": "Bearer nope"}, 401),
                                ({"authorization": "Bearer k1"}, 403)):
            path = "/v1/worlds/other/events" if status == 403 else "/v1/worlds/wa/events"
            reply, body, read = _asgi(path, {**declared, **headers}, [event])
            assert (reply, read) == (status, 0), body
        reply, body, read = _asgi("/v1/worlds/wa/events", {**declared, "authorization": "Bearer k1"}, [event])
        assert (reply, read) == (202, 1), body
    finally:
        monkeypatch.delenv("ENGRAM_API_KEYS")
        get_settings.cache_clear()
