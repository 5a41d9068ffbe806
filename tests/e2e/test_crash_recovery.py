"""`engram serve` killed with SIGKILL during a burst of ingests, then started again on the same data
directory: every event acknowledged with 202 is there, intact and once, and the enrichments the kill cut
short start again by themselves and finish."""

from __future__ import annotations

import os
import signal
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.local_server import Server, start_server, stop_server

pytestmark = pytest.mark.e2e
WORLD = "crash"
CLIENTS = 4
BATCH = 20
KILL_AFTER_ACKS = 12  # batches acknowledged before the kill; the clients keep sending until it lands
_TEXTS = ["My name is {u} and I live in Lisbon.", "I work at Acme Robotics on {u}'s drone project.",
          "{u} prefers window seats on long flights.", "Yesterday {u} adopted a cat called Miso."]
_SETTINGS = {"ENGRAM_EMBEDDER": "hash"}  # durability is under test, not the embedder: keep the burst quick


def _batch(client_no: int, batch_no: int) -> list[dict[str, Any]]:
    user = f"user{client_no}"
    return [{"event_id": f"c{client_no}-b{batch_no}-e{i}", "user_id": user, "conversation_id": f"{user}-conv",
             "role": "user", "content": _TEXTS[i % len(_TEXTS)].format(u=user) + f" (note {batch_no}.{i})"}
            for i in range(BATCH)]


def _burst_then_kill(server: Server) -> dict[str, str]:
    """CLIENTS clients send batches until the server dies; SIGKILL once KILL_AFTER_ACKS were acknowledged.
    Returns the acknowledged events (id to content)."""
    acked: dict[str, str] = {}
    lock = threading.Lock()
    killed = threading.Event()

    def client(n: int) -> None:
        with httpx.Client(base_url=server.url, timeout=30) as http:
            for b in range(10_000):
                events = _batch(n, b)
                try:
                    response = http.post(f"/v1/worlds/{WORLD}/events", json={"events": events})
                except httpx.TransportError:
                    return  # the server is gone: this batch was never acknowledged
                assert response.status_code == 202, response.text
                with lock:
                    acked.update({e["event_id"]: e["content"] for e in events})
                    if len(acked) >= KILL_AFTER_ACKS * BATCH and not killed.is_set():
                        killed.set()
                        server.process.send_signal(signal.SIGKILL)

    with ThreadPoolExecutor(CLIENTS) as pool:
        list(pool.map(client, range(CLIENTS)))
    server.process.wait(timeout=30)
    assert server.process.returncode == -signal.SIGKILL
    return acked


def _statuses(server: Server, ids: list[str]) -> dict[str, dict[str, Any]]:
    with httpx.Client(base_url=server.url, timeout=30) as http:
        return {i: http.get(f"/v1/worlds/{WORLD}/events/{i}").json() for i in ids}


def test_every_acknowledged_event_survives_sigkill_and_its_enrichment_resumes_after_a_restart(
        tmp_path: Path) -> None:
    first = start_server(tmp_path, **_SETTINGS)
    acked = _burst_then_kill(first)

    second = start_server(tmp_path, **_SETTINGS)
    try:
        restarted = [line for line in second.log.read_text().splitlines() if "enrichment restarted" in line]
        assert restarted, f"the restart found nothing to resume:\n{second.log.read_text()[-3000:]}"

        stored = _statuses(second, list(acked))
        missing = [i for i, body in stored.items() if "error" in body]
        assert missing == [], f"{len(missing)} acknowledged events lost"
        assert all(stored[i]["content"] == acked[i] for i in acked)

        waiting = [i for i, body in stored.items() if body["enrichment_status"] != "enriched"]
        deadline = time.monotonic() + 180
        while waiting and time.monotonic() < deadline:
            time.sleep(1)
            now = _statuses(second, waiting)
            waiting = [i for i, body in now.items() if body["enrichment_status"] != "enriched"]
        assert waiting == [], (f"{len(waiting)} events not enriched after the restart, e.g. "
                               f"{_statuses(second, waiting[:3])}\n{second.log.read_text()[-3000:]}")

        with httpx.Client(base_url=second.url, timeout=30) as http:
            users = {u["user_id"]: u["events"] for u in http.get(f"/v1/worlds/{WORLD}/users").json()}
        per_user = {f"user{n}": sum(1 for i in acked if i.startswith(f"c{n}-")) for n in range(CLIENTS)}
        assert all(users[u] >= n for u, n in per_user.items())  # at least the acknowledged, each once (ids unique)
    finally:
        stop_server(second)
        _stop_postgres(tmp_path / "pg")


def _stop_postgres(pgdata: Path) -> None:
    """The embedded PostgreSQL outlives a holder killed with SIGKILL, and the handle of the next one does not stop
    it (the killed process still counts as a holder): stop it here, by the pid it wrote in its data directory."""
    pid_file = pgdata / "postmaster.pid"
    if not pid_file.exists():
        return
    pid = int(pid_file.read_text().split()[0])
    os.kill(pid, signal.SIGINT)  # a fast shutdown
    deadline = time.monotonic() + 30
    while pid_file.exists() and time.monotonic() < deadline:
        time.sleep(0.2)
