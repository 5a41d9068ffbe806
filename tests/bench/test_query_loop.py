"""The query loop's own cost: the time each step spends outside the model, and the tokens a query sends.

A world of 3 users, 60 conversations and 900 turns goes through the real ingest, resolve, extract and
index steps; then 60 questions (naming a person, a place, or nothing the world knows) run through the
loop's steps in process, in the order engram-query drives them, with the offline model. Every step's
wall time (its reads and writes of the query and its context included) minus the time it waited on the
model (`model_ms` in its trace) is the loop's overhead (goal: under 50 ms), reported also with the fused
search of the first step set aside (retrieval's own cost, benched in test_search_latency); the baseline is
that search, timed alone for the same question just before its loop runs.

Tokens: every prompt the loop sends (as the Anthropic adapter would render it, estimated at the world's
characters per token) against the tokens of the asking user's whole conversation history, which is what
a model without engram would have to be sent.
"""

from __future__ import annotations

import json
import random
import statistics
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import TypeVar

import pytest

from engram.adapters.anthropic import _tool
from engram.adapters.offline.llm import OfflineLLM
from engram.model.common import new_id, utcnow
from engram.model.context import QueryContext
from engram.model.queries import Answer, NeedsMoreInfo, WorldQuery
from engram.model.world import World
from engram.ports import LLMReply
from engram.ports.clients import Clients
from engram.prompts import answer as answer_prompt
from engram.query import loop
from engram.retrieval.search import search
from tests.bench.conftest import BenchReport
from tests.builder import remember

pytestmark = pytest.mark.bench
SEED = 20260307
WORLD = "bench-query-loop"
T = TypeVar("T")
USERS = {"u_ana": "Ana", "u_ben": "Ben", "u_chloe": "Chloe"}
CITIES = ["Lisbon", "Porto", "Madrid", "Berlin", "Oslo", "Kyoto", "Lima", "Quito"]
EMPLOYERS = ["Acme Robotics", "Azul Airlines", "Nordic Bank", "Helix Labs", "Orbit Foods"]
FRIENDS = ["Sarah", "Marco", "Priya", "Tomas", "Leila", "Kenji"]
FILLER = ["The weather was rainy all week.", "I watched a long documentary about whales last night.",
          "We should plan the team offsite soon.", "I need to buy a new laptop before the trip.",
          "The train was late again this morning.", "I finally finished the book about the Roman empire.",
          "Let's assume the budget stays the same next quarter.", "The new cafe near the office is good."]
CONVERSATIONS_PER_USER = 20
TURNS = 15
QUESTIONS = 60
T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


def _prefix(can_request_more: bool) -> str:
    """The cached prefix of an answer call as the Anthropic adapter sends it: the tools' definitions, the system text."""
    tools = ["answer", "request_info"] if can_request_more else ["answer"]
    return json.dumps([_tool(t) for t in tools]) + answer_prompt.SYSTEM


class MeasuredModel:
    """The offline model, with every answer prompt it is sent rendered as the Anthropic adapter renders it
    and counted (the offline model itself sends nothing anywhere)."""

    def __init__(self, chars_per_token: float) -> None:
        self.offline = OfflineLLM()
        self.name = self.offline.name
        self.chars_per_token = chars_per_token
        self.sent_tokens = 0

    def _count(self, context: QueryContext, remaining: int | None) -> None:
        text = _prefix(remaining is not None) + "".join(str(m["content"])
                                                        for m in answer_prompt.messages(context, remaining))
        self.sent_tokens += int(len(text) / self.chars_per_token)

    def answer(self, context: QueryContext, *, can_request_more: bool, remaining_info_requests: int,
               temperature: float) -> LLMReply[Answer | NeedsMoreInfo]:
        self._count(context, remaining_info_requests if can_request_more else None)
        return self.offline.answer(context, can_request_more=can_request_more,
                                   remaining_info_requests=remaining_info_requests, temperature=temperature)

    def force_answer(self, context: QueryContext, *, temperature: float) -> LLMReply[Answer]:
        self._count(context, None)
        return self.offline.force_answer(context, temperature=temperature)

    def __getattr__(self, name: str) -> object:  # extraction and the rest: the offline model's own
        return getattr(self.offline, name)


def _conversations(rng: random.Random) -> list[dict[str, object]]:
    events: list[dict[str, object]] = []
    for u, (user_id, name) in enumerate(USERS.items()):
        for c in range(CONVERSATIONS_PER_USER):
            started = T0 + timedelta(days=7 * c + u)
            said = [f"Hi, my name is {name}.", f"I live in {rng.choice(CITIES)}.",
                    f"I work at {rng.choice(EMPLOYERS)} as an engineer.", f"{rng.choice(FRIENDS)} is my friend.",
                    f"I really like {rng.choice(['hiking', 'sailing', 'chess', 'jazz', 'cooking'])}."]
            turns = [*said, *(rng.choice(FILLER) for _ in range(TURNS - len(said)))]
            rng.shuffle(turns)
            for t, content in enumerate(turns):
                events.append({"event_id": f"{user_id}-{c}-{t}", "user_id": user_id, "conversation_id": f"{user_id}-c{c}",
                               "role": "user" if t % 3 else "assistant", "content": content,
                               "occurred_at": (started + timedelta(minutes=t)).isoformat()})
    return events


def _questions(rng: random.Random) -> list[tuple[str, str]]:
    shapes = ["Where does {name} live?", "Where does {name} live and work?", "Who is {name}'s friend?",
              "What does {name} like?", "What is the capital of Mongolia?", "Where is {friend} from?"]
    return [(user_id, rng.choice(shapes).format(name=name, friend=rng.choice(FRIENDS)))
            for user_id, name in (rng.choice(list(USERS.items())) for _ in range(QUESTIONS))]


