"""The clients read a world's model spend: what the ledger recorded, by day and stage, and only that world's."""

from __future__ import annotations

from datetime import UTC, datetime

import anyio
import httpx
import pytest

from engram.app.compose import set_clients
from engram.local.server import build_app
from engram.ports import Usage
from engram.ports.clients import Clients
from engram.sdk.client import AsyncEngramClient, EngramClient
from tests.asgi import _Bridge

pytestmark = pytest.mark.integration
WORLD, OTHER = "usage-client", "usage-client-other"


def test_the_clients_read_the_worlds_spend_by_day_and_stage(clients: Clients) -> None:
    today = datetime.now(UTC).date()
    clients.store.record_usage(WORLD, today, "answer", Usage(input_tokens=900, output_tokens=100, calls=2))
    clients.store.record_usage(WORLD, today, "extract", Usage(input_tokens=400, output_tokens=50, calls=1))
    clients.store.record_usage(OTHER, today, "answer", Usage(input_tokens=7_000, output_tokens=7, calls=5))
    set_clients(clients)
    try:
        app = build_app()
        with EngramClient("http://engram.local", transport=_Bridge(httpx.ASGITransport(app=app))  # type: ignore[arg-type]
                          ) as client:
            report = client.usage(WORLD, days=1)

        async def run() -> int:
            async with AsyncEngramClient("http://engram.local", transport=httpx.ASGITransport(app=app)  # type: ignore[arg-type]
                                         ) as client:
                return (await client.usage(OTHER, days=7)).tokens

        other_tokens = anyio.run(run)
    finally:
        set_clients(None)
    assert report.world_id == WORLD and report.tokens == report.tokens_today == 1_450 and report.calls == 3
    assert report.by_stage == {"answer": 1_000, "extract": 450}
    assert {(u.stage, u.input_tokens, u.output_tokens) for u in report.days} == {
        ("answer", 900, 100), ("extract", 400, 50)}
    assert other_tokens == 7_007  # another world's spend, read as its own, never added to this one's
