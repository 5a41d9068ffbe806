"""A Workflows fake that records what was started (for tests of the domain without state machines)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


class RecordingWorkflows:
    def __init__(self, *, fail: bool = False) -> None:
        self.enrichments: list[tuple[str, list[str], str]] = []
        self.queries: list[tuple[str, str]] = []
        self.consolidations: list[str | None] = []
        self.fail = fail

    def start_enrichment(self, world_id: str, event_ids: Sequence[str], enrichment_id: str) -> str:
        if self.fail:
            raise RuntimeError("workflow service unavailable")
        self.enrichments.append((world_id, list(event_ids), enrichment_id))
        return f"exec-{enrichment_id}"

    def run_query(self, world_id: str, query_id: str) -> dict[str, Any]:
        self.queries.append((world_id, query_id))
        return {"world_id": world_id, "query_id": query_id}

    def start_query(self, world_id: str, query_id: str) -> str:
        self.queries.append((world_id, query_id))
        return f"exec-{query_id}"

    def start_consolidation(self, world_id: str | None) -> str:
        self.consolidations.append(world_id)
        return "exec-consolidation"


class InProcessWorkflows(RecordingWorkflows):
    """Runs the loop's steps directly, in the order engram-query runs them: for route tests that need
    an answer without the state machine (the state machine itself is covered by tests/workflow)."""

    def __init__(self) -> None:
        super().__init__()
        self.clients: Any = None

    def run_query(self, world_id: str, query_id: str) -> dict[str, Any]:
        from engram.query import loop

        c = self.clients
        world = c.world(world_id)  # resolved once, as each step of engram-query does
        state = loop.ask(c, world, loop.init(c, world, loop.LoopState(world_id=world_id, query_id=query_id)))
        # engram-query's Choice: an answer finishes, more info is fetched while requests remain, anything else
        # (requests used up, or every request rejected) is forced to an answer.
        while state.outcome == "needs_more_info" and state.remaining_info_requests > 0:
            state = loop.ask(c, world, loop.fulfil(c, world, state))
        if state.outcome != "answer":
            state = loop.force(c, world, state)
        return loop.finish(c, state).model_dump()

    def start_query(self, world_id: str, query_id: str) -> str:
        """A research query runs here, to the end, in the order engram-query runs it; an async one is recorded."""
        started = super().start_query(world_id, query_id)
        query = self.clients.store.get_query(world_id, query_id) if self.clients is not None else None
        if query is not None and query.mode == "research":
            run_research(self.clients, world_id, query_id)
        return started


def run_research(clients: Any, world_id: str, query_id: str) -> dict[str, Any]:
    """What engram-query does for a research query: Init, Plan, (Gather, Evaluate)+ while the completeness
    check asks for more and rounds remain, Synthesize, Finish."""
    from engram.query import loop, research

    world = clients.world(world_id)
    state = research.evaluate(clients, world, research.gather(clients, world, research.plan(
        clients, world, loop.init(clients, world, loop.LoopState(world_id=world_id, query_id=query_id)))))
    while state.outcome == "incomplete" and state.remaining_iterations > 0:
        state = research.evaluate(clients, world, research.gather(clients, world, state))
    state = research.synthesize(clients, world, state)
    finished = loop.finish(clients, loop.LoopState(world_id=world_id, query_id=query_id, iteration=state.iteration))
    return finished.model_dump()
