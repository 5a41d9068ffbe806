"""The local runtime's concurrency bound, as Lambda's reserved concurrency behaves: an invocation past it is
refused with TooManyRequestsException (never queued, which would count against the state's timeout), the state
machine retries it as `Lambda.TooManyRequestsException`, and a batch still throttled after the retries is marked
failed (kept) and enriched again by the sweep of what was left behind once nothing runs."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from engram.enrichment.ingest import THROTTLED, ingest_events, sweep_orphaned
from engram.local.runtime import LocalWorkflowRuntime
from engram.model.common import utcnow
from engram.model.events import IngestRequest
from engram.ports.clients import Clients
from infra.constructs.workflows import ENRICHMENT_THROTTLE_ATTEMPTS
from tests.workflow.executions import Executions

pytestmark = pytest.mark.workflow
MACHINE = "engram-enrichment"


@pytest.fixture(scope="module")
def runtime(cdk_cache: Path) -> Iterator[LocalWorkflowRuntime]:
    """One invocation at a time per function (retries instant: the throttle retries run out at once)."""
    with LocalWorkflowRuntime(cdk_cache, instant_retries=True, concurrency=1) as runtime:
        yield runtime


def _ingest(clients: Clients, world: str, event_id: str, text: str) -> str:
    response = ingest_events(clients, clients.world(world), IngestRequest.model_validate({"events": [
        {"event_id": event_id, "user_id": "lena", "conversation_id": "c1", "role": "user", "content": text}]}))
    assert response.enrichment_id is not None
    return response.enrichment_id


def test_every_function_a_state_machine_calls_is_bounded_and_the_http_ones_are_not(
        runtime: LocalWorkflowRuntime) -> None:
    bounded = {runtime.function_names[name]: limit for name, limit in runtime.limits.items()}
    assert bounded == {"resolve": 1, "extract": 1, "query_step": 1, "consolidate": 1}


def test_an_invocation_past_the_bound_is_throttled_retried_then_marked_failed_and_swept_once_idle(
        runtime: LocalWorkflowRuntime, workflow_clients: Clients, executions: Executions) -> None:
    resolve = runtime.handler("resolve")
    holding, release = threading.Event(), threading.Event()

    def slow_resolve(payload: dict[str, Any], context: Any) -> Any:
        if payload["event_ids"] == ["t1"]:
            holding.set()
            release.wait(30)
        return resolve(payload, context)

    runtime.overrides["resolve"] = slow_resolve
    try:
        first = _ingest(workflow_clients, "wt", "t1", "My name is Lena and I live in Riga.")
        assert holding.wait(30)  # the first batch holds resolve's one slot
        second = _ingest(workflow_clients, "wt", "t2", "I work at Baltic Bikes as a mechanic.")
        throttled = executions.wait(executions.named(MACHINE, second))
        release.set()
        assert executions.wait(executions.named(MACHINE, first))["status"] == "SUCCEEDED"
    finally:
        release.set()
        del runtime.overrides["resolve"]

    assert throttled["status"] == "FAILED"
    history = executions.history(executions.named(MACHINE, second))
    failures = [e["lambdaFunctionFailedEventDetails"]["error"] for e in history
                if "lambdaFunctionFailedEventDetails" in e]
    assert len(failures) == 1 + ENRICHMENT_THROTTLE_ATTEMPTS and set(failures) == {THROTTLED}  # every attempt refused
    [event] = workflow_clients.store.get_events("wt", ["t2"])
    assert event.enrichment_status == "failed" and (event.enrichment_error or "").startswith(THROTTLED)

    swept = sweep_orphaned(workflow_clients, received_before=utcnow() + timedelta(seconds=1))
    [again] = swept.enrichment_ids
    assert executions.wait(executions.named(MACHINE, again))["status"] == "SUCCEEDED"
    [event] = workflow_clients.store.get_events("wt", ["t2"])
    assert event.enrichment_status == "enriched"