def _drive(clients: Clients, query: WorldQuery) -> list[float]:
    """The loop in engram-query's order; returns each step's wall time (its loads and saves included)."""
    wall: list[float] = []

    def timed(step: Callable[[Clients, World, loop.LoopState], T], state: loop.LoopState) -> T:
        started = time.perf_counter()
        out = step(clients, clients.world(state.world_id), state)  # each step resolves its world, as its handler does
        wall.append((time.perf_counter() - started) * 1000)
        return out

    state = timed(loop.ask, timed(loop.init, loop.LoopState(world_id=WORLD, query_id=query.query_id)))
    while state.outcome != "answer":
        if state.outcome == "needs_more_info" and state.remaining_info_requests > 0:
            state = timed(loop.ask, timed(loop.fulfil, state))
        else:
            state = timed(loop.force, state)
    started = time.perf_counter()
    loop.finish(clients, state)
    wall.append((time.perf_counter() - started) * 1000)
    return wall


def _pct(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


@pytest.fixture(scope="module")
def world(clients: Clients) -> Clients:
    rng = random.Random(SEED)
    events = _conversations(rng)
    for start in range(0, len(events), TURNS):  # one batch per conversation, as an agent sends them
        batch = events[start:start + TURNS]
        remember(clients, WORLD, batch)
    return clients


def test_the_loops_own_overhead_per_step_and_the_tokens_a_query_sends(world: Clients, bench_report: BenchReport
                                                                      ) -> None:
    clients = world
    h = clients.world(WORLD).heuristics
    model = MeasuredModel(h.query.chars_per_token)
    original, clients.llm = clients.llm, model  # type: ignore[assignment]
    rng = random.Random(SEED + 1)
    questions = _questions(rng)
    history_tokens = {u: sum(len(str(e["content"])) for e in _conversations(random.Random(SEED)) if e["user_id"] == u)
                      / h.query.chars_per_token for u in USERS}
    overhead: dict[str, list[float]] = defaultdict(list)
    search_ms: list[float] = []
    sent_per_query, ratio_per_query, rounds = [], [], []
    try:
        for user_id, question in questions[:5]:  # warm-up: caches, prepared plans
            _drive(clients, _save(clients, user_id, question))
        for user_id, question in questions:
            # the baseline, paired: the same search init runs, alone, just before (the machine as busy as then)
            started = time.perf_counter()
            search(clients, clients.world(WORLD), question, user_id=user_id, limit=h.query.query_initial_hits, now=utcnow())
            search_ms.append((time.perf_counter() - started) * 1000)
            before = model.sent_tokens
            query = _save(clients, user_id, question)
            wall = _drive(clients, query)
            done = clients.store.get_query(WORLD, query.query_id)
            assert done is not None and done.status == "completed" and done.answer is not None
            assert len(wall) == len(done.trace)  # every step call leaves one trace entry
            for t, ms in zip(done.trace, wall, strict=True):
                overhead[t.step].append(ms - t.model_ms)
                aside = ms - t.model_ms - float(t.detail.get("search_ms", 0.0))
                overhead["every step, the fused search aside"].append(aside)
            sent = model.sent_tokens - before
            sent_per_query.append(sent)
            ratio_per_query.append(sent / history_tokens[user_id])
            rounds.append(done.info_requests_used)
    finally:
        clients.llm = original
    aside = overhead.pop("every step, the fused search aside")
    every = [v for values in overhead.values() for v in values]
    bench_report.context.update({"questions": QUESTIONS, "events": len(USERS) * CONVERSATIONS_PER_USER * TURNS,
                                 "model": model.name, "goal_ms_p95": 50})
    bench_report.add("loop overhead per step p50", _pct(every, 0.5), "ms", baseline="fused search alone p50",
                     baseline_value=_pct(search_ms, 0.5))
    bench_report.add("loop overhead per step p95", _pct(every, 0.95), "ms", baseline="fused search alone p95",
                     baseline_value=_pct(search_ms, 0.95))
    bench_report.add("  the fused search aside p50", _pct(aside, 0.5), "ms")
    bench_report.add("  the fused search aside p95", _pct(aside, 0.95), "ms")
    for step in ("init", "ask", "fulfil", "force", "finish"):
        if overhead.get(step):
            bench_report.add(f"  {step} p50", _pct(overhead[step], 0.5), "ms")
            bench_report.add(f"  {step} p95", _pct(overhead[step], 0.95), "ms")
    bench_report.add("info requests per query (mean)", statistics.mean(rounds), "requests")
    bench_report.add("tokens sent per query (mean)", statistics.mean(sent_per_query), "tokens",
                     baseline="the user's whole history", baseline_value=statistics.mean(history_tokens.values()))
    bench_report.add("tokens sent per query (p95)", _pct(sent_per_query, 0.95), "tokens")
    bench_report.add("tokens sent / whole history (mean)", statistics.mean(ratio_per_query), "ratio")
    bench_report.add("  of which the cached prefix per model call", len(_prefix(True)) / h.query.chars_per_token,
                     "tokens")
    assert len(every) >= QUESTIONS * 3


def _save(clients: Clients, user_id: str, question: str) -> WorldQuery:
    query = WorldQuery(world_id=WORLD, query_id=new_id("qry"), user_id=user_id, question=question,
                       created_at=utcnow())
    clients.store.save_query(query)
    return query
