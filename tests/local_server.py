"""`engram serve` in a subprocess on a free port, started and stopped as a user would: for the e2e suite and
the load bench."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

REPO = Path(__file__).resolve().parents[1]
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


def start_server(data_dir: Path, **env: str) -> Server:
    """`engram serve --no-sample` on `data_dir` and a free port (offline model; `env` adds settings), once
    it answers /v1/health."""
    port = _free_port()
    log = data_dir / f"server-{port}.log"
    env = {**Server.process_env(), "ENGRAM_DATA_DIR": str(data_dir), "ENGRAM_PORT": str(port),
           "ENGRAM_LLM": "offline", "PYTHONUNBUFFERED": "1", **env}
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
    return Server(url, process, log)


def stop_server(server: Server) -> None:
    """Ctrl-C, as a user stops it."""
    server.process.send_signal(signal.SIGINT)
    try:
        server.process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        server.process.kill()
        raise
