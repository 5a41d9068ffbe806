"""engram-consolidation as synthesized: Plan, a Map over the stale conversations, FinishRun."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest

from engram.ingest import ingest_events
from engram.model.events import IngestRequest
from engram.ports import LLM
from engram.service import Clients
from tests.fakes.llm import ScriptedLLM
from tests.workflow.executions import Executions

pytestmark = pytest.mark.workflow
WORLD = "wc"
T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def world(workflow_clients: Clients, executions: Executions) -> str:
    """Two enriched conversations of Dana's, neither summarized yet."""
    conversations = {"c1": ["Hi! My name is Dana and I live in Lisbon.", "I work at Acme Robotics."],
                     "c2": ["I love hiking in the mountains on weekends."]}
    events = [{"event_id": f"{conversation}-{i}", "user_id": "dana", "conversation_id": conversation,
               "role": "user", "content": text, "occurred_at": (T0 + timedelta(minutes=i)).isoformat()}
              for conversation, turns in conversations.items() for i, text in enumerate(turns)]
    enrichment_id = ingest_events(workflow_clients, WORLD, IngestRequest.model_validate({"events": events})
                                  ).enrichment_id
    assert enrichment_id is not None
    assert executions.wait(executions.named("engram-enrichment", enrichment_id))["status"] == "SUCCEEDED"
    return WORLD


def test_a_consolidation_run_summarizes_each_stale_conversation(
        world: str, workflow_clients: Clients, executions: Executions,
        install_llm: Callable[[LLM], None]) -> None:
    llm = ScriptedLLM()
    install_llm(llm)
    arn = workflow_clients.workflows.start_consolidation(world)

    assert executions.wait(arn)["status"] == "SUCCEEDED"
    entered = executions.states_entered(arn)
    assert entered[:2] == ["Plan", "ConsolidateScopes"] and entered[-2:] == ["FinishRun", "Consolidated"]
    assert entered.count("ConsolidateScope") == 2  # one iteration of the Map per conversation
    assert executions.output(arn)["scopes"] == 2 and executions.output(arn)["summaries"] == 2
    assert sorted(c.args["scope"] for c in llm.calls_to("summarize")) == ["conversation c1", "conversation c2"]
    summary = workflow_clients.store.get_summary(world, "conversation", "c1")
    assert summary is not None and summary.user_id == "dana"
    assert "Lisbon" in summary.content
    assert {"c1-0", "c1-1"} <= set(summary.source_ids)
    assert workflow_clients.store.stale_conversations(world, 10) == []  # nothing left to consolidate
