"""The query loop's steps on the real parts, driven in the order the state machine drives them."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from engram.extraction import extract_events, index_pending
from engram.ingest import ingest_events
from engram.model.queries import QueryConfig, QueryRequest
from engram.query import steps
from engram.query.service import submit_query
from engram.resolution import resolve_events
from engram.retrieval.search import search
from engram.service import Clients

pytestmark = pytest.mark.integration


def _drive(clients: Clients, world_id: str, query_id: str) -> steps.FinalState:
    """What engram-query does: Init, Ask, (Fulfil, Ask)*, Force when out of requests, Finish."""
    state = steps.ask(clients, steps.init(clients, steps.LoopState(world_id=world_id, query_id=query_id)))
    while state.outcome == "needs_more_info":
        if state.remaining_info_requests <= 0:
            state = steps.force(clients, state)
            break
        state = steps.ask(clients, steps.fulfil(clients, state))
    return steps.finish(clients, state)


@pytest.fixture(scope="module")
def world(clients: Clients) -> str:
    events = [
        ("q1", "Hi! My name is Dana and I live in Lisbon."),
        ("q2", "I work at Acme Robotics as a firmware engineer."),
        ("q3", "Sarah is my boss. She prefers short status reports."),
        ("q4", "I love hiking in the mountains on weekends."),
    ]
    request = {"events": [{"event_id": i, "user_id": "dana", "conversation_id": "c1", "role": "user", "content": t,
                           "occurred_at": datetime(2026, 3, 1, 9, n, tzinfo=UTC).isoformat()}
                          for n, (i, t) in enumerate(events)]}
    from engram.model.events import IngestRequest

    ingest_events(clients, "wq", IngestRequest.model_validate(request))
    ids = [i for i, _ in events]
    resolve_events(clients, "wq", ids)
    extract_events(clients, "wq", ids)
    index_pending(clients, "wq", ids)
    return "wq"


def test_fused_search_finds_the_event_that_states_a_fact(clients: Clients, world: str) -> None:
    result = search(clients, world, "Where does Dana live?", user_id="dana")
    assert "q1" in [h.doc_id for h in result.hits]
    assert any("lives in Lisbon" in h.text for h in result.hits[:3])
    assert result.interpretation and result.search_time_ms > 0
    assert all(h.ranks for h in result.hits)


def test_a_question_is_answered_with_sources_from_memory(clients: Clients, world: str) -> None:
    query = submit_query(clients, world, QueryRequest(user_id="dana", question="Where does Dana live?"))
    final = _drive(clients, world, query.query_id)
    answered = clients.store.get_query(world, query.query_id)
    assert final.status == "completed" and answered is not None
    assert answered.answer is not None and "Lisbon" in answered.answer.content
    assert "q1" in {s.id for s in answered.answer.sources}
    assert answered.model == "offline-heuristic"
    assert [t.step for t in answered.trace][:2] == ["init", "ask"]


def test_an_unanswerable_question_asks_for_more_then_is_forced_and_admits_it(clients: Clients, world: str) -> None:
    query = submit_query(clients, world, QueryRequest(user_id="dana", question="What is the capital of Mongolia?",
                                                      config=QueryConfig(max_info_requests=1)))
    final = _drive(clients, world, query.query_id)
    answered = clients.store.get_query(world, query.query_id)
    assert answered is not None and answered.answer is not None
    assert final.info_requests_used <= 1
    assert answered.answer.confidence <= 0.5


def test_a_request_for_an_id_outside_the_context_is_rejected_not_run(clients: Clients, world: str) -> None:
    from engram.errors import CapabilityRejected
    from engram.model.queries import InfoRequest
    from engram.query import capabilities
    from engram.query.context import QueryContext

    context = QueryContext(query_id="x", world_id=world, question="?")
    with pytest.raises(CapabilityRejected):
        capabilities.validate(InfoRequest(capability="get_entity_details", params={"entity_id": "ent_other"}),
                              context, set())
    with pytest.raises(CapabilityRejected):
        capabilities.validate(InfoRequest(capability="get_relationships", params={"entity_id": "e", "depth": 9}),
                              context, set())
