"""query_step: one state of engram-query: the loop (init, ask, fulfil, force, fallback, finish, fail) and
research mode (plan, gather, evaluate, synthesize)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from aws_lambda_powertools.utilities.typing import LambdaContext
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from engram.app.compose import get_clients
from engram.observability import logger, metrics, tracer
from engram.ports.clients import Clients
from engram.query import loop, research


# Each step's input is the state it hands its use case (a loop or research state, with the action that routed it).
class LoopStep(loop.LoopState):
    model_config = ConfigDict(extra="ignore")
    action: Literal["init", "ask", "fulfil", "force", "finish"]


class Fallback(loop.LoopState):
    model_config = ConfigDict(extra="ignore")
    action: Literal["fallback"]
    error: dict[str, Any] = Field(default_factory=dict)


class Fail(BaseModel):
    model_config = ConfigDict(extra="ignore")
    action: Literal["fail"]
    world_id: str
    query_id: str
    error: dict[str, Any] = Field(default_factory=dict)


class ResearchStep(research.ResearchState):
    model_config = ConfigDict(extra="ignore")
    action: Literal["plan", "gather", "evaluate", "synthesize"]


Step = TypeAdapter(Annotated[LoopStep | Fallback | Fail | ResearchStep, Field(discriminator="action")])

_LOOP = {"init": loop.init, "ask": loop.ask, "fulfil": loop.fulfil, "force": loop.force}
_RESEARCH = {"plan": research.plan, "gather": research.gather, "evaluate": research.evaluate,
             "synthesize": research.synthesize}


@logger.inject_lambda_context(correlation_id_path="correlation_id")
@metrics.log_metrics
@tracer.capture_lambda_handler
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    step = Step.validate_python(event)
    return run_step(get_clients(), step).model_dump(mode="json")


def run_step(clients: Clients, step: LoopStep | Fallback | Fail | ResearchStep
             ) -> loop.LoopState | loop.FinalState | research.ResearchState:
    """One step: the World resolved once where the use case reads it (not to finish or to mark the query
    failed), one use case called."""
    match step:
        case Fail():
            return loop.fail(clients, step.world_id, step.query_id, step.error)
        case Fallback():
            return loop.fallback(clients, clients.world(step.world_id), step, step.error)
        case ResearchStep():
            return _RESEARCH[step.action](clients, clients.world(step.world_id), step)
        case LoopStep(action="finish"):
            return loop.finish(clients, step)
        case LoopStep():
            return _LOOP[step.action](clients, clients.world(step.world_id), step)
