"""query_step: one state of the engram-query loop (init, ask, fulfil, force, fallback, finish, fail)."""

from __future__ import annotations

from typing import Any, Literal

from aws_lambda_powertools.utilities.typing import LambdaContext
from pydantic import ConfigDict, Field

from engram.observability import logger, metrics, tracer
from engram.query import steps
from engram.service import get_clients


class Step(steps.LoopState):
    model_config = ConfigDict(extra="ignore")
    action: Literal["init", "ask", "fulfil", "force", "fallback", "finish", "fail"]
    error: dict[str, Any] = Field(default_factory=dict)


_STEPS = {"init": steps.init, "ask": steps.ask, "fulfil": steps.fulfil, "force": steps.force}


@logger.inject_lambda_context(correlation_id_path="correlation_id")
@metrics.log_metrics
@tracer.capture_lambda_handler
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    step = Step.model_validate(event)
    state = steps.LoopState.model_validate(step.model_dump(include=set(steps.LoopState.model_fields)))
    clients = get_clients()
    if step.action == "finish":
        return steps.finish(clients, state).model_dump(mode="json")
    if step.action == "fail":
        return steps.fail(clients, step.world_id, step.query_id, step.error).model_dump(mode="json")
    if step.action == "fallback":
        return steps.fallback(clients, state, step.error).model_dump(mode="json")
    return _STEPS[step.action](clients, state).model_dump(mode="json")
