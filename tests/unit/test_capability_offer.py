"""The capability registry is the one list of what the model may ask for: every capability it holds is
in the prompts, in the request validation, in the dispatch and in the offer, and a request outside the
offer (an unknown capability, an id the context does not hold) is refused."""

from __future__ import annotations

import dataclasses
import re
import typing
from typing import Any

import pytest
from pydantic import ValidationError

from engram.errors import CapabilityRejected
from engram.model.context import QueryContext
from engram.model.queries import ContextItem, InfoRequest
from engram.model.requests import Capability as CapabilityName
from engram.model.world import World
from engram.prompts import answer, research
from engram.query import offer as offers

HELD = {offers.ENTITIES: "ent_dana", offers.EXPANDABLE: "ent_dana", offers.DEFINITIONS: "person",
        offers.CONVERSATIONS: "c1"}


def _context() -> QueryContext:
    dana = ContextItem(kind="entity", id="ent_dana", text="Dana (person) [summary]", full=False, name="Dana",
                       entity_ids=["ent_dana"])
    return QueryContext(query_id="q", world_id="w", question="Where does Dana live?", items=[dana],
                        conversation_ids=["c1"], definitions=["person"])


def _params(capability: offers.Capability[Any], stranger: str | None = None) -> dict[str, Any]:
    """The smallest params a request of this capability takes: held ids (or `stranger` for every id
    parameter), a word for every other required text."""
    params: dict[str, Any] = {}
    for name, info in capability.params.model_fields.items():
        if name == "capability" or not info.is_required():
            continue
        kind = capability.ids.get(name)
        value = (stranger or HELD[kind]) if kind else "Dana"
        params[name] = [value] if typing.get_origin(info.annotation) is list else value
    return params


def test_the_registry_names_exactly_the_capabilities_an_info_request_may_carry() -> None:
    assert set(offers.CAPABILITIES) == set(typing.get_args(CapabilityName))
    union = typing.get_args(offers.Request)[0]
    assert set(typing.get_args(union)) == {c.params for c in offers.CAPABILITIES.values()}


def test_every_registered_capability_has_its_line_in_the_answer_and_research_prompts() -> None:
    lines = answer.capability_lines()
    assert len(lines) == len(offers.CAPABILITIES)
    for system in (research.PLAN_SYSTEM, research.EVALUATE_SYSTEM):
        assert "\n".join(lines) + "\n\n" in system
    assert "\n".join(lines) + "\n" in answer.REQUEST_INFO  # the answer round: on request_info, sent with it only
    for name, capability in offers.CAPABILITIES.items():
        assert any(line.startswith(f"- {name} {{") for line in lines), name
        assert capability.summary and not capability.summary.endswith(".")
    assert "- get_relationships {entity_id, depth 1-3}: an entity's relationships, either direction" in lines
    assert "- list_entity_definitions {}: the kinds of entity the world holds, with counts" in lines


def test_every_registered_capability_validates_its_request_and_dispatches_to_its_own_executor(
        monkeypatch: pytest.MonkeyPatch) -> None:
    context, ran = _context(), []
    offer = offers.offer(context)
    for name, capability in offers.CAPABILITIES.items():
        def record(clients: Any, world: Any, ctx: QueryContext, user_id: str, request: Any, name: str = name) -> list[ContextItem]:
            ran.append((name, request.capability, user_id))
            return []

        monkeypatch.setitem(offers.CAPABILITIES, name, dataclasses.replace(capability, run=record))
        typed = offer.validate(InfoRequest(capability=name, params=_params(capability)))  # type: ignore[arg-type]
        assert isinstance(typed, capability.params)
        assert offers.execute(typing.cast(Any, None), World(context.world_id), context, "dana", typed) == []
    assert ran == [(name, name, "dana") for name in offers.CAPABILITIES]


def test_a_request_for_a_capability_that_is_not_registered_is_refused() -> None:
    with pytest.raises(ValidationError, match="capability"):
        InfoRequest(capability="browse_web", params={"url": "https://example.com"})  # type: ignore[arg-type]
    smuggled = InfoRequest.model_construct(capability="browse_web", params={"url": "https://example.com"})
    with pytest.raises(CapabilityRejected, match="browse_web"):
        offers.offer(_context()).validate(smuggled)


def test_every_id_parameter_of_every_capability_refuses_an_id_the_context_does_not_hold() -> None:
    offer, kinds = offers.offer(_context()), set()
    for name, capability in offers.CAPABILITIES.items():
        for parameter, kind in capability.ids.items():
            params = _params(capability)
            params[parameter] = _params(capability, stranger="elsewhere")[parameter]
            with pytest.raises(CapabilityRejected, match=f"^{name}: .*elsewhere"):
                offer.validate(InfoRequest(capability=name, params=params))  # type: ignore[arg-type]
            kinds.add(kind)
    assert kinds == set(HELD)  # entity ids (those to expand too), definitions and conversations are all restricted


def test_the_offer_lists_each_kind_of_held_id_with_every_parameter_that_names_it() -> None:
    lines = offers.offer(_context()).describe()
    listed = {p.split(".")[-1] for line in lines
              for group in re.findall(r"\(([a-z_.]+(?:, [a-z_.]+)*)\): \[", line) for p in group.split(", ")}
    assert listed == {p for c in offers.CAPABILITIES.values() for p in c.ids}
    assert ("- entity ids (get_relationships.entity_id, get_entity_timeline.entity_id, from_entity_id, to_entity_id): "
            "[ent_dana]") in lines
    assert "- entity ids held only as summaries, to expand (expand_entity.entity_id, entity_ids): [ent_dana]" in lines
    assert any(line.endswith("[person]") for line in lines) and any(line.endswith("[c1]") for line in lines)
