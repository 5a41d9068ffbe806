"""query_step: one state of engram-query: the loop (init, ask, fulfil, force, fallback, finish, fail) and
research mode (plan, gather, evaluate, synthesize)."""

from __future__ import annotations

from typing import Any, Literal

from aws_lambda_powertools.utilities.typing import LambdaContext
from pydantic import ConfigDict, Field

from engram.app.compose import get_clients
from engram.observability import logger, metrics, tracer
from engram.query import loop, research


class Step(loop.LoopState):
    model_config = ConfigDict(extra="ignore")
    action: Literal["init", "ask", "fulfil", "force", "fallback", "finish", "fail", "plan", "gather", "evaluate",
                    "synthesize"]
    error: dict[str, Any] = Field(default_factory=dict)
    remaining_iterations: int = 0


_LOOP = {"init": loop.init, "ask": loop.ask, "fulfil": loop.fulfil, "force": loop.force}
_RESEARCH = {"plan": research.plan, "gather": research.gather, "evaluate": research.evaluate,
             "synthesize": research.synthesize}


@logger.inject_lambda_context(correlation_id_path="correlation_id")
@metrics.log_metrics
@tracer.capture_lambda_handler
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    step = Step.model_validate(event)
    clients = get_clients()
    if step.action == "fail":  # the query is marked failed; no heuristics needed
        return loop.fail(clients, step.world_id, step.query_id, step.error).model_dump(mode="json")
    world = clients.world(step.world_id)  # the world's config read once for the whole step
    if step.action in _RESEARCH:
        state = research.ResearchState(world_id=step.world_id, query_id=step.query_id, iteration=step.iteration,
                                       remaining_iterations=step.remaining_iterations)
        return _RESEARCH[step.action](clients, world, state).model_dump(mode="json")
    loop_state = loop.LoopState.model_validate(step.model_dump(include=set(loop.LoopState.model_fields)))
    if step.action == "finish":
        return loop.finish(clients, loop_state).model_dump(mode="json")
    if step.action == "fallback":
        return loop.fallback(clients, world, loop_state, step.error).model_dump(mode="json")
    return _LOOP[step.action](clients, world, loop_state).model_dump(mode="json")
