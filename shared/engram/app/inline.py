"""The Workflows port in the caller's thread, for benchmarks and tests: each state machine's steps called one after
another in the order the state machine runs them (infra/constructs/workflows.py), each step resolving its World
once, as its handler does per invocation. No retries and no catches: a step's error is the caller's."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from functools import partial
from typing import Any, Protocol

from engram.consolidation import run as consolidation
from engram.enrichment.extract import ExtractPorts, ExtractStore, extract_events
from engram.enrichment.indexing import IndexingPorts, IndexingStore, index_pending
from engram.enrichment.resolve import MentionPorts, resolve_events
from engram.errors import ConfigurationError, NotFound
from engram.model.steps import ConsolidationRun, RunTotals
from engram.model.world import World
from engram.ports.clients import Clients
from engram.query import loop, research


class EnrichStore(ExtractStore, IndexingStore, Protocol):
    """What the enrichment steps read and write together."""


class EnrichPorts(MentionPorts, ExtractPorts, IndexingPorts, Protocol):
    """The ports of the enrichment steps (Resolve, Extract, Index), and the World each step resolves: the
    `Clients` bundle, or the unit tests' in-memory fakes."""

    @property
    def store(self) -> EnrichStore: ...
    def world(self, world_id: str) -> World: ...


def enrich(clients: EnrichPorts, world_id: str, event_ids: Sequence[str], *,
           now: datetime | None = None) -> dict[str, int]:
    """engram-enrichment: Resolve, Extract, Index. Returns the Extract step's counts. `now` is the time the
    extraction takes as now (a test or a benchmark replaying the past); the state machine's is the clock's."""
    resolve_events(clients, clients.world(world_id), event_ids)
    counts = extract_events(clients, clients.world(world_id), event_ids, now=now)
    index_pending(clients, world_id, event_ids)
    return counts


def run_query(clients: Clients, world_id: str, query_id: str) -> dict[str, Any]:
    """engram-query to the end; returns Finish's output. Init, then research mode, or the answer loop: Ask,
    (Fulfil, Ask)* while the model asks for more and requests remain, Force unless it answered, Finish."""
    world = partial(clients.world, world_id)  # read again per step, as each step's invocation does
    state = loop.init(clients, world(), loop.LoopState(world_id=world_id, query_id=query_id))
    if state.mode == "research":
        return _research(clients, state)
    state = loop.ask(clients, world(), state)
    while state.outcome == "needs_more_info" and state.remaining_info_requests > 0:
        state = loop.ask(clients, world(), loop.fulfil(clients, world(), state))
    if state.outcome != "answer":  # out of requests, or every request rejected
        state = loop.force(clients, world(), state)
    return loop.finish(clients, state).model_dump(mode="json")


def _research(clients: Clients, started: loop.LoopState) -> dict[str, Any]:
    """Research mode after Init: Plan, (Gather, Evaluate)+ while the completeness check finds it incomplete and
    rounds remain, Synthesize, Finish."""
    world = partial(clients.world, started.world_id)
    state = research.evaluate(clients, world(), research.gather(clients, world(), research.plan(
        clients, world(), started)))
    while state.outcome == "incomplete" and state.remaining_iterations > 0:
        state = research.evaluate(clients, world(), research.gather(clients, world(), state))
    state = research.synthesize(clients, world(), state)
    finish = loop.LoopState(world_id=state.world_id, query_id=state.query_id, iteration=state.iteration)
    return loop.finish(clients, finish).model_dump(mode="json")


def consolidate(clients: Clients, world_id: str | None, *,
                now: datetime | None = None) -> tuple[consolidation.Plan, dict[str, Any]]:
    """engram-consolidation: Plan, a summary per scope, then each world's upkeep, FinishRun. Returns the plan and
    the run's totals. `now` is the plan's time (every scope writes as of it); the state machine's is the clock's."""
    run = consolidation.plan(clients, clients.world(world_id) if world_id else None, now=now)
    results = [consolidation.consolidate_scope(clients, clients.world(s.world_id), s) for s in run.scopes]
    upkeep = [consolidation.consolidate_scope(clients, clients.world(s.world_id), s) for s in run.worlds]
    return run, consolidation.finish_run(clients, run.run_id, results, upkeep)


class InlineWorkflows:
    """The Workflows port without a workflow engine. A query runs to the end when asked or started; an
    enrichment or a consolidation runs when started, unless `background` is False: then the start is only
    acknowledged and the caller drives those steps itself (as the test suites do)."""

    def __init__(self, clients: Clients | None = None, *, background: bool = True) -> None:
        self.clients = clients  # the Clients holding this adapter, set once they are built
        self.background = background
        self.consolidations: dict[str, ConsolidationRun] = {}  # what each consolidation started here did

    def _clients(self) -> Clients:
        if self.clients is None:
            raise ConfigurationError("InlineWorkflows runs the steps with its clients: set them first")
        return self.clients

    def start_enrichment(self, world_id: str, event_ids: Sequence[str], enrichment_id: str) -> str:
        if self.background:
            enrich(self._clients(), world_id, event_ids)
        return f"inline-{enrichment_id}"

    def run_query(self, world_id: str, query_id: str) -> dict[str, Any]:
        return run_query(self._clients(), world_id, query_id)

    def start_query(self, world_id: str, query_id: str) -> str:
        run_query(self._clients(), world_id, query_id)
        return f"inline-{query_id}"

    def start_consolidation(self, world_id: str | None) -> str:
        if not self.background:
            return "inline-consolidation"
        run, totals = consolidate(self._clients(), world_id)
        execution_id = f"inline-{run.run_id}"
        if world_id is not None:
            self.consolidations[execution_id] = ConsolidationRun(
                world_id=world_id, execution_id=execution_id, status="succeeded", totals=RunTotals(**totals))
        return execution_id

    def consolidation(self, world_id: str, execution_id: str) -> ConsolidationRun:
        found = self.consolidations.get(execution_id)
        if found is None or found.world_id != world_id:
            raise NotFound(f"no consolidation {execution_id!r} in world {world_id!r}")
        return found
