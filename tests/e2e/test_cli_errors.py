"""The `engram` command fails the way a user can act on: a busy port is named before anything starts, and an API
error prints its status, code, message and each field error, never a traceback."""

from __future__ import annotations

import json
import socket
import subprocess
from pathlib import Path

import pytest

from tests.e2e.conftest import ENGRAM, REPO, Server

pytestmark = pytest.mark.e2e


def test_a_busy_port_is_reported_before_the_stack_starts(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        env = {**Server.process_env(), "ENGRAM_DATA_DIR": str(tmp_path), "ENGRAM_LLM": "offline"}
        done = subprocess.run([str(ENGRAM), "serve", "--no-sample", "--host", "127.0.0.1", "--port", str(port)],
                              cwd=REPO, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and f"127.0.0.1:{port}" in lines[0], done.stderr
    assert "--port" in lines[0] and "ENGRAM_PORT" in lines[0]
    assert "starting the embedded stack" not in done.stdout
    assert not any(tmp_path.iterdir())  # no PostgreSQL cluster was made


def test_an_api_error_prints_its_field_errors_not_a_traceback(local_server: Server, tmp_path: Path) -> None:
    events = tmp_path / "events.json"
    events.write_text(json.dumps({"events": [{"user_id": "ana", "conversation_id": "c1", "role": "user"}]}))
    done = local_server.cli("ingest", str(events), "--world", "cli-errors")
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    assert "engram: 422 invalid_input: the request failed validation" in done.stderr
    assert any(line.strip().startswith("body.") and "content" in line and ": " in line
               for line in done.stderr.splitlines()), done.stderr


def test_a_question_to_an_unknown_world_prints_status_code_and_message(local_server: Server) -> None:
    done = local_server.cli("ask", "Where do I live?", "--world", "no-such-world", "--user", "ana")
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stderr.startswith("engram: 404 unknown_world: ")
