"""consolidate: the steps of the engram-consolidation state machine (plan, scope, finish)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from aws_lambda_powertools.utilities.typing import LambdaContext
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from engram.app.compose import get_clients
from engram.consolidation import run as consolidation
from engram.observability import logger, metrics, tracer


class _Step(BaseModel):
    model_config = ConfigDict(extra="ignore")
    correlation_id: str | None = None


class PlanStep(_Step):
    action: Literal["plan"]
    world_id: str | None = None


class ScopeStep(_Step, consolidation.Scope):
    action: Literal["scope"]


class FinishStep(_Step):
    action: Literal["finish"]
    run_id: str
    results: list[consolidation.ScopeResult] = Field(default_factory=list)
    upkeep: list[consolidation.ScopeResult] = Field(default_factory=list)


Step = TypeAdapter(Annotated[PlanStep | ScopeStep | FinishStep, Field(discriminator="action")])


@logger.inject_lambda_context(correlation_id_path="correlation_id")
@metrics.log_metrics
@tracer.capture_lambda_handler
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    step = Step.validate_python(event)
    clients = get_clients()
    if isinstance(step, PlanStep):
        world = clients.world(step.world_id) if step.world_id else None
        return consolidation.plan(clients, world).model_dump(mode="json")
    if isinstance(step, ScopeStep):
        scope = consolidation.Scope.model_validate(step.model_dump(include=set(consolidation.Scope.model_fields)))
        return consolidation.consolidate_scope(clients, clients.world(scope.world_id), scope).model_dump(mode="json")
    return consolidation.finish_run(clients, step.run_id, step.results, step.upkeep)
