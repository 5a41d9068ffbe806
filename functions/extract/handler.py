"""extract: the extract, index and mark_failed steps of engram-enrichment."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from aws_lambda_powertools.utilities.typing import LambdaContext
from pydantic import Field, TypeAdapter

from engram.app.compose import get_clients
from engram.enrichment import extract as extraction
from engram.enrichment import indexing
from engram.model.steps import Batch, Extracted, Indexed, MarkedFailed
from engram.observability import logger, metrics, tracer
from engram.ports.clients import Clients


class Extract(Batch):
    action: Literal["extract"]


class Index(Batch):
    action: Literal["index"]


class MarkFailed(Batch):
    action: Literal["mark_failed"]
    error: dict[str, Any] = Field(default_factory=dict)


Step = TypeAdapter(Annotated[Extract | Index | MarkFailed, Field(discriminator="action")])


@logger.inject_lambda_context(correlation_id_path="correlation_id")
@metrics.log_metrics
@tracer.capture_lambda_handler
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    step = Step.validate_python(event)
    return run_step(get_clients(), step).model_dump(mode="json")


def run_step(clients: Clients, step: Extract | Index | MarkFailed) -> Extracted | Indexed | MarkedFailed:
    """One step: the World resolved once where the use case reads it (extraction), one use case called."""
    match step:
        case Extract():
            counts = extraction.extract_events(clients, clients.world(step.world_id), step.event_ids)
            return Extracted.model_validate({**step.ids(), **counts})
        case Index():
            indexed = indexing.index_pending(clients, step.world_id, step.event_ids)
            return Indexed.model_validate({**step.ids(), "indexed": indexed})
        case MarkFailed():
            marked = indexing.mark_failed(clients, step.world_id, step.event_ids, step.error)
            return MarkedFailed.model_validate({**step.ids(), **marked})
