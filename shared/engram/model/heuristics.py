"""Heuristics: every tunable number of the business rules, named once, in one section per package.

A world overrides them by their flat names (`system_config` key `heuristics`: `{"rrf_k": 30}`, never
`retrieval.rrf_k`), so a name is unique across sections and the flat view is what the config routes list.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic_core import InitErrorDetails

from engram.model.heuristic_sections import ConsolidationHeuristics as ConsolidationHeuristics
from engram.model.heuristic_sections import ContextHeuristics as ContextHeuristics
from engram.model.heuristic_sections import ExtractHeuristics as ExtractHeuristics
from engram.model.heuristic_sections import GraphHeuristics as GraphHeuristics
from engram.model.heuristic_sections import IngestHeuristics as IngestHeuristics
from engram.model.heuristic_sections import InsightHeuristics as InsightHeuristics
from engram.model.heuristic_sections import KeywordMatch as KeywordMatch
from engram.model.heuristic_sections import QueryHeuristics as QueryHeuristics
from engram.model.heuristic_sections import ResolveHeuristics as ResolveHeuristics
from engram.model.heuristic_sections import RetrievalHeuristics as RetrievalHeuristics
from engram.model.heuristic_sections import Section
from engram.model.heuristic_sections import SignalHeuristics as SignalHeuristics
from engram.model.offline_heuristics import OfflineHeuristics as OfflineHeuristics


class Heuristics(BaseModel):
    """Every tunable number of the business rules, in one section per package. A world may override any of
    them through the `system_config` table (key `heuristics`, a JSON object of their flat names)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    ingest: IngestHeuristics = Field(default_factory=IngestHeuristics)
    resolve: ResolveHeuristics = Field(default_factory=ResolveHeuristics)
    graph: GraphHeuristics = Field(default_factory=GraphHeuristics)
    extract: ExtractHeuristics = Field(default_factory=ExtractHeuristics)
    signals: SignalHeuristics = Field(default_factory=SignalHeuristics)
    insights: InsightHeuristics = Field(default_factory=InsightHeuristics)
    retrieval: RetrievalHeuristics = Field(default_factory=RetrievalHeuristics)
    context: ContextHeuristics = Field(default_factory=ContextHeuristics)
    query: QueryHeuristics = Field(default_factory=QueryHeuristics)
    consolidation: ConsolidationHeuristics = Field(default_factory=ConsolidationHeuristics)
    offline: OfflineHeuristics = Field(default_factory=OfflineHeuristics)

    def flat(self) -> dict[str, Any]:
        """Every heuristic by its flat name (the names a world's overrides use) with its value."""
        return {name: value for section in type(self).model_fields
                for name, value in getattr(self, section).model_dump().items()}

    def with_overrides(self, overrides: dict[str, object] | None) -> Heuristics:
        """These heuristics with a world's overrides, by flat name, applied; an unknown name is an error, and
        every error names the flat heuristic. A table-valued heuristic (base_importance, tag_keywords,
        rank_source_weights) is merged key by key, so a world that overrides one content type's score keeps
        the others and the `default`."""
        if not overrides:
            return self
        updated: dict[str, Section] = {}
        errors: list[InitErrorDetails] = []
        for section in type(self).model_fields:
            model = getattr(self, section)
            values = {name: _merged(getattr(model, name), value) for name, value in overrides.items()
                      if SECTION_OF.get(name) == section}
            if not values:
                continue
            try:
                updated[section] = type(model).model_validate({**model.model_dump(), **values})
            except ValidationError as exc:
                errors.extend(InitErrorDetails(type=e["type"], loc=e["loc"], input=e["input"], ctx=e.get("ctx", {}))
                              for e in exc.errors())
        errors.extend(InitErrorDetails(type="extra_forbidden", loc=(name,), input=value)
                      for name, value in overrides.items() if name not in SECTION_OF)
        if errors:
            raise ValidationError.from_exception_data(type(self).__name__, errors)
        return self.model_copy(update=updated)


def _merged(current: object, value: object) -> object:
    """A table-valued override merged key by key into the table in force; any other value replaces."""
    return {**current, **value} if isinstance(current, dict) and isinstance(value, dict) else value


def _sections_by_field() -> dict[str, str]:
    """Each flat name's section; a name in two sections would make the flat overrides ambiguous."""
    owner: dict[str, str] = {}
    for section, info in Heuristics.model_fields.items():
        model = info.annotation
        if not (isinstance(model, type) and issubclass(model, Section)):
            raise TypeError(f"heuristics section {section!r} is not a section model")
        for name in model.model_fields:
            if name in owner:
                raise TypeError(f"heuristic {name!r} is in both {owner[name]!r} and {section!r}")
            owner[name] = section
    return owner


SECTION_OF: dict[str, str] = _sections_by_field()
"""The section of every heuristic, by its flat name."""

DEFAULT_HEURISTICS = Heuristics()
