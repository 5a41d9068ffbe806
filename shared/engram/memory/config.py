"""A world's config: its overrides of the default heuristics and tag categories, read with what is in force,
replaced, patched or reset to the defaults. Every write is validated whole before anything is stored."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from engram.errors import InvalidInput
from engram.model.overrides import WorldConfig, world_overrides
from engram.ports.clients import Clients


class WorldConfigView(BaseModel):
    model_config = ConfigDict(frozen=True)

    world_id: str
    overrides: WorldConfig = Field(description="what the world sets: its stored overrides that validate")
    ignored: dict[str, str] = Field(default_factory=dict, description=(
        "stored overrides that no longer validate, by key, and why: not applied (PUT, PATCH or DELETE replaces "
        "them)"))
    heuristics: dict[str, Any] = Field(description=(
        "the heuristics in force, every one by the name an override uses: the defaults with the overrides"))
    tag_categories: dict[str, list[str]] = Field(description="the tag categories in force, in the order tags are "
                                                             "given")


class WorldConfigPatch(BaseModel):
    """A JSON merge patch (RFC 7396) of a world's overrides: a value sets, null removes (a whole field, or
    one heuristic or tag category in it), what the patch does not name stays."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    heuristics: dict[str, Any] | None = None
    tag_categories: dict[str, Any] | None = None
    llm_budget: int | None = None


def read_config(clients: Clients, world_id: str) -> WorldConfigView:
    overrides, ignored = world_overrides(clients.store.world_config(world_id))
    heuristics = clients.heuristics.with_overrides(overrides.heuristics)
    categories = {name: list(words)
                  for name, words in {**heuristics.ingest.tag_keywords, **overrides.tag_categories}.items()}
    return WorldConfigView(world_id=world_id, overrides=overrides, ignored=ignored, heuristics=heuristics.flat(),
                           tag_categories=categories)


def replace_config(clients: Clients, world_id: str, config: WorldConfig) -> WorldConfigView:
    """The world's overrides become `config` (validated by its model); what it does not set is the default."""
    clients.store.set_world_config(world_id, config.model_dump(exclude_defaults=True))
    return read_config(clients, world_id)


def patch_config(clients: Clients, world_id: str, patch: WorldConfigPatch) -> WorldConfigView:
    """The world's overrides with `patch` merged in, validated whole (422 naming what does not validate)."""
    current, _ignored = world_overrides(clients.store.world_config(world_id))
    merged = merge_patch(current.model_dump(), patch.model_dump(exclude_unset=True))
    try:
        config = WorldConfig.model_validate(merged)
    except ValidationError as exc:
        raise InvalidInput("the patched config does not validate; nothing was changed",
                           [{"loc": ["body", *e["loc"]], "msg": e["msg"], "type": e["type"]} for e in exc.errors()]
                           ) from exc
    return replace_config(clients, world_id, config)


def reset_config(clients: Clients, world_id: str) -> WorldConfigView:
    """Every override of the world removed (ignored ones too): the defaults are in force."""
    clients.store.set_world_config(world_id, {})
    return read_config(clients, world_id)


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7396: objects merge member by member, null removes a member, anything else replaces."""
    if not isinstance(patch, dict):
        return patch
    merged = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = merge_patch(merged.get(key), value)
    return merged
