"""The local server's ASGI app as a synchronous httpx client, over the real handlers and the given clients."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import anyio
import httpx

from engram.app.compose import set_clients
from engram.app.inline import InlineWorkflows
from engram.ports.clients import Clients


class _Bridge(httpx.BaseTransport):
    """httpx's ASGI transport is async; route tests read better synchronously."""

    def __init__(self, transport: httpx.ASGITransport) -> None:
        self.transport = transport

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        async def call() -> httpx.Response:
            response = await self.transport.handle_async_request(request)
            body = b"".join([chunk async for chunk in response.stream])  # type: ignore[union-attr]
            return httpx.Response(response.status_code, headers=response.headers, content=body)

        return anyio.run(call)


@contextmanager
def api_client(clients: Clients) -> Iterator[httpx.Client]:
    """A client of the HTTP API whose queries run the loop's steps in process (InlineWorkflows); the enrichment
    and consolidation it starts are left to the test."""
    from engram.local.server import build_app

    clients.workflows = InlineWorkflows(clients, background=False)
    set_clients(clients)
    try:
        with httpx.Client(transport=_Bridge(httpx.ASGITransport(app=build_app())),  # type: ignore[arg-type]
                          base_url="http://engram.local") as client:
            yield client
    finally:
        set_clients(None)
