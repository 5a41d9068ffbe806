"""Every sample task payload is one its handler accepts, so the samples document the real contracts."""

from __future__ import annotations

import pytest

from engram.model.events import IngestRequest
from tests.events import EVENTS, load_event


def test_the_demo_world_is_a_valid_batch_with_an_id_on_every_event() -> None:
    doc = load_event("conversations/demo.json")
    request = IngestRequest.model_validate({"events": doc["events"]})
    assert doc["world_id"] == "demo"
    assert all(e.event_id for e in request.events)
    assert len({e.event_id for e in request.events}) == len(request.events)


@pytest.mark.parametrize("name", sorted(p.name for p in (EVENTS / "query").glob("*.json")))
def test_each_query_step_sample_is_accepted_by_the_query_step_handler(name: str) -> None:
    from functions.query_step.handler import Step

    step = Step.validate_python(load_event(f"query/{name}"))
    assert step.action == name.removesuffix(".json")


@pytest.mark.parametrize("name", ["extract.json", "index.json", "mark_failed.json"])
def test_each_extract_sample_is_accepted_by_the_extract_handler(name: str) -> None:
    from functions.extract.handler import Step

    step = Step.validate_python(load_event(f"enrichment/{name}"))
    assert step.action == name.removesuffix(".json")


def test_the_resolve_sample_is_accepted_by_the_resolve_handler() -> None:
    from functions.resolve.handler import Batch

    assert Batch.model_validate(load_event("enrichment/resolve.json")).event_ids


@pytest.mark.parametrize("name", ["plan.json", "scope.json", "finish.json"])
def test_each_consolidation_sample_is_accepted_by_the_consolidate_handler(name: str) -> None:
    from functions.consolidate.handler import Step

    assert Step.validate_python(load_event(f"consolidation/{name}")).action == name.removesuffix(".json")
