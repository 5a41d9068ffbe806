"""What every route module shares: the two routers, the path and query parameters' types, and how a route reads
the world it serves."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Path, Query
from pydantic import BaseModel

from engram.app.compose import get_clients
from engram.model.world import World
from engram.ports.clients import Clients

ID = r"^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$"
WorldId = Annotated[str, Path(pattern=ID, description="the world (tenant) id")]
Id = Annotated[str, Path(pattern=ID)]
MENTION_ID = r"^men_[0-9a-f]{32}$"
# A user's view: given, only that user's own memories, the edges they made and the world's; absent, the world's.
UserId = Annotated[str | None, Query(pattern=ID, description="read as this user: only the user's own memories and "
                                                             "the relationships they made, and the world's")]

# A past time to read memory as of (ISO 8601; without an offset, UTC): the facts true then, what had happened by then.
AsOf = Annotated[datetime | None, Query(description="read memory as it stood at this time (ISO 8601, UTC without an "
                                                    "offset): the facts true then, superseded since or not, and "
                                                    "only what had happened by then")]

ingest_router = Router()
api_router = Router()


def at(world_id: str) -> tuple[Clients, World]:
    """The clients, and the world as this request sees it: its config read once, for the whole request."""
    clients = get_clients()
    return clients, clients.world(world_id)


def json_response(status: int, model: BaseModel | dict[str, Any]) -> Response[Any]:
    # Powertools validates the body against the route's Response[T] annotation, then serializes it.
    return Response(status_code=status, content_type="application/json", body=model)
