"""engram-enrichment as synthesized, with the user erased while its Extract step runs: the execution succeeds, having
written nothing for the erased user, and nothing of theirs is readable afterwards."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta

import pytest

from engram.adapters.offline.llm import OfflineLLM
from engram.enrichment.indexing import index_pending
from engram.enrichment.ingest import ingest_events
from engram.memory.erase import erase_user
from engram.model.entities import EntitySighting
from engram.model.events import IngestRequest
from engram.model.memories import OntologyPredicate
from engram.ports import LLM, ExtractionResult, LLMReply, Reference, WindowEvent
from engram.ports.clients import Clients
from tests.erasure import index_hits, rows_naming
from tests.workflow.executions import Executions

pytestmark = pytest.mark.workflow
T0 = datetime(2026, 6, 1, 9, 0, tzinfo=UTC)
MACHINE = "engram-enrichment"
WORLD = "wf-erase"
SECRETS = ("XK4471920", "Zebra 4921", "Seville")


class _ErasedWhileReading(OfflineLLM):
    """The offline model; while it reads the user's window, the user is erased (a DELETE arriving meanwhile)."""

    def __init__(self, clients: Clients, user_id: str) -> None:
        super().__init__()
        self.clients, self.user_id, self.erased = clients, user_id, False

    def extract(self, events: Sequence[WindowEvent], known_entities: Sequence[str], *,
                references: Sequence[Reference] = (), candidates: Sequence[EntitySighting] = (),
                predicates: Sequence[OntologyPredicate] = ()) -> LLMReply[ExtractionResult]:
        if not self.erased and any(e.speaker == self.user_id for e in events):
            self.erased = True
            erase_user(self.clients, self.clients.world(WORLD), self.user_id)
        return super().extract(events, known_entities, references=references, candidates=candidates,
                               predicates=predicates)


def _ingest(clients: Clients, user: str, lines: Sequence[str], start: datetime) -> tuple[list[str], str]:
    response = ingest_events(clients, clients.world(WORLD), IngestRequest.model_validate({"events": [
        {"event_id": f"{user}-{i}", "user_id": user, "conversation_id": "shared", "role": "user", "content": text,
         "occurred_at": (start + timedelta(minutes=i)).isoformat()} for i, text in enumerate(lines)]}))
    assert response.enrichment_id is not None
    return [e.event_id for e in response.events], response.enrichment_id


def test_an_execution_whose_user_is_erased_during_extract_succeeds_and_leaves_nothing_of_them(
        workflow_clients: Clients, executions: Executions, install_llm: Callable[[LLM], None]) -> None:
    llm = _ErasedWhileReading(workflow_clients, "vera")
    install_llm(llm)
    ben, ben_run = _ingest(workflow_clients, "ben", ["I live in Porto and I work at Olivo Labs."], T0)
    assert executions.wait(executions.named(MACHINE, ben_run))["status"] == "SUCCEEDED"
    vera, vera_run = _ingest(workflow_clients, "vera", ["My passport number is XK4471920 and I live in Seville.",
                                                        "My bank PIN is Zebra 4921."], T0 + timedelta(hours=1))
    arn = executions.named(MACHINE, vera_run)

    assert executions.wait(arn)["status"] == "SUCCEEDED"
    assert executions.states_entered(arn) == ["Resolve", "Extract", "Index", "Enriched"]
    assert llm.erased
    index_pending(workflow_clients, WORLD)
    assert rows_naming(workflow_clients, WORLD, [*SECRETS, *vera, "vera"], except_tables=("erased_users",)) == []
    assert index_hits(workflow_clients, WORLD, SECRETS) == []
    facts = {(f.predicate, f.object_value) for f in workflow_clients.store.user_memories(WORLD, "ben", "semantic", 9)}
    assert facts == {("lives_in", "Porto"), ("works_at", "Olivo Labs")}
    assert {e.enrichment_status for e in workflow_clients.store.get_events(WORLD, ben)} == {"enriched"}
