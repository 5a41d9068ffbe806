"""`engram consolidate --wait` prints what the run did, and the client reads each memory layer as its model."""

from __future__ import annotations

import re
from collections.abc import Iterator

import httpx
import pytest

from engram.model.memories import EpisodicMemory, ExplainedFact, MemorySummary, ProceduralMemory
from engram.sdk.client import EngramClient
from tests.e2e.conftest import Server

pytestmark = pytest.mark.e2e

WORLD = "consolidate"
SAID = ["My name is Rui and I live in Lisbon.", "I work at Tejo Labs as an engineer.",
        "I prefer green tea in the morning.", "My sister Ana lives in Porto."]


@pytest.fixture(scope="module")
def engram(local_server: Server) -> Iterator[EngramClient]:
    with EngramClient(local_server.url) as client:
        stored = client.add_events(WORLD, [{"user_id": "rui", "conversation_id": "c1", "role": "user",
                                            "content": text} for text in SAID], wait=True, wait_timeout_s=25)
        assert stored.enrichment_status == "enriched"
        yield client


def test_consolidate_wait_prints_the_runs_totals(local_server: Server, engram: EngramClient) -> None:
    done = local_server.cli("consolidate", "--world", WORLD, "--wait")
    assert done.returncode == 0, done.stderr
    line = done.stdout.strip().splitlines()[-1]
    found = re.fullmatch(r"consolidation run_\S+ of consolidate: (\d+) scopes, (\d+) summarized, \d+ facts confirmed, "
                         r"\d+ procedures, \d+ conflicts settled, \d+ archived, 0 failed, (\d+) model calls", line)
    assert found, line
    scopes, summarized, model_calls = map(int, found.groups())
    assert scopes >= 1 and summarized >= 1 and model_calls >= 1
    summaries = engram.memories(WORLD, "rui", layer="summary")
    assert summaries and all(isinstance(s, MemorySummary) for s in summaries)


def test_a_consolidation_is_read_in_its_own_world_only(local_server: Server, engram: EngramClient) -> None:
    started = httpx.post(f"{local_server.url}/v1/worlds/{WORLD}/consolidations", json={}, timeout=60).json()
    execution = started["execution_id"]
    other = httpx.get(f"{local_server.url}/v1/worlds/elsewhere/consolidations/{execution}", timeout=10)
    assert other.status_code == 404, other.text
    mine = httpx.get(f"{local_server.url}/v1/worlds/{WORLD}/consolidations/{execution}", timeout=10)
    assert mine.status_code == 200 and mine.json()["status"] in ("running", "succeeded")


def test_memories_come_back_as_the_model_of_their_layer(engram: EngramClient) -> None:
    facts = engram.memories(WORLD, "rui", layer="semantic")
    assert facts and all(isinstance(f, ExplainedFact) for f in facts)
    assert any("Lisbon" in f.object_value for f in facts)
    assert all(0 <= f.effective_confidence <= 1 and f.explanation.effective == f.effective_confidence for f in facts)
    episodes = engram.memories(WORLD, "rui", layer="episodic")
    assert episodes and all(isinstance(e, EpisodicMemory) and e.user_id == "rui" for e in episodes)
    assert all(isinstance(p, ProceduralMemory) for p in engram.memories(WORLD, "rui", layer="procedural"))
