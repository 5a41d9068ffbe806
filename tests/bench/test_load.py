"""Load on the local stack as clients see it: `engram serve` (uvicorn, the real handlers, the state machines
under moto) over HTTP. 20 concurrent clients send 5,000 events (500 batches of 10) and 200 questions,
interleaved; one client alone sends one client's share first, in the same run, as the baseline. Reports
throughput, p50/p95 latency per kind of request, errors (any non-2xx or dropped connection, no retries),
events lost (acknowledged but not stored) and how long the enrichment backlog takes to drain afterwards."""

from __future__ import annotations

import os
import statistics
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from engram.local.stack import SWEEP_EVERY_S
from tests.bench.conftest import LOCOMO, BenchReport
from tests.bench.test_ingest import _turns
from tests.local_server import Server, start_server, stop_server

CLIENTS = 20
# Smaller runs while iterating: ENGRAM_BENCH_LOAD_BATCHES=5 ENGRAM_BENCH_LOAD_QUESTIONS=2 (1,000 events, 40 questions).
BATCHES_PER_CLIENT = int(os.environ.get("ENGRAM_BENCH_LOAD_BATCHES", "25"))  # x 20 clients x 10 events = 5,000
EVENTS_PER_BATCH = 10
QUESTIONS_PER_CLIENT = int(os.environ.get("ENGRAM_BENCH_LOAD_QUESTIONS", "10"))  # x 20 clients = 200 questions
USERS_PER_CLIENT = 2  # 125 events each: within one page of a user's events, for the drain check
DRAIN_TIMEOUT_S = 900
# The embedder is not under test here (the ingest bench measures MiniLM); hashing keeps the background
# enrichment from dominating two cores.
SETTINGS = {"ENGRAM_EMBEDDER": "hash"}
QUESTIONS = ["What does {user} like to do on weekends?", "Where did {user} go last summer?",
             "Who is {user}'s best friend?", "What did {user} say about work?", "hiking OR painting",
             "What is {user} planning next month?", "How does {user} feel about school?",
             "\"support group\"", "What books has {user} read?", "Which pets does {user} have?"]


@dataclass
class Tally:
    ingest_ms: list[float] = field(default_factory=list)
    query_ms: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    acknowledged: dict[str, int] = field(default_factory=dict)  # user to events acknowledged
    elapsed_s: float = 0.0

    def merge(self, other: Tally) -> None:
        self.ingest_ms += other.ingest_ms
        self.query_ms += other.query_ms
        self.errors += other.errors
        for user, n in other.acknowledged.items():
            self.acknowledged[user] = self.acknowledged.get(user, 0) + n

    @property
    def requests(self) -> int:
        return len(self.ingest_ms) + len(self.query_ms)

    @property
    def events(self) -> int:
        return sum(self.acknowledged.values())


def _client_run(url: str, world: str, client_no: int, texts: list[str]) -> Tally:
    """One client: its batches with a question after every few, each request timed, nothing retried."""
    tally = Tally()
    users = [f"client{client_no}-user{u}" for u in range(USERS_PER_CLIENT)]
    ask_every = max(BATCHES_PER_CLIENT // QUESTIONS_PER_CLIENT, 1)
    asked = 0
    with httpx.Client(base_url=url, timeout=120) as http:
        for b in range(BATCHES_PER_CLIENT):
            user = users[b % len(users)]
            events = [{"event_id": f"{world}-{client_no}-{b}-{i}", "user_id": user, "role": "user",
                       "conversation_id": f"{user}-conv", "content": texts[(b * EVENTS_PER_BATCH + i) % len(texts)]}
                      for i in range(EVENTS_PER_BATCH)]
            status, ms = _timed(http, "POST", f"/v1/worlds/{world}/events", {"events": events})
            tally.ingest_ms.append(ms)
            if status == 202:
                tally.acknowledged[user] = tally.acknowledged.get(user, 0) + len(events)
            else:
                tally.errors.append(f"ingest {status}")
            if (b + 1) % ask_every == 0 and asked < QUESTIONS_PER_CLIENT:
                question = QUESTIONS[(client_no + asked) % len(QUESTIONS)].format(user=user)
                status, ms = _timed(http, "POST", f"/v1/worlds/{world}/queries",
                                    {"user_id": user, "question": question})
                tally.query_ms.append(ms)
                asked += 1
                if status != 200:
                    tally.errors.append(f"query {status}")
    return tally


def _timed(http: httpx.Client, method: str, path: str, body: dict[str, Any]) -> tuple[int | str, float]:
    started = time.perf_counter()
    try:
        status: int | str = http.request(method, path, json=body).status_code
    except httpx.TransportError as exc:
        status = f"dropped ({exc.__class__.__name__})"
    return status, (time.perf_counter() - started) * 1000


def _run(url: str, world: str, clients: int, texts: list[str]) -> Tally:
    total = Tally()
    started = time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        for tally in pool.map(lambda n: _client_run(url, world, n, texts), range(clients)):
            total.merge(tally)
    total.elapsed_s = time.perf_counter() - started
    return total


def _stored(http: httpx.Client, world: str) -> dict[str, int]:
    return {u["user_id"]: u["events"] for u in http.get(f"/v1/worlds/{world}/users", params={"limit": 500}).json()}


def _drain(http: httpx.Client, world: str, users: list[str]) -> tuple[float, int, int, int]:
    """Seconds until no event of the world is pending or enriching (or the timeout), enriched and failed counts,
    and the failed count before the sweep.
    Events failed by throttling are restarted by the server's sweep once it is idle: failures get one sweep
    period (and the drain of what it restarted) before they count."""
    started = time.perf_counter()
    failed_before_sweep: int | None = None
    while True:
        statuses = [e["enrichment_status"] for u in users
                    for e in http.get(f"/v1/worlds/{world}/users/{u}/events", params={"limit": 200}).json()]
        busy = sum(s in ("pending", "enriching") for s in statuses)
        if busy == 0 and "failed" in statuses and failed_before_sweep is None:
            failed_before_sweep = statuses.count("failed")
            time.sleep(SWEEP_EVERY_S + 5)
            continue
        if busy == 0 or time.perf_counter() - started > DRAIN_TIMEOUT_S:
            return (time.perf_counter() - started, statuses.count("enriched"), statuses.count("failed"),
                    failed_before_sweep or 0)
        time.sleep(2)


def _p(values: list[float], q: int) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1] if len(values) > 1 else values[0]


