"""A world's overrides of the defaults (`system_config`): validated at every write (the config routes, an
import), and at every read only the rows that still validate are applied."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError, field_validator

from engram.model.heuristics import DEFAULT_HEURISTICS

TagName = Annotated[str, StringConstraints(min_length=1)]
TagKeyword = Annotated[str, StringConstraints(min_length=1)]


class WorldConfig(BaseModel):
    """A world's overrides of the defaults, as `system_config` holds them (one row per field). Every write
    (the config routes, an import) validates them here, and every read keeps only the rows that validate."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    heuristics: dict[str, Any] = Field(default_factory=dict, description=(
        "heuristics to override, by name (see GET .../config for every one and its value in force); a table-valued "
        "one (base_importance, tag_keywords, rank_source_weights...) is merged key by key with the defaults"))
    tag_categories: dict[TagName, list[TagKeyword]] = Field(default_factory=dict, description=(
        "tag categories of the world's own, or other keywords for a default one, in the order tags are given"))
    llm_budget: int | None = Field(default=None, ge=0, description=(
        "model tokens (in and out, every stage) the world may spend per UTC day; once spent its stages fall back to "
        "the offline engine until the next day. Unset: the deployment's ENGRAM_LLM_DAILY_TOKENS"))

    @field_validator("heuristics")
    @classmethod
    def _applicable(cls, value: dict[str, Any]) -> dict[str, Any]:
        problems = heuristics_problems(value)
        if problems:
            raise ValueError("; ".join(problems))
        return value


def heuristics_problems(overrides: Mapping[str, Any]) -> list[str]:
    """Why overrides cannot apply, one line each naming the heuristic: unknown, of the wrong type, or a number
    that is not finite, is negative, or is zero where the rules divide by it or step by it. Empty when they apply."""
    try:
        DEFAULT_HEURISTICS.with_overrides(dict(overrides))
    except ValidationError as exc:
        return [f"{'.'.join(map(str, e['loc'])) or 'heuristics'}: {e['msg']}" for e in exc.errors()]
    problems = []
    for name, value in overrides.items():
        numbers = _numbers(value)
        if not all(math.isfinite(n) and n >= 0 for n in numbers):
            problems.append(f"{name}: every number must be finite and not negative")
        elif _divides(name) and not all(n > 0 for n in numbers):
            problems.append(f"{name}: must be above zero")
    return problems


def _numbers(value: Any) -> list[float]:
    if isinstance(value, bool):
        return []
    if isinstance(value, int | float):
        return [value]
    if isinstance(value, Mapping):
        return [n for item in value.values() for n in _numbers(item)]
    if isinstance(value, list | tuple):
        return [n for item in value for n in _numbers(item)]
    return []


def _divides(name: str) -> bool:
    """A heuristic the rules divide by or step by: a half-life, a window, a batch, the characters per token."""
    return name.endswith(("_half_life_days", "_half_life_long_days")) or name in {
        "chars_per_token", "max_events_per_batch", "extraction_window", "inflection_interval_turns"}


def world_overrides(stored: Mapping[str, Any]) -> tuple[WorldConfig, dict[str, str]]:
    """A world's stored config rows as overrides: those that validate, and why each other one is ignored. A row
    stored before a rule changed, or written by hand, must not break every request of its world."""
    fields: dict[str, Any] = {}
    ignored: dict[str, str] = {}
    for key, value in stored.items():
        try:
            fields[key] = getattr(WorldConfig.model_validate({key: value}), key)
        except ValidationError as exc:
            ignored[key] = "; ".join(e["msg"] for e in exc.errors())
    return WorldConfig.model_construct(**fields), ignored
