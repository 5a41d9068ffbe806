"""The local HTTP API as a client sees it: `engram serve` in a subprocess on a free port."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

REPO = Path(__file__).resolve().parents[2]
ENGRAM = Path(sys.executable).parent / "engram"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    def __init__(self, url: str, process: subprocess.Popen[str], log: Path) -> None:
        self.url = url
        self.process = process
        self.log = log

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        """Run the `engram` command against this server."""
        return subprocess.run([str(ENGRAM), *args, "--url", self.url], capture_output=True, text=True,
                              timeout=120, env=self.process_env())

    @staticmethod
    def process_env() -> dict[str, str]:
        return {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "AWS_"))}


@pytest.fixture(scope="session")
def local_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    data_dir = tmp_path_factory.mktemp("engram-e2e")
    port = _free_port()
    log = data_dir / "server.log"
    env = {**Server.process_env(), "ENGRAM_DATA_DIR": str(data_dir), "ENGRAM_PORT": str(port),
           "ENGRAM_LLM": "offline", "PYTHONUNBUFFERED": "1"}
    with log.open("w") as out:
        process = subprocess.Popen([str(ENGRAM), "serve", "--no-sample"], cwd=REPO, env=env, stdout=out,
                                   stderr=subprocess.STDOUT, text=True)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 180
    while True:
        if process.poll() is not None:
            pytest.fail(f"engram serve exited with {process.returncode}:\n{log.read_text()[-4000:]}")
        try:
            if httpx.get(f"{url}/v1/health", timeout=2).status_code == 200:
                break
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline:
            process.kill()
            pytest.fail(f"engram serve did not answer /v1/health in time:\n{log.read_text()[-4000:]}")
        time.sleep(0.5)
    server = Server(url, process, log)
    yield server
    process.send_signal(signal.SIGINT)
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        raise
