"""Property-based testing of the whole HTTP API from its own OpenAPI document (`/v1/openapi.json`): for
every operation schemathesis generates requests, valid and invalid, sends them to the local ASGI app in
process (the real handlers over embedded PostgreSQL and tantivy) and checks that no answer is a 5xx and
that every answer conforms to the document. A bounded number of examples per operation keeps it under a
minute; a failure prints the request that reproduces it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import content_type_conformance, response_schema_conformance

from engram.enrichment.ingest import await_enrichment, ingest_events
from engram.http import routes
from engram.local.server import build_app
from engram.model.events import IngestRequest
from engram.ports.clients import Clients
from tests.asgi import api_client

pytestmark = pytest.mark.integration
EXAMPLES_PER_OPERATION = 12
CHECKS = [not_a_server_error, response_schema_conformance, content_type_conformance]


# Loaded from the app itself when the module is collected (serving the document reads no store).
schema = schemathesis.openapi.from_asgi("/v1/openapi.json", build_app())


@pytest.fixture(scope="module", autouse=True)
def installed(clients: Clients) -> Iterator[None]:
    """The module's real parts installed for the handlers, with a world that has something in it."""
    ingest_events(clients, clients.world("world"), IngestRequest.model_validate({"events": [
        {"event_id": "evt-1", "user_id": "dana", "conversation_id": "c1", "role": "user",
         "content": "My name is Dana and I live in Lisbon."}]}))
    # No enrichment runs here, so `?wait=true` would wait its whole timeout: the route waits a moment instead.
    with api_client(clients), pytest.MonkeyPatch.context() as patch:  # api_client installs the clients
        patch.setattr(routes, "await_enrichment", lambda ports, accepted, timeout_s: await_enrichment(
            ports, accepted, min(timeout_s, 0.05)))
        yield


@schema.parametrize()
@settings(max_examples=EXAMPLES_PER_OPERATION, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
def test_no_request_gets_a_5xx_or_an_answer_outside_the_document(case: Any) -> None:
    case.call_and_validate(checks=CHECKS)
