"""Consolidation's cost and what it buys.

A world of 4 users, 40 conversations and 1,000 turns spread over the last 20 months (facts stated early and
some restated later, entities named together across conversations, filler) goes through the real ingest,
resolve, extract and index steps. Then one consolidation run, in process, in the order engram-consolidation
drives it (plan, every summary scope, every world's upkeep, finish) with the offline model.

Cost: the run's wall time and its model calls per 1,000 events, next to the enrichment of the same events
(ingest, resolve, extract, index) measured in the same run; and a second run (nothing new) next to the first.

What it buys: for 12 questions (where each user lives, works, what they prefer), the share of the user's memory
store (every item retrieval can show them: events, active episodes and facts, summaries, procedures; estimated
tokens) a query context needs: the fused search's hits in rank order up to the first that holds the answer
(all 20 when none does), before and after consolidation.
"""

from __future__ import annotations

import random
import time
from datetime import UTC, datetime, timedelta

import pytest

from engram.app.inline import InlineWorkflows
from engram.enrichment.ingest import ingest_events
from engram.model.events import IngestRequest
from engram.ports.clients import Clients
from engram.retrieval.search import search
from tests.bench.conftest import BenchReport
from tests.builder import consolidate, enrich

pytestmark = pytest.mark.bench
SEED = 20260308
WORLD = "bench-consolidation"
USERS = {"ana": ("Lisbon", "Porto", "Acme Robotics", "green tea", "Sarah"),
         "ben": ("Madrid", "Valencia", "Helix Labs", "black coffee", "Marco"),
         "cleo": ("Berlin", "Hamburg", "Nordic Bank", "jazz records", "Priya"),
         "dev": ("Oslo", "Bergen", "Orbit Foods", "mountain bikes", "Kenji")}
FILLER = ["The weather was rainy all week.", "I watched a long documentary about whales last night.",
          "We should plan the team offsite soon.", "I need to buy a new laptop before the trip.",
          "The train was late again this morning.", "I finally finished the book about the Roman empire.",
          "The new cafe near the office is good.", "Traffic was terrible on the way home."]
CONVERSATIONS_PER_USER = 10
TURNS = 25
DEPTH = 20  # hits a context may take before the answer counts as not reached
NOW = datetime.now(UTC)


def _conversations(rng: random.Random) -> list[dict[str, object]]:
    events: list[dict[str, object]] = []
    for user, (old_city, city, employer, liking, friend) in USERS.items():
        for c in range(CONVERSATIONS_PER_USER):
            start = NOW - timedelta(days=600 - 60 * c)
            turns = [rng.choice(FILLER) for _ in range(TURNS)]
            if c == 0:
                turns[0] = f"Hi, my name is {user.title()} and I live in {old_city}."
                turns[1] = f"I work at {employer}."
            if c == 6:
                turns[0] = f"Actually I live in {city} now."
            if c >= 6:
                turns[2] = f"I work at {employer}."  # restated: reinforced, validated recently
            if c % 3 == 1:
                turns[3] = f"I prefer {liking}."
            if c % 2 == 0:
                turns[4] = f"{friend} from {employer} called me again today."
            events += [{"event_id": f"{user}-{c}-{t}", "user_id": user, "conversation_id": f"{user}-{c}",
                        "role": "user", "content": text,
                        "occurred_at": (start + timedelta(minutes=t)).isoformat()} for t, text in enumerate(turns)]
    return events


def _questions() -> list[tuple[str, str, str]]:
    out = []
    for user, (_old, city, employer, liking, _friend) in USERS.items():
        name = user.title()
        out += [(user, f"Where does {name} live?", city), (user, f"Where does {name} work?", employer),
                (user, f"What does {name} prefer?", liking)]
    return out


