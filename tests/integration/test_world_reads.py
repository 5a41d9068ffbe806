"""Each step of a state machine, called as Lambda calls it, reads its world's config once: the handler resolves
the World and passes it down, so no part of a step reads the config again (before, a query step read it up to
three times, and `fulfil` once per entity it expanded)."""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Iterator
from typing import Any

import pytest

from engram.app.compose import set_clients
from engram.local.server import LambdaContext
from engram.model.events import IngestRequest
from engram.model.queries import QueryRequest
from engram.ports.clients import Clients
from engram.query.submit import submit_query

pytestmark = pytest.mark.integration

WORLD = "w-reads"
TURNS = ["I live in Porto and I work at Olivo Labs.", "My manager is Rui Costa.", "Rui Costa lives in Braga.",
         "I prefer tea over coffee."]


class CountingStore:
    """The real store, counting the reads of a world's config."""

    def __init__(self, store: Any) -> None:
        self._store, self.config_reads = store, 0

    def world_config(self, world_id: str) -> dict[str, Any]:
        self.config_reads += 1
        return self._store.world_config(world_id)  # type: ignore[no-any-return]

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)


@pytest.fixture(scope="module")
def counted(clients: Clients) -> Iterator[tuple[Clients, CountingStore]]:
    store = CountingStore(clients.store)
    counting = dataclasses.replace(clients, store=store)  # type: ignore[arg-type]
    # A world with overrides: the heuristics in force are the defaults with these.
    counting.store.set_world_config(WORLD, {"heuristics": {"max_info_requests": 2, "capability_max_results": 5}})
    set_clients(counting)
    yield counting, store
    set_clients(None)


def _step(function: str, event: dict[str, Any], store: CountingStore) -> tuple[dict[str, Any], int]:
    """Call a function's handler as the state machine does; returns its output and the config reads it made."""
    before = store.config_reads
    output = importlib.import_module(f"functions.{function}.handler").handler(event, LambdaContext(function))
    return output, store.config_reads - before


def test_every_enrichment_and_query_step_reads_the_worlds_config_once(
        counted: tuple[Clients, CountingStore]) -> None:
    clients, store = counted
    from engram.enrichment.ingest import ingest_events

    batch = IngestRequest.model_validate({"events": [
        {"event_id": f"reads-{i}", "user_id": "dana", "conversation_id": "c1", "role": "user", "content": text}
        for i, text in enumerate(TURNS)]})
    ids = [e.event_id for e in ingest_events(clients, clients.world(WORLD), batch).events]
    batch_event = {"world_id": WORLD, "enrichment_id": "enr_reads", "event_ids": ids}
    _, reads = _step("resolve", batch_event, store)
    assert reads == 1
    _, reads = _step("extract", {**batch_event, "action": "extract"}, store)
    assert reads == 1

    query = submit_query(clients, WORLD, QueryRequest(user_id="dana", question="Who is my manager and where does he live?",
                                                      mode="async"))
    state, reads = _step("query_step", {"action": "init", "world_id": WORLD, "query_id": query.query_id}, store)
    assert reads == 1
    reads_by_step = []

    def run(action: str, state: dict[str, Any], **extra: Any) -> dict[str, Any]:
        output, reads = _step("query_step", {**state, "action": action, **extra}, store)
        reads_by_step.append((action, reads))
        return output

    state = run("ask", state)  # engram-query's order: ask, (fulfil, ask)* while requests remain, else force
    while state["outcome"] == "needs_more_info" and state["remaining_info_requests"] > 0:
        state = run("ask", run("fulfil", state))
    if state["outcome"] != "answer":
        state = run("force", state)
    assert reads_by_step and all(reads == 1 for _, reads in reads_by_step), reads_by_step
    assert state["outcome"] == "answer"
    final, reads = _step("query_step", {**state, "action": "finish"}, store)
    assert final["status"] == "completed" and reads <= 1
    # The model stayed down: the answer comes from retrieval, its step reading the config once too.
    other = submit_query(clients, WORLD, QueryRequest(user_id="dana", question="Where do I live?", mode="async"))
    state, _ = _step("query_step", {"action": "init", "world_id": WORLD, "query_id": other.query_id}, store)
    answered, reads = _step("query_step", {**state, "action": "fallback", "error": {"Error": "LLMUnavailable"}}, store)
    assert answered["outcome"] == "answer" and reads == 1
