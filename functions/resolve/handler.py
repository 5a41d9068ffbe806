"""resolve: link the mentions of an accepted batch to canonical entities (engram-enrichment)."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from engram.app.compose import get_clients
from engram.enrichment.resolve import resolve_events
from engram.model.steps import Batch, Resolved
from engram.observability import logger, metrics, tracer
from engram.ports.clients import Clients


@logger.inject_lambda_context(correlation_id_path="correlation_id")
@metrics.log_metrics
@tracer.capture_lambda_handler
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    batch = Batch.model_validate(event)
    return run_step(get_clients(), batch).model_dump(mode="json")


def run_step(clients: Clients, batch: Batch) -> Resolved:
    """The Resolve step: the World resolved once, the batch's mentions resolved."""
    counts = resolve_events(clients, clients.world(batch.world_id), batch.event_ids)
    return Resolved.model_validate({**batch.ids(), **counts})
