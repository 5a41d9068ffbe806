"""What the enrichment steps and a consolidation run's finish hand back to their state machine.

The use cases count in plain dicts; these models are the JSON contract their handlers return: every count named
(0 when nothing happened), so a count the contract does not name fails at once instead of silently vanishing.
The other steps return their use case's own model (a consolidation Plan or ScopeResult, a query loop state)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from engram.model.common import Frozen


class Batch(BaseModel):
    """An accepted batch as engram-enrichment carries it from step to step; each step hands these fields on."""

    model_config = ConfigDict(extra="ignore")
    world_id: str
    enrichment_id: str | None = None
    event_ids: list[str]

    def ids(self) -> dict[str, Any]:
        """The batch's own fields, without what a step's input adds (its action, the correlation id)."""
        return {"world_id": self.world_id, "enrichment_id": self.enrichment_id, "event_ids": list(self.event_ids)}


class _BatchDone(Frozen):
    world_id: str
    enrichment_id: str | None = None
    event_ids: list[str]


class Resolved(_BatchDone):
    """The Resolve step: the batch's new mentions and how each was resolved."""

    mentions: int = 0
    resolved: int = 0
    created: int = 0
    disambiguation: int = 0
    awaiting_coreference: int = 0


class Extracted(_BatchDone):
    """The Extract step: what the batch's extraction windows stored, and the model calls they made."""

    windows: int = 0
    facts_created: int = 0
    facts_reinforced: int = 0
    conflicts: int = 0
    conflicts_open: int = 0
    conflict_checks_rejected: int = 0
    coreferences: int = 0
    episodes: int = 0
    failed_events: int = 0
    model_calls: int = 0
    model_requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    signals: int = 0
    inflections: int = 0
    interventions: int = 0


class Indexed(_BatchDone):
    """The Index step: the outbox operations applied to the keyword index."""

    indexed: int


class MarkedFailed(_BatchDone):
    """The MarkFailed step: the batch's events are kept, marked failed for a later retry."""

    status: Literal["failed"] = "failed"


class RunTotals(Frozen):
    """The FinishRun step: a consolidation run's counts over every scope and world it touched."""

    run_id: str
    scopes: int = 0
    summaries: int = 0
    confirmed: int = 0
    procedures: int = 0
    conflicts_settled: int = 0
    archived: int = 0
    failed: int = 0
    model_calls: int = 0


class ConsolidationRun(Frozen):
    """A started consolidation as its caller follows it: still running, or what the run did (or why it failed)."""

    world_id: str
    execution_id: str
    status: Literal["running", "succeeded", "failed"]
    totals: RunTotals | None = None  # once succeeded
    error: str | None = None  # once failed
