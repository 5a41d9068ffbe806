"""extract: the extract, index and mark_failed steps of engram-enrichment."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from aws_lambda_powertools.utilities.typing import LambdaContext
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from engram.app.compose import get_clients
from engram.enrichment import extract as extraction
from engram.enrichment import indexing
from engram.observability import logger, metrics, tracer


class _Batch(BaseModel):
    model_config = ConfigDict(extra="ignore")
    world_id: str
    enrichment_id: str | None = None
    event_ids: list[str]


class Extract(_Batch):
    action: Literal["extract"]


class Index(_Batch):
    action: Literal["index"]


class MarkFailed(_Batch):
    action: Literal["mark_failed"]
    error: dict[str, Any] = Field(default_factory=dict)


Step = TypeAdapter(Annotated[Extract | Index | MarkFailed, Field(discriminator="action")])


@logger.inject_lambda_context(correlation_id_path="correlation_id")
@metrics.log_metrics
@tracer.capture_lambda_handler
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    step = Step.validate_python(event)
    clients = get_clients()
    ids = {"world_id": step.world_id, "enrichment_id": step.enrichment_id, "event_ids": step.event_ids}
    if isinstance(step, Extract):
        return {**ids, **extraction.extract_events(clients, clients.world(step.world_id), step.event_ids)}
    if isinstance(step, Index):
        return {**ids, "indexed": indexing.index_pending(clients, step.world_id, step.event_ids)}
    return {**ids, **indexing.mark_failed(clients, step.world_id, step.event_ids, step.error)}
