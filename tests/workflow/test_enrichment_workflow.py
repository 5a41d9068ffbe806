"""engram-enrichment as synthesized: Resolve, Extract, Index, and MarkFailed when a step keeps failing."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest

from engram.enrichment.ingest import ingest_events
from engram.model.events import IngestRequest
from engram.ports import LLM
from engram.ports.clients import Clients
from tests.fakes.llm import ScriptedLLM
from tests.workflow.executions import Executions

pytestmark = pytest.mark.workflow
T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
MACHINE = "engram-enrichment"


def _ingest(clients: Clients, world: str, *turns: tuple[str, str]) -> str:
    request = IngestRequest.model_validate({"events": [
        {"event_id": eid, "user_id": "dana", "conversation_id": "c1", "role": "user", "content": text,
         "occurred_at": (T0 + timedelta(minutes=i)).isoformat()} for i, (eid, text) in enumerate(turns)]})
    response = ingest_events(clients, clients.world(world), request)
    assert response.enrichment_id is not None
    return response.enrichment_id


def test_an_ingested_batch_is_resolved_extracted_and_indexed(workflow_clients: Clients,
                                                             executions: Executions) -> None:
    enrichment_id = _ingest(workflow_clients, "we", ("e1", "Hi! My name is Dana and I live in Lisbon."),
                            ("e2", "I work at Acme Robotics as a firmware engineer."))
    arn = executions.named(MACHINE, enrichment_id)

    assert executions.wait(arn)["status"] == "SUCCEEDED"
    assert executions.states_entered(arn) == ["Resolve", "Extract", "Index", "Enriched"]
    store = workflow_clients.store
    assert {e.enrichment_status for e in store.get_events("we", ["e1", "e2"])} == {"enriched"}
    dana = store.find_entity_by_name("we", "dana")
    assert dana is not None
    facts = {(f.predicate, f.object_value) for f in store.find_facts("we", dana.entity_id)}
    assert ("lives_in", "Lisbon") in facts
    assert "e1" in {h.doc_id for h in workflow_clients.index.search("we", "Lisbon")}


def test_an_extraction_that_keeps_failing_is_retried_then_marks_the_events_failed(
        workflow_clients: Clients, executions: Executions, install_llm: Callable[[LLM], None]) -> None:
    llm = ScriptedLLM(unavailable=["extract"])
    install_llm(llm)
    enrichment_id = _ingest(workflow_clients, "wf", ("f1", "My name is Omar and I live in Cairo."))
    arn = executions.named(MACHINE, enrichment_id)

    described = executions.wait(arn)
    assert described["status"] == "FAILED" and described["error"] == "EnrichmentFailed"
    assert executions.states_entered(arn) == ["Resolve", "Extract", "MarkFailed", "EnrichmentFailed"]
    assert len(llm.calls_to("extract")) == 4  # the first attempt and the Retry's three
    [event] = workflow_clients.store.get_events("wf", ["f1"])
    assert event.content == "My name is Omar and I live in Cairo."
    assert event.enrichment_status == "failed"
    assert event.enrichment_error is not None and event.enrichment_error.startswith("LLMUnavailable")
