"""Faults that lose nothing, on the real parts through the HTTP API: the keyword index down (an OpenSearch
adapter whose osmem-server was stopped) and the database dropping a request's connection mid-statement
(`pg_terminate_backend` from an owner connection while the statement waits on a lock).

The same faults during enrichment (retried by the state machine, no duplicate facts, the outbox drained
later) are in tests/workflow/test_enrichment_faults.py; `engram serve` killed with SIGKILL in
tests/e2e/test_crash_recovery.py; model failures in tests/integration/test_memory_lifecycle.py,
tests/integration/test_anthropic_adapter.py and tests/workflow/."""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterator
from typing import Any

import httpx
import psycopg
import pytest
from osmem_server import OsmemServer

from engram.adapters.opensearch_index import OpenSearchIndex
from engram.enrichment.indexing import index_pending
from engram.errors import TransientStoreError
from engram.ports.clients import Clients
from tests.asgi import api_client
from tests.builder import remember
from tests.db_faults import drop_connection_during

pytestmark = pytest.mark.integration
WORLD = "faults"


def _events(prefix: str, *texts: str, user: str = "dana") -> list[dict[str, Any]]:
    return [{"event_id": f"{prefix}-{i}", "user_id": user, "conversation_id": f"{prefix}-c", "role": "user",
             "content": text} for i, text in enumerate(texts)]


@pytest.fixture(scope="module")
def remembered(clients: Clients) -> Clients:
    """A world whose events went through enrichment with every part up."""
    events = _events("seen", "My name is Dana and I live in Lisbon.", "I work at Acme Robotics on drones.",
                     "My sister Marta plays the cello in Porto.")
    remember(clients, WORLD, events)
    return clients


@pytest.fixture(scope="module")
def stopped_opensearch_url() -> str:
    """The address of an osmem-server that answered once and was then stopped."""
    server = OsmemServer.start()
    OpenSearchIndex(server.url, index_prefix="faults").ping()
    server.close()
    return server.url


@pytest.fixture(scope="module")
def index_down(remembered: Clients, stopped_opensearch_url: str) -> Iterator[httpx.Client]:
    """The API over the same database with the keyword brain on the stopped OpenSearch."""
    down = dataclasses.replace(remembered, index=OpenSearchIndex(stopped_opensearch_url, index_prefix="faults"))
    with api_client(down) as client:
        yield client


# ---------------------------------------------------------------- the keyword index down
def test_search_with_the_keyword_index_down_is_ranked_by_the_other_brains_and_says_so(
        index_down: httpx.Client) -> None:
    response = index_down.get(f"/v1/worlds/{WORLD}/search", params={"q": "Where does Dana live? Lisbon"})

    assert response.status_code == 200, response.text
    body = response.json()
    assert body["unavailable"] == ["keyword"]
    assert "keyword brain unavailable: ranked by semantic, graph and expansion only" in body["interpretation"]
    assert body["brains"]["keyword"]["candidates"] == 0
    assert body["hits"] and "seen-0" in {h["doc_id"] for h in body["hits"]}
    assert all("keyword" not in h["ranks"] for h in body["hits"])


def test_every_query_syntax_degrades_the_same_way_instead_of_failing(index_down: httpx.Client) -> None:
    for q in ['"live in Lisbon"', "Lisbon AND NOT Porto", "speaker:dana", "Lis*", "cello OR drones"]:
        response = index_down.get(f"/v1/worlds/{WORLD}/search", params={"q": q, "user_id": "dana"})
        assert response.status_code == 200, (q, response.text)
        assert response.json()["unavailable"] == ["keyword"], q


def test_a_question_is_answered_with_the_keyword_index_down(index_down: httpx.Client) -> None:
    response = index_down.post(f"/v1/worlds/{WORLD}/queries", json={"user_id": "dana",
                                                                    "question": "Where does Dana live?"})
    assert response.status_code == 200, response.text
    assert response.json()["answer"]["content"]


def test_health_names_the_index_as_down(index_down: httpx.Client) -> None:
    response = index_down.get("/v1/health")
    assert response.status_code == 503
    body = response.json()
    assert body["dependencies"]["database"] == "up"
    assert body["dependencies"]["index"].startswith("down: TransientStoreError")


