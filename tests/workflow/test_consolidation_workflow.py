"""engram-consolidation as synthesized, under moto with the real handlers: Plan, a distributed Map over the
summary scopes (a catch per item), a distributed Map over the worlds' upkeep, FinishRun. A world of three
users and six conversations; one scope's summary fails, the others succeed, and the next run retries it."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from engram.enrichment.ingest import ingest_events
from engram.model.events import IngestRequest
from engram.ports import LLM
from engram.ports.clients import Clients
from tests.fakes.llm import ScriptedLLM
from tests.workflow.executions import Executions

pytestmark = pytest.mark.workflow
WORLD = "wc"
T0 = datetime.now(UTC) - timedelta(days=2)
CONVERSATIONS = {
    "dana": {"d1": ["Hi! My name is Dana and I live in Lisbon.", "I work at Acme Robotics."],
             "d2": ["I love hiking in the mountains on weekends."]},
    "eli": {"e1": ["My name is Eli and I live in Porto.", "I work at Helix Labs."],
            "e2": ["Helix Labs moved the Oslo review again."]},
    "fay": {"f1": ["My name is Fay and I live in Madrid."],
            "f2": ["I prefer trains over planes."]},
}
FAILING = "conversation e2"


@pytest.fixture(scope="module")
def world(workflow_clients: Clients, executions: Executions) -> str:
    """Three users' conversations, enriched through engram-enrichment, none consolidated yet."""
    for n, (user, conversations) in enumerate(CONVERSATIONS.items()):
        events = [{"event_id": f"{c}-{i}", "user_id": user, "conversation_id": c, "role": "user", "content": text,
                   "occurred_at": (T0 + timedelta(minutes=30 * n + 10 * k + i)).isoformat()}
                  for k, (c, turns) in enumerate(conversations.items()) for i, text in enumerate(turns)]
        enrichment_id = ingest_events(workflow_clients, workflow_clients.world(WORLD), IngestRequest.model_validate({"events": events})
                                      ).enrichment_id
        assert enrichment_id is not None
        assert executions.wait(executions.named("engram-enrichment", enrichment_id))["status"] == "SUCCEEDED"
    return WORLD


def _run(workflow_clients: Clients, executions: Executions, world: str) -> tuple[str, dict[str, Any]]:
    arn = workflow_clients.workflows.start_consolidation(world)
    assert executions.wait(arn)["status"] == "SUCCEEDED"
    return arn, executions.output(arn)


def _item_outcomes(executions: Executions, arn: str) -> list[str]:
    """The states each Map item ended in, from the child executions of the distributed Maps."""
    return [e["stateEnteredEventDetails"]["name"] for e in executions.history(arn)
            if "stateEnteredEventDetails" in e]


def test_a_run_consolidates_every_scope_and_a_failed_scope_does_not_fail_the_others(
        world: str, workflow_clients: Clients, executions: Executions,
        install_llm: Callable[[LLM], None]) -> None:
    llm = ScriptedLLM(failing_summaries=[FAILING])
    install_llm(llm)

    arn, output = _run(workflow_clients, executions, world)

    entered = executions.states_entered(arn)
    assert entered[:2] == ["Plan", "ConsolidateScopes"]
    assert entered[-3:] == ["KeepUpWorlds", "FinishRun", "Consolidated"]
    # six conversations and three users; one conversation's model call failed (retried, then caught)
    assert output["scopes"] == 10 and output["summaries"] == 8 and output["failed"] == 1
    summarized = sorted(c.args["scope"] for c in llm.calls_to("summarize"))
    assert {f"conversation {c}" for c in ("d1", "d2", "e1", "e2", "f1", "f2")} <= set(summarized)
    assert {"user dana", "user eli", "user fay"} <= set(summarized)
    store = workflow_clients.store
    assert store.get_summary(world, "conversation", "e2") is None
    for conversation in ("d1", "d2", "e1", "f1", "f2"):
        assert store.get_summary(world, "conversation", conversation) is not None, conversation
    summary = store.get_summary(world, "conversation", "d1")
    assert summary is not None and summary.user_id == "dana" and "Lisbon" in summary.content
    assert {"d1-0", "d1-1"} <= set(summary.source_ids)
    user = store.get_summary(world, "user", "eli")
    assert user is not None and user.user_id == "eli" and "Porto" in user.content
    # the failure is on the run's record; the failed scope is still stale, so the next run plans it
    with store.tx(world) as cur:  # type: ignore[attr-defined]
        cur.execute("SELECT stats FROM consolidation_runs WHERE world_id = %s AND finished_at IS NOT NULL", (world,))
        [stats] = [r["stats"] for r in cur.fetchall()]
    assert stats["failed_scopes"] == ["conversation:e2"] and stats["summarized"] == 8
    assert [(kind, scope) for _, kind, scope, _, _ in store.stale_scopes(world, 10, min_facts=2)] == [
        ("conversation", "e2")]


def test_the_next_run_retries_the_failed_scope_only(
        world: str, workflow_clients: Clients, executions: Executions,
        install_llm: Callable[[LLM], None]) -> None:
    llm = ScriptedLLM()
    install_llm(llm)

    _, output = _run(workflow_clients, executions, world)

    assert [c.args["scope"] for c in llm.calls_to("summarize")] == [FAILING]
    assert output["summaries"] == 1 and output["failed"] == 0
    assert workflow_clients.store.get_summary(world, "conversation", "e2") is not None


def test_a_run_with_nothing_new_changes_nothing(
        world: str, workflow_clients: Clients, executions: Executions,
        install_llm: Callable[[LLM], None]) -> None:
    llm = ScriptedLLM()
    install_llm(llm)
    before = _snapshot(workflow_clients, world)

    _, output = _run(workflow_clients, executions, world)

    assert llm.calls_to("summarize") == [] and output["summaries"] == 0 and output["scopes"] == 1  # the upkeep
    assert _snapshot(workflow_clients, world) == before


def _snapshot(clients: Clients, world: str) -> str:
    with clients.store.tx(world) as cur:  # type: ignore[attr-defined]
        rows = {}
        for table in ("memory_summaries", "procedural_memories", "semantic_memories", "memory_conflicts",
                      "index_outbox", "chat_events"):
            cur.execute(f"SELECT * FROM {table} WHERE world_id = %s ORDER BY 2", (world,))
            rows[table] = [{k: str(v) for k, v in r.items()} for r in cur.fetchall()]
    return json.dumps(rows, sort_keys=True)
