"""The shared contracts behave as the rest of engram relies on."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from engram.config import Settings
from engram.model.common import utcnow
from engram.model.context import QueryContext
from engram.model.events import IngestRequest
from engram.model.heuristics import DEFAULT_HEURISTICS
from engram.model.queries import ContextItem, QueryConfig, WorldQuery


def test_a_world_override_changes_one_heuristic_and_keeps_the_rest() -> None:
    tuned = DEFAULT_HEURISTICS.with_overrides({"rrf_k": 30})
    assert tuned.retrieval.rrf_k == 30
    assert tuned.resolve.alias_accept == DEFAULT_HEURISTICS.resolve.alias_accept


def test_an_unknown_heuristic_override_is_refused() -> None:
    with pytest.raises(ValidationError):
        DEFAULT_HEURISTICS.with_overrides({"no_such_rule": 1})


def test_the_model_defaults_to_offline_without_a_key_and_to_anthropic_with_one() -> None:
    assert Settings(_env_file=None).resolved_llm() in {"offline", "anthropic"}  # type: ignore[call-arg]
    assert Settings(llm=None, anthropic_api_key=None).resolved_llm() == "offline"
    assert Settings(llm=None, ANTHROPIC_API_KEY="k").resolved_llm() == "anthropic"  # type: ignore[call-arg]


def test_statements_are_prepared_on_the_embedded_server_only_unless_the_setting_says() -> None:
    from engram.app.factory import prepares

    assert prepares(Settings(DATABASE_URL=None, database_secret_arn=None))  # type: ignore[call-arg]
    assert not prepares(Settings(DATABASE_URL="postgresql://db/engram"))  # type: ignore[call-arg]
    assert not prepares(Settings(DATABASE_URL=None, database_secret_arn="arn:aws:secretsmanager:x"))  # type: ignore[call-arg]  # RDS Proxy in prod
    assert prepares(Settings(DATABASE_URL="postgresql://db/engram", database_prepare=True))  # type: ignore[call-arg]
    assert not prepares(Settings(DATABASE_URL=None, database_prepare=False))  # type: ignore[call-arg]


def test_a_query_counts_down_its_info_requests_and_then_may_ask_no_more() -> None:
    query = WorldQuery(world_id="w", query_id="q", user_id="u", question="?", created_at=utcnow(),
                       config=QueryConfig(max_info_requests=2))
    assert (query.remaining_info_requests, query.can_request_more_info) == (2, True)
    query.info_requests_used = 2
    assert (query.remaining_info_requests, query.can_request_more_info) == (0, False)


def test_max_info_requests_is_bounded_to_five() -> None:
    with pytest.raises(ValidationError):
        QueryConfig(max_info_requests=6)


def test_merging_a_context_adds_only_new_items_and_tracks_expandable_entities() -> None:
    context = QueryContext(query_id="q", world_id="w", question="?")
    first = [ContextItem(kind="entity", id="ent_a", text="A"),
             ContextItem(kind="semantic", id="mem_1", text="A likes B", entity_ids=["ent_a", "ent_b"])]
    assert context.merge(first) == 2
    assert context.merge(first) == 0
    assert context.expandable_entity_ids() == []  # ent_a is held in full, ent_b only mentioned
    context.referenced_entities = True  # the world's query_referenced_entities
    context.mark_expanded("ent_a")
    assert context.expandable_entity_ids() == ["ent_b"]
    assert context.stats().items == 2


def test_a_batch_holds_one_to_a_hundred_events() -> None:
    event = {"user_id": "u", "conversation_id": "c", "role": "user", "content": "hi"}
    with pytest.raises(ValidationError):
        IngestRequest(events=[])
    with pytest.raises(ValidationError):
        IngestRequest.model_validate({"events": [event] * 101})
    assert len(IngestRequest.model_validate({"events": [event] * 100}).events) == 100


@pytest.mark.parametrize("metadata", [{"x": float("nan")}, {"x": [float("inf")]}, {"x": 10 ** 5_000},
                                      {"x\x00": 1}, {"x": "\ud800"}])
def test_an_event_from_code_with_metadata_json_cannot_hold_is_refused(metadata: dict) -> None:
    with pytest.raises(ValidationError):
        IngestRequest.model_validate({"events": [{"user_id": "u", "conversation_id": "c", "role": "user",
                                                  "content": "x", "metadata": metadata}]})
