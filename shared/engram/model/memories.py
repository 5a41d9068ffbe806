"""Memory layers 2-4: episodic, semantic facts, procedural habits, summaries, and conflicts."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field

from engram.model.common import Record

MemoryStatus = Literal["active", "superseded", "archived"]
MemoryLayer = Literal["episodic", "semantic", "procedural", "summary"]
ConflictStatus = Literal["open", "resolved"]


class EpisodicMemory(Record):
    world_id: str
    memory_id: str
    user_id: str
    conversation_id: str
    content: str
    event_ids: list[str]
    entity_ids: list[str] = Field(default_factory=list)
    importance: float = Field(ge=0.0, le=1.0)
    occurred_at: datetime
    status: MemoryStatus = "active"


class SemanticMemory(Record):
    """A fact: subject entity, predicate, object (a value or an entity), with confidence."""

    world_id: str
    memory_id: str
    user_id: str
    subject_entity_id: str
    predicate: str
    object_value: str
    object_entity_id: str | None = None
    confidence: float = Field(ge=0.0, le=1.0)
    reinforcement_count: int = 0
    source_event_ids: list[str] = Field(default_factory=list)
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    status: MemoryStatus = "active"
    created_at: datetime
    last_validated_at: datetime

    def statement(self, subject_name: str) -> str:
        return f"{subject_name} {self.predicate.replace('_', ' ')} {self.object_value}"


class ProceduralMemory(Record):
    world_id: str
    memory_id: str
    user_id: str | None
    pattern: str
    support_count: int
    source_ids: list[str]
    confidence: float = Field(ge=0.0, le=1.0)
    created_at: datetime


class MemorySummary(Record):
    world_id: str
    summary_id: str
    user_id: str | None
    scope_kind: Literal["entity", "conversation", "user"]
    scope_id: str
    content: str
    key_facts: list[str] = Field(default_factory=list)
    source_ids: list[str] = Field(default_factory=list)
    confidence: float = Field(ge=0.0, le=1.0)
    created_at: datetime


class MemoryConflict(Record):
    world_id: str
    conflict_id: str
    memory_id: str
    conflicting_memory_id: str
    status: ConflictStatus = "open"
    strategy: str | None = None
    reason: str | None = None
    created_at: datetime
    resolved_at: datetime | None = None
