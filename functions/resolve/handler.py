"""resolve: link the mentions of an accepted batch to canonical entities (engram-enrichment)."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext
from pydantic import BaseModel, ConfigDict

from engram.app.compose import get_clients
from engram.enrichment.resolve import resolve_events
from engram.observability import logger, metrics, tracer


class Batch(BaseModel):
    model_config = ConfigDict(extra="ignore")
    world_id: str
    enrichment_id: str
    event_ids: list[str]


@logger.inject_lambda_context(correlation_id_path="correlation_id")
@metrics.log_metrics
@tracer.capture_lambda_handler
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    batch = Batch.model_validate(event)
    clients = get_clients()
    counts = resolve_events(clients, clients.world(batch.world_id), batch.event_ids)
    return {**batch.model_dump(), **counts}