def _store_tokens(clients: Clients, user: str, chars_per_token: float) -> float:
    """The user's memory store as retrieval can show it, in estimated tokens."""
    with clients.store.tx(WORLD) as cur:  # type: ignore[attr-defined]
        cur.execute(
            "SELECT coalesce(sum(n), 0) AS chars FROM ("
            " SELECT length(content) AS n FROM chat_events WHERE world_id = %(w)s AND user_id = %(u)s"
            " UNION ALL SELECT length(content) FROM episodic_memories WHERE world_id = %(w)s AND user_id = %(u)s"
            "  AND status = 'active'"
            " UNION ALL SELECT length(predicate) + length(object_value) + 10 FROM semantic_memories"
            "  WHERE world_id = %(w)s AND user_id = %(u)s AND status = 'active'"
            " UNION ALL SELECT length(content) FROM memory_summaries WHERE world_id = %(w)s AND user_id = %(u)s"
            " UNION ALL SELECT length(pattern) FROM procedural_memories WHERE world_id = %(w)s AND user_id = %(u)s"
            "  AND status = 'active') x", {"w": WORLD, "u": user})
        return float(cur.fetchone()["chars"]) / chars_per_token


def _needed(clients: Clients, chars_per_token: float) -> tuple[float, float]:
    """Mean share of the asking user's store a context needs to reach the answer, and the share of questions
    whose answer is reached within DEPTH hits."""
    shares, reached = [], 0
    for user, question, answer in _questions():
        hits = search(clients, clients.world(WORLD), question, user_id=user, limit=DEPTH).hits
        chars = 0
        for hit in hits:
            chars += len(hit.text)
            if answer.lower() in hit.text.lower():
                reached += 1
                break
        shares.append(chars / chars_per_token / _store_tokens(clients, user, chars_per_token))
    return sum(shares) / len(shares), reached / len(shares)


@pytest.fixture(scope="module")
def world(clients: Clients) -> tuple[Clients, float, int, int]:
    """The world enriched; returns the enrichment's wall time, model calls and the events stored."""
    clients.workflows = InlineWorkflows(clients, background=False)
    events = _conversations(random.Random(SEED))
    calls = 0
    started = time.perf_counter()
    for i in range(0, len(events), 50):
        batch = IngestRequest.model_validate({"events": events[i:i + 50]})
        ids = [e.event_id for e in ingest_events(clients, clients.world(WORLD), batch).events]
        calls += enrich(clients, WORLD, ids).get("model_calls", 0)
    return clients, time.perf_counter() - started, calls, len(events)


def _consolidate(clients: Clients) -> tuple[float, dict[str, int]]:
    started = time.perf_counter()
    _run, output = consolidate(clients, WORLD)
    return time.perf_counter() - started, output


def test_consolidation_cost_per_thousand_events_and_the_share_of_memory_a_context_needs(
        world: tuple[Clients, float, int, int], bench_report: BenchReport) -> None:
    clients, enrich_s, enrich_calls, events = world
    cpt = clients.world(WORLD).heuristics.query.chars_per_token
    per_k = 1000 / events
    share_before, reached_before = _needed(clients, cpt)

    first_s, first = _consolidate(clients)
    second_s, second = _consolidate(clients)
    share_after, reached_after = _needed(clients, cpt)

    bench_report.context.update({"events": events, "users": len(USERS), "first_run": first, "second_run": second})
    bench_report.add("consolidation time per 1,000 events", first_s * per_k, "s",
                     baseline="enrichment of the same events", baseline_value=enrich_s * per_k)
    bench_report.add("consolidation model calls per 1,000 events", first["model_calls"] * per_k, "calls",
                     baseline="extraction's model calls", baseline_value=enrich_calls * per_k)
    bench_report.add("second run (nothing new) time", second_s, "s", baseline="first run", baseline_value=first_s)
    bench_report.add("summaries written", first["summaries"], "rows")
    bench_report.add("facts confirmed (+0.1)", first["confirmed"], "facts")
    bench_report.add("procedures learned", first["procedures"], "rows")
    bench_report.add("facts archived (decayed)", first["archived"], "facts")
    bench_report.add("store share a context needs, after", 100 * share_after, "%",
                     baseline="before consolidation", baseline_value=100 * share_before)
    bench_report.add("answers reached within 20 hits, after", 100 * reached_after, "%",
                     baseline="before consolidation", baseline_value=100 * reached_before)
    assert second["summaries"] == 0 and second["model_calls"] == 0  # the bench's own sanity: nothing new, no work
