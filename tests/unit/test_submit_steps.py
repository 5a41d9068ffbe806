"""Submitting and reading world queries on in-memory fakes of their ports (the queries and the workflows)."""

from __future__ import annotations

import pytest

from engram.enrichment.ingest import ingest_events
from engram.errors import NotFound, UnknownWorld
from engram.model.queries import QueryRequest
from engram.query.submit import SubmitPorts, get_query, list_queries, response, submit_query
from tests.fakes.conversations import T0, said
from tests.fakes.ports import FakePorts


def _world_with_events() -> FakePorts:
    """Ports whose world `w1` holds an event: a world exists once it holds one."""
    fakes = FakePorts()
    ingest_events(fakes, fakes.world("w1"), said("I live in Lyon."))
    return fakes


def test_a_question_to_a_world_with_no_event_is_refused_as_an_unknown_world_and_nothing_is_stored() -> None:
    fakes = _world_with_events()
    with pytest.raises(UnknownWorld) as refused:
        submit_query(fakes, "w-typo", QueryRequest(user_id="dana", question="Where do I live?"))
    assert (refused.value.status, refused.value.code) == (404, "unknown_world")
    assert list_queries(fakes, "w-typo", None, 10) == [] and fakes.workflows.queries == []


def test_a_sync_query_is_stored_pending_then_run_to_its_end_by_the_workflow() -> None:
    fakes = _world_with_events()
    ports: SubmitPorts = fakes
    query = submit_query(ports, "w1", QueryRequest(user_id="dana", question="Where do I live?"), now=T0)
    assert fakes.workflows.queries == [("w1", query.query_id)]
    stored = get_query(ports, "w1", query.query_id)
    assert (stored.question, stored.user_id, stored.status, stored.mode, stored.created_at) == (
        "Where do I live?", "dana", "pending", "answer", T0)


def test_an_async_or_research_query_is_started_and_answered_at_once_with_its_id() -> None:
    fakes = _world_with_events()
    asked = submit_query(fakes, "w1", QueryRequest(user_id="dana", question="Where do I live?", mode="async"))
    research = submit_query(fakes, "w1", QueryRequest(user_id="dana", question="Why?", mode="research"))
    assert (asked.status, research.status, research.mode) == ("pending", "pending", "research")
    assert fakes.workflows.queries == [("w1", asked.query_id), ("w1", research.query_id)]
    assert response(research).query_id == research.query_id


def test_queries_are_listed_per_user_latest_first_and_an_unknown_one_is_not_found() -> None:
    fakes = _world_with_events()
    first = submit_query(fakes, "w1", QueryRequest(user_id="dana", question="One?"), now=T0)
    submit_query(fakes, "w1", QueryRequest(user_id="sam", question="Other?"), now=T0)
    second = submit_query(fakes, "w1", QueryRequest(user_id="dana", question="Two?"), now=T0.replace(hour=10))
    assert [q.query_id for q in list_queries(fakes, "w1", "dana", 10)] == [second.query_id, first.query_id]
    assert list_queries(fakes, "elsewhere", None, 10) == []
    with pytest.raises(NotFound):
        get_query(fakes, "elsewhere", first.query_id)
