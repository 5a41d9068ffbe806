"""engram-enrichment under faults, as synthesized and run by moto over the real parts: the keyword index
down (the events and their memories kept, the index work kept in the outbox and done by the sweep's run once
the index is back), the database dropping the Extract step's connection mid-write (retried by the state
machine, no fact stored or reinforced twice), a model that stays down (the events marked failed, then
enriched by the sweep once it is back)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import timedelta

import pytest
from osmem_server import OsmemServer

from engram.adapters.opensearch_index import OpenSearchIndex
from engram.enrichment.ingest import ingest_events, sweep_stalled
from engram.enrichment.resolve import user_entity
from engram.model.common import utcnow
from engram.model.events import IngestRequest
from engram.ports import LLM, KeywordIndex
from engram.ports.clients import Clients
from tests.db_faults import drop_connection_during
from tests.fakes.llm import ScriptedLLM
from tests.workflow.executions import Executions

pytestmark = pytest.mark.workflow
MACHINE = "engram-enrichment"


def _ingest(clients: Clients, world: str, *texts: str) -> tuple[str, list[str]]:
    ids = [f"{world}-{i}" for i in range(len(texts))]
    response = ingest_events(clients, clients.world(world), IngestRequest.model_validate({"events": [
        {"event_id": eid, "user_id": "omar", "conversation_id": "c1", "role": "user", "content": text}
        for eid, text in zip(ids, texts, strict=True)]}))
    assert response.enrichment_id is not None and response.accepted == len(texts)
    return response.enrichment_id, ids


def _sweep_failed(clients: Clients, world: str) -> str:
    """`engram enrich --pending --failed`, past the grace period."""
    result = sweep_stalled(clients, clients.world(world), include_failed=True, now=utcnow() + timedelta(hours=1))
    [enrichment_id] = result.enrichment_ids
    return enrichment_id


@pytest.fixture
def swap_index(workflow_clients: Clients) -> Iterator[Callable[[KeywordIndex], None]]:
    original = workflow_clients.index

    def swap(index: KeywordIndex) -> None:
        workflow_clients.index = index

    yield swap
    workflow_clients.index = original


def test_with_the_index_down_the_events_and_memories_are_kept_and_indexed_once_it_is_back(
        workflow_clients: Clients, executions: Executions, swap_index: Callable[[KeywordIndex], None]) -> None:
    server = OsmemServer.start()
    swap_index(OpenSearchIndex(server.url, index_prefix="faults"))
    address = server.url.removeprefix("http://")
    server.close()  # the index goes down before the batch arrives
    world = "wf-index-down"
    enrichment_id, ids = _ingest(workflow_clients, world, "My name is Omar and I live in Cairo.",
                                 "I work at Nile Labs as an engineer.")

    arn = executions.named(MACHINE, enrichment_id)
    assert executions.wait(arn)["status"] == "FAILED"
    assert executions.states_entered(arn) == ["Resolve", "Extract", "Index", "MarkFailed", "EnrichmentFailed"]
    events = workflow_clients.store.get_events(world, ids)
    assert [e.enrichment_status for e in events] == ["failed", "failed"]
    assert all((e.enrichment_error or "").startswith("TransientStoreError") for e in events)
    omar = user_entity(workflow_clients, world, "omar")
    assert ("lives_in", "Cairo") in {(f.predicate, f.object_value)
                                     for f in workflow_clients.store.find_facts(world, omar.entity_id)}
    assert set(ids) <= {doc_id for *_, doc_id, _op in workflow_clients.store.pending_index_ops(world, 100)}

    back = OsmemServer.start(addr=address)  # the index is back, empty, at the same address
    try:
        retry = _sweep_failed(workflow_clients, world)
        assert executions.wait(executions.named(MACHINE, retry))["status"] == "SUCCEEDED"
        assert {e.enrichment_status for e in workflow_clients.store.get_events(world, ids)} == {"enriched"}
        assert workflow_clients.store.pending_index_ops(world, 100) == []
        assert {ids[0]} <= {h.doc_id for h in workflow_clients.index.search(world, "Cairo")}
        assert {ids[1]} <= {h.doc_id for h in workflow_clients.index.search(world, '"Nile Labs"')}
    finally:
        back.close()


def test_a_connection_dropped_during_extract_is_retried_and_stores_each_fact_once(
        workflow_clients: Clients, executions: Executions, pg_url: str) -> None:
    world = "wf-db-drop"

    def enrich() -> tuple[str, list[str]]:
        enrichment_id, ids = _ingest(workflow_clients, world, "My name is Omar and I live in Cairo.",
                                     "I work at Nile Labs as an engineer.", "I love sailing on the Nile.")
        executions.wait(executions.named(MACHINE, enrichment_id))
        return enrichment_id, ids

    # The signals are written last, after every memory of the batch: the drop comes after the facts are stored,
    # so the retried step meets its own facts and must neither store nor reinforce them again.
    (enrichment_id, ids), dropped = drop_connection_during(pg_url, "signals", "SHARE ROW EXCLUSIVE", enrich)

    assert dropped == 1
    arn = executions.named(MACHINE, enrichment_id)
    assert executions.wait(arn)["status"] == "SUCCEEDED"
    assert executions.states_entered(arn) == ["Resolve", "Extract", "Index", "Enriched"]
    failures = [e["lambdaFunctionFailedEventDetails"] for e in executions.history(arn)
                if e["type"] == "LambdaFunctionFailed"]
    assert [f["error"] for f in failures] == ["TransientStoreError"]
    assert "database is unreachable" in failures[0]["cause"] and "AdminShutdown" not in failures[0]["cause"]
    assert {e.enrichment_status for e in workflow_clients.store.get_events(world, ids)} == {"enriched"}
    omar = user_entity(workflow_clients, world, "omar")
    facts = workflow_clients.store.find_facts(world, omar.entity_id)
    triples = [(f.predicate, f.object_value) for f in facts]
    assert ("lives_in", "Cairo") in triples and len(triples) == len(set(triples))
    assert all(f.reinforcement_count == 0 and len(f.source_event_ids) == 1 for f in facts)
    episodes = workflow_clients.store.user_memories(world, "omar", "episodic", 100)
    assert len({e.memory_id for e in episodes}) == len(episodes)


def test_a_model_that_stays_down_leaves_the_events_failed_and_the_sweep_enriches_them_once_it_is_back(
        workflow_clients: Clients, executions: Executions, install_llm: Callable[[LLM], None]) -> None:
    # The failing run itself (retries, MarkFailed, the event kept) is test_enrichment_workflow's; here, the way back.
    install_llm(ScriptedLLM(unavailable=["extract"]))
    world = "wf-model-down"
    enrichment_id, ids = _ingest(workflow_clients, world, "My name is Omar and I live in Cairo.")
    assert executions.wait(executions.named(MACHINE, enrichment_id))["status"] == "FAILED"
    assert workflow_clients.store.get_events(world, ids)[0].enrichment_status == "failed"

    install_llm(ScriptedLLM())  # the provider is back
    retry = _sweep_failed(workflow_clients, world)

    assert executions.wait(executions.named(MACHINE, retry))["status"] == "SUCCEEDED"
    [event] = workflow_clients.store.get_events(world, ids)
    assert event.enrichment_status == "enriched" and event.enrichment_error is None
    omar = user_entity(workflow_clients, world, "omar")
    assert [(f.predicate, f.object_value) for f in workflow_clients.store.find_facts(world, omar.entity_id, "lives_in")] \
        == [("lives_in", "Cairo")]
