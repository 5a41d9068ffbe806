"""The Lambda handlers called with the sample API Gateway events, as Lambda would call them."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from engram.app.compose import set_clients
from engram.app.inline import InlineWorkflows
from engram.local.server import LambdaContext
from engram.ports.clients import Clients
from tests.builder import enrich
from tests.events import load_event

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def installed(clients: Clients) -> Iterator[Clients]:
    clients.workflows = InlineWorkflows(clients, background=False)
    set_clients(clients)
    yield clients
    set_clients(None)


def _call(function: str, event: dict[str, object]) -> tuple[int, dict[str, object]]:
    import importlib

    handler = importlib.import_module(f"functions.{function}.handler").handler
    result = handler(event, LambdaContext(f"engram-{function}"))
    return int(result["statusCode"]), json.loads(result["body"])


def test_ingest_accepts_the_sample_batch_and_api_answers_the_sample_question_from_it(installed: Clients) -> None:
    status, body = _call("ingest", load_event("api/post_events.json"))
    assert status == 202 and body["accepted"] == 1
    enrich(installed, "demo", ["sample-1"])

    status, body = _call("api", load_event("api/post_query.json"))
    assert status == 200, body
    assert "Porto" in body["answer"]["content"]
    assert "sample-1" in [s["id"] for s in body["answer"]["sources"]]


def test_a_jwt_whose_worlds_claim_lacks_the_world_is_refused_before_anything_is_read(installed: Clients) -> None:
    event = load_event("api/post_events.json")
    event["requestContext"]["authorizer"]["jwt"]["claims"]["engram:worlds"] = "other-world"  # type: ignore[index]
    event["body"] = str(event["body"]).replace("sample-1", "sample-forbidden")
    status, body = _call("ingest", event)
    assert status == 403 and body["error"]["code"] == "forbidden"
    assert installed.store.get_event("demo", "sample-forbidden") is None


def test_health_reports_each_dependency(installed: Clients) -> None:
    status, body = _call("api", load_event("api/get_health.json"))
    assert status == 200
    assert body["status"] == "ok"
