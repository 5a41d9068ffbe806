"""api: every HTTP route but ingest (queries, search, entities, conflicts, memories, ops)."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from engram.http.app import build_resolver, resolve
from engram.http.routes import api_router, ingest_router
from engram.observability import logger, metrics, tracer

# The ingest route too: API Gateway sends it to the ingest function, but this function serves the OpenAPI
# document and Swagger UI, which describe the whole API.
app = build_resolver(api_router, ingest_router)


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_HTTP)
@metrics.log_metrics
@tracer.capture_lambda_handler
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return resolve(app, event, context)
