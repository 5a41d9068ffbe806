"""The local HTTP API as a client sees it: `engram serve` in a subprocess on a free port."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.local_server import ENGRAM, REPO, Server, start_server, stop_server

__all__ = ["ENGRAM", "REPO", "Server", "start_server", "stop_server"]


@pytest.fixture(scope="session")
def local_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    server = start_server(tmp_path_factory.mktemp("engram-e2e"))
    yield server
    stop_server(server)
