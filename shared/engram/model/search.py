"""Search results as the brains and their fusion return them."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field

from engram.model.common import Frozen

DocKind = Literal["event", "episodic", "semantic", "summary", "procedural", "entity"]
Brain = Literal["keyword", "semantic", "graph", "expansion"]


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
    event_ids: list[str] = Field(default_factory=list)  # the events it comes from (an event: itself)
    confidence: float = 1.0  # a fact's or summary's stored confidence; 1 for what was observed
    reinforcements: int = 0  # times a fact was confirmed again
    validated_at: datetime | None = None  # when its confidence was last confirmed (decay runs from here)


class LinkedTurn(Frozen):
    """A turn the expansion brain reached from the question's entities: how (the fact it states, the relationship
    it is evidence of, the reached entities it names together, or said by one), how strongly (the entity's graph
    weight, times the linking fact's similarity to the question) and how near the question it reads."""

    event_id: str
    text: str
    user_id: str
    conversation_id: str
    occurred_at: datetime
    via: Literal["fact", "relationship", "mention", "said"]
    weight: float
    similarity: float


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
    event_ids: list[str] = Field(default_factory=list)  # the events it comes from, for citing and evaluation
    # An event's turn before it in its conversation, said by someone else, its end only (retrieval.replies).
    replying_to: str | None = None


class QueryEntity(Frozen):
    """An entity the query names, as resolution found it: it seeds the graph brain."""

    entity_id: str
    name: str
    method: str  # exact, alias or fuzzy
    user_id: str | None = None  # the user this entity stands for, when it is one


class Suggestion(Frozen):
    """Serendipity: an entity related to what was found that the ranking did not include."""

    entity_id: str
    name: str
    reason: str
    confidence: float  # how sure the suggestion is: the entity's graph weight (1 a seed, less per hop)


class BrainReport(Frozen):
    candidates: int
    elapsed_ms: float


class SearchResponse(Frozen):
    query: str
    interpretation: str  # one line: the intent, the brains' weights, the entities, the keyword query
    hits: list[SearchHit]
    search_time_ms: float
    query_class: str = "semantic"  # exact_name, relationship, type, temporal or semantic
    weights: dict[str, float] = Field(default_factory=dict)  # per brain
    keyword_query: str = ""  # what the keyword brain was asked
    entities: list[QueryEntity] = Field(default_factory=list)
    total_matches: int = 0  # distinct documents the brains found
    brains: dict[str, BrainReport] = Field(default_factory=dict)
    serendipity: list[Suggestion] = Field(default_factory=list)
    # Brains that could not be reached (the keyword index down): the ranking is the other brains' alone.
    unavailable: list[Brain] = Field(default_factory=list)
    # Nothing relevant: no candidate, none with the evidence of being about the question (`search_min_evidence`)
    # or none above the relevance floor (`search_min_relevance`).
    nothing_relevant: bool = False
