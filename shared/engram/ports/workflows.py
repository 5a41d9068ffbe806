"""The workflows port: the state machines (Step Functions on AWS, the same definitions under the local runtime)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, Protocol

from engram.model.steps import ConsolidationRun


class Workflows(Protocol):
    def start_enrichment(self, world_id: str, event_ids: Sequence[str], enrichment_id: str) -> str:
        """Start one enrichment execution for an accepted batch; returns the execution id."""
        ...
    def run_query(self, world_id: str, query_id: str) -> dict[str, Any]:
        """Run the query state machine to completion; returns its output."""
        ...
    def start_query(self, world_id: str, query_id: str) -> str: ...
    def start_consolidation(self, world_id: str | None) -> str: ...
    def consolidation(self, world_id: str, execution_id: str) -> ConsolidationRun:
        """A consolidation `start_consolidation(world_id)` started: running, or its totals; NotFound otherwise."""
        ...


QueryOutcome = Literal["answer", "needs_more_info"]