@pytest.mark.bench
def test_twenty_clients_ingesting_and_asking_next_to_one_client_alone(tmp_path: Path,
                                                                      bench_report: BenchReport) -> None:
    texts = [e["content"] for e in _turns(CLIENTS * BATCHES_PER_CLIENT * EVENTS_PER_BATCH)]
    server: Server = start_server(tmp_path, **SETTINGS)
    try:
        single = _run(server.url, "load-single", 1, texts)
        with httpx.Client(base_url=server.url, timeout=120) as http:  # the baseline's backlog, out of the way
            _drain(http, "load-single", list(single.acknowledged))
        many = _run(server.url, "load", CLIENTS, texts)
        with httpx.Client(base_url=server.url, timeout=120) as http:
            stored = _stored(http, "load")
            drain_s, enriched, failed, swept = _drain(http, "load", list(many.acknowledged))
    finally:
        stop_server(server)

    lost = sum(max(n - stored.get(u, 0), 0) for u, n in many.acknowledged.items())
    bench_report.context.update({
        "clients": CLIENTS, "events": many.events, "questions": len(many.query_ms), "batch": EVENTS_PER_BATCH,
        "embedder": SETTINGS["ENGRAM_EMBEDDER"], "llm": "offline",
        "dataset": LOCOMO.name if LOCOMO.exists() else "synthetic", "errors": sorted(set(many.errors))})
    bench_report.add(f"{CLIENTS} clients: requests", many.requests / many.elapsed_s, "req/s",
                     baseline="1 client: requests", baseline_value=single.requests / single.elapsed_s)
    bench_report.add(f"{CLIENTS} clients: events acknowledged", many.events / many.elapsed_s, "events/s",
                     baseline="1 client: events acknowledged", baseline_value=single.events / single.elapsed_s)
    for name, mine, theirs in (("ingest (10 events)", many.ingest_ms, single.ingest_ms),
                               ("question (sync)", many.query_ms, single.query_ms)):
        for q in (50, 95):
            bench_report.add(f"{CLIENTS} clients: {name} p{q}", _p(mine, q), "ms",
                             baseline=f"1 client: {name} p{q}", baseline_value=_p(theirs, q))
    bench_report.add(f"{CLIENTS} clients: errors", len(many.errors), "requests", baseline="1 client: errors",
                     baseline_value=len(single.errors))
    bench_report.add("events lost (acknowledged, not stored)", lost, "events")
    bench_report.add("enrichment backlog drained after the load", drain_s, "s")
    bench_report.add("events enriched after the drain", enriched, "events")
    bench_report.add("events failed by throttling, then restarted by the sweep", swept, "events")
    bench_report.add("events failed after the drain", failed, "events")
    assert many.events > 0 and single.events > 0
    # The bar: nothing refused, nothing lost, every event enriched once the backlog drained.
    assert not many.errors and not single.errors, sorted(set(many.errors + single.errors))
    assert lost == 0
    assert (enriched, failed) == (many.events, 0)
