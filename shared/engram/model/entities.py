"""Canonical entities, their aliases, mentions in text, resolutions and relationships."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field

from engram.model.common import Frozen, Record

MentionKind = Literal["name", "pronoun", "description"]
ResolutionMethod = Literal[
    "exact", "alias", "fuzzy", "coreference", "domain", "created", "disambiguation_required", "unresolved"
]


class CanonicalEntity(Record):
    world_id: str
    entity_id: str
    name: str
    entity_type: str = "thing"
    description: str | None = None
    created_at: datetime
    aliases: list[str] = Field(default_factory=list)


class EntityAlias(Record):
    world_id: str
    entity_id: str
    alias: str
    user_id: str | None = None  # None: a global alias of the world
    confidence: float = Field(ge=0.0, le=1.0)
    source: ResolutionMethod | Literal["seed", "user"] = "seed"


class Mention(Frozen):
    text: str
    kind: MentionKind
    event_id: str
    start: int
    end: int


class Candidate(Frozen):
    entity_id: str
    name: str
    score: float


class Resolution(Frozen):
    mention: Mention
    method: ResolutionMethod
    entity_id: str | None
    confidence: float
    candidates: list[Candidate] = Field(default_factory=list)


class Relationship(Record):
    world_id: str
    relationship_id: str
    source_entity_id: str
    relation: str
    target_entity_id: str
    confidence: float = Field(ge=0.0, le=1.0)
    evidence_event_ids: list[str] = Field(default_factory=list)
    created_at: datetime
