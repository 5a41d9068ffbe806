"""A Workflows fake that records what was started, and can fail (for tests of the domain without state machines).
The steps themselves run in process through engram.app.inline.InlineWorkflows."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engram.model.steps import ConsolidationRun


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

    def consolidation(self, world_id: str, execution_id: str) -> ConsolidationRun:
        return ConsolidationRun(world_id=world_id, execution_id=execution_id, status="running")
