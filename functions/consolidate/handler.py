"""consolidate: the steps of the engram-consolidation state machine (plan, scope, finish)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from aws_lambda_powertools.utilities.typing import LambdaContext
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from engram.app.compose import get_clients
from engram.consolidation import run as consolidation
from engram.model.steps import RunTotals
from engram.observability import logger, metrics, tracer
from engram.ports.clients import Clients


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
    return run_step(get_clients(), step).model_dump(mode="json")


def run_step(clients: Clients, step: PlanStep | ScopeStep | FinishStep
             ) -> consolidation.Plan | consolidation.ScopeResult | RunTotals:
    """One step: the World resolved once where the step has one (a run over every world has none), one use
    case called."""
    match step:
        case PlanStep():
            return consolidation.plan(clients, clients.world(step.world_id) if step.world_id else None)
        case ScopeStep():  # the step is the scope it names
            return consolidation.consolidate_scope(clients, clients.world(step.world_id), step)
        case FinishStep():
            return RunTotals.model_validate(consolidation.finish_run(clients, step.run_id, step.results, step.upkeep))
