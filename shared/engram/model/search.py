"""Search results as the three brains and their fusion return them."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field

from engram.model.common import Frozen

DocKind = Literal["event", "episodic", "semantic", "summary", "procedural", "entity"]
Brain = Literal["keyword", "semantic", "graph"]


class IndexDocument(Frozen):
    """What the keyword index holds: derived from PostgreSQL rows, rebuildable at any time."""

    world_id: str
    doc_id: str  # the row's id (event_id, memory_id, summary_id, entity_id)
    kind: DocKind
    text: str
    user_id: str | None = None
    conversation_id: str | None = None
    entity_ids: list[str] = Field(default_factory=list)
    speaker: str | None = None
    occurred_at: datetime | None = None
    importance: float = 0.5


class KeywordHit(Frozen):
    """Higher score is better (BM25, engine-specific scale)."""

    doc_id: str
    kind: DocKind
    score: float
    highlights: list[str] = Field(default_factory=list)


class SemanticHit(Frozen):
    """Score is cosine similarity in [-1, 1], higher is better (never a distance)."""

    doc_id: str
    kind: DocKind
    score: float


class SearchHit(Frozen):
    doc_id: str
    kind: DocKind
    text: str
    score: float
    ranks: dict[str, int] = Field(default_factory=dict)
    highlights: list[str] = Field(default_factory=list)
    entity_ids: list[str] = Field(default_factory=list)
    user_id: str | None = None
    conversation_id: str | None = None
    occurred_at: datetime | None = None
    explanation: str | None = None


class SearchResponse(Frozen):
    query: str
    interpretation: str
    hits: list[SearchHit]
    search_time_ms: float