def test_ingest_with_the_keyword_index_down_stores_the_events_and_keeps_their_index_work(
        remembered: Clients, index_down: httpx.Client, stopped_opensearch_url: str) -> None:
    events = _events("while-down", "I moved to Coimbra last week.", "Coimbra has a lovely old university.")
    response = index_down.post(f"/v1/worlds/{WORLD}/events", json={"events": events})
    assert response.status_code == 202, response.text
    assert response.json()["accepted"] == 2
    for e in events:
        stored = index_down.get(f"/v1/worlds/{WORLD}/events/{e['event_id']}")
        assert stored.status_code == 200 and stored.json()["content"] == e["content"]

    down = dataclasses.replace(remembered, index=OpenSearchIndex(stopped_opensearch_url, index_prefix="faults"))
    with pytest.raises(TransientStoreError):  # the index step fails (the state machine retries it) ...
        index_pending(down, WORLD)
    pending = {doc_id for _, _, _, doc_id, _ in remembered.store.pending_index_ops(WORLD, 100)}
    assert {"while-down-0", "while-down-1"} <= pending  # ... and the outbox still holds the work

    assert index_pending(remembered, WORLD) >= 2  # an index that answers drains it
    assert {"while-down-0", "while-down-1"} <= {h.doc_id for h in remembered.index.search(WORLD, "Coimbra")}
    assert remembered.store.pending_index_ops(WORLD, 100) == []


# ---------------------------------------------------------------- the database connection dropped
@pytest.fixture(scope="module")
def api(remembered: Clients) -> Iterator[httpx.Client]:
    with api_client(remembered) as client:
        yield client


def _stored(pg_url: str, event_ids: list[str]) -> int:
    with psycopg.connect(pg_url) as conn:
        row = conn.execute("SELECT count(*) FROM chat_events WHERE world_id = %s AND event_id = ANY(%s)",
                           (WORLD, event_ids)).fetchone()
    return int(row[0]) if row else 0


# What a driver's message carries: PostgreSQL's own words, process ids, SQL, relation and exception names.
_INTERNALS = re.compile(r"AdminShutdown|OperationalError|terminating|administrator|server closed|[Pp]rocess \d+|"
                        r"\bpid\b|SELECT|INSERT|UPDATE|relation|chat_events|CONTEXT|DETAIL|HINT|psycopg|connection")


def _tells_nothing_of_the_database(error: dict[str, Any]) -> bool:
    """A 503 says what happened and that a retry may succeed, never the database's internals."""
    text = json.dumps(error)
    return "retry" in error["message"] and _INTERNALS.search(text) is None


def test_an_ingest_whose_connection_drops_answers_503_with_a_json_error_and_its_retry_stores_each_event_once(
        api: httpx.Client, pg_url: str) -> None:
    events = _events("dropped", "I adopted a cat called Miso.", "Miso likes the balcony.")
    ids = [e["event_id"] for e in events]

    response, dropped = drop_connection_during(
        pg_url, "chat_events", "SHARE", lambda: api.post(f"/v1/worlds/{WORLD}/events", json={"events": events}))

    assert dropped == 1 and response.status_code == 503
    assert response.headers["retry-after"] == "1"
    error = response.json()["error"]
    assert error["code"] == "store_unavailable" and _tells_nothing_of_the_database(error)
    assert _stored(pg_url, ids) == 0  # the transaction was rolled back whole: nothing half-stored

    retried = api.post(f"/v1/worlds/{WORLD}/events", json={"events": events})  # the pool replaced the connection
    assert retried.status_code == 202 and retried.json()["accepted"] == 2
    again = api.post(f"/v1/worlds/{WORLD}/events", json={"events": events})  # a client's second retry
    assert again.status_code == 202 and again.json()["duplicates"] == 2
    assert _stored(pg_url, ids) == 2


def test_a_read_whose_connection_drops_answers_503_and_the_next_read_succeeds(api: httpx.Client, pg_url: str) -> None:
    response, dropped = drop_connection_during(
        pg_url, "chat_events", "ACCESS EXCLUSIVE", lambda: api.get(f"/v1/worlds/{WORLD}/events/seen-0"))

    assert dropped == 1 and response.status_code == 503
    assert response.json()["error"]["code"] == "store_unavailable"
    assert _tells_nothing_of_the_database(response.json()["error"])
    for _ in range(8):  # more reads than the pool has connections: every one of them works again
        assert api.get(f"/v1/worlds/{WORLD}/events/seen-0").json()["content"] == "My name is Dana and I live in Lisbon."
