"""The export document's format (docs/export-format.md): its header, and one record model per exported
table. A record is a stored row without its world (the importing world is the URL's), vectors as base64."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from engram.model.common import Frozen
from engram.model.entities import LEGACY_ALIAS_SOURCES, AliasSource, ResolutionMethod, document_method
from engram.model.memories import LEGACY_STRATEGIES, ConflictKind, ConflictStrategy, document_conflict_kind

FORMAT: Literal["engram-export"] = "engram-export"
FORMAT_VERSION = 1
INT4_MAX = 2**31 - 1  # PostgreSQL's `integer`


# ---------------------------------------------------------------- the records: one model per exported table
class Row(BaseModel):
    """A stored row without its world (the importing world is the URL's) and with vectors as base64 float32."""

    model_config = ConfigDict(extra="forbid")


Vector = str  # base64 of little-endian float32, `dim` values (the header's embedder)


class ConfigRow(Row):
    key: str
    value: Any
    updated_at: datetime


class OntologyRow(Row):
    kind: Literal["entity_type", "predicate"]
    concept: str
    description: str | None = None
    source_table: str | None = None
    key_column: str | None = None
    name_column: str | None = None
    synonyms: list[str] = Field(default_factory=list)  # a predicate's other words (migration 0015)


class EntityRow(Row):
    entity_id: str
    name: str
    normalized_name: str
    entity_type: str = "thing"
    description: str | None = None
    external_ref: str | None = None
    created_at: datetime
    origin_event_id: str | None = None  # the event whose words created it
    embedding: Vector | None = None


class AliasRow(Row):
    entity_id: str
    alias: str
    normalized_alias: str
    user_id: str = ""  # '' is a global alias of the world
    confidence: float = Field(ge=0.0, le=1.0)
    source: str
    created_at: datetime
    origin_event_ids: list[str] = Field(default_factory=list)  # the events that taught a global alias

    @field_validator("source")
    @classmethod
    def _document_source(cls, source: str) -> str:
        # A document written before migration 0025 says `domain` where seed 004 says `domain_db`.
        return _known(LEGACY_ALIAS_SOURCES.get(source, source), AliasSource, "alias source")


class EventRow(Row):
    event_id: str
    user_id: str
    conversation_id: str
    role: Literal["user", "assistant", "system", "tool"]
    content: str
    content_type: str
    occurred_at: datetime
    received_at: datetime
    metadata: dict[str, Any] = Field(default_factory=dict)
    importance: float = Field(ge=0.0, le=1.0)
    tags: list[str] = Field(default_factory=list)
    enrichment_status: Literal["pending", "enriching", "enriched", "failed"] = "pending"
    enrichment_id: str | None = None
    enrichment_error: str | None = None
    embedding: Vector | None = None
    context_embedding: Vector | None = None


class MentionRow(Row):
    """Keyed by (event, span): the `mention_id` (a random token) is given anew by the importing database."""

    event_id: str
    mention: str
    kind: str
    span_start: int = Field(ge=0, le=INT4_MAX)
    span_end: int = Field(ge=0, le=INT4_MAX)
    entity_id: str | None = None
    method: str
    confidence: float
    candidates: list[Any] = Field(default_factory=list)
    created_at: datetime

    @model_validator(mode="after")
    def _document_method(self) -> MentionRow:
        # A document written before migration 0025 uses engram's earlier names (coreference, domain, unresolved).
        self.method = _known(document_method(self.method, self.kind), ResolutionMethod, "resolution method")
        return self


def _known(value: str, vocabulary: Any, what: str) -> str:
    """`value` if the Literal `vocabulary` names it: a name engram would not read back is refused at import."""
    names = get_args(vocabulary)
    if value not in names:
        raise ValueError(f"unknown {what} {value!r}: one of {', '.join(names)}")
    return value


class RelationshipRow(Row):
    relationship_id: str
    source_entity_id: str
    relation: str
    target_entity_id: str
    confidence: float = Field(ge=0.0, le=1.0)
    evidence_event_ids: list[str] = Field(default_factory=list)
    source_memory_ids: list[str] = Field(default_factory=list)
    created_at: datetime
    updated_at: datetime


MemoryStatus = Literal["active", "superseded", "archived"]


class EpisodicRow(Row):
    memory_id: str
    user_id: str
    conversation_id: str
    content: str
    event_ids: list[str]
    entity_ids: list[str] = Field(default_factory=list)
    entities: list[Any] = Field(default_factory=list)
    importance: float = Field(ge=0.0, le=1.0)
    occurred_at: datetime
    status: MemoryStatus = "active"
    created_at: datetime
    embedding: Vector | None = None


class SemanticRow(Row):
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
    confidence_factors: dict[str, Any] = Field(default_factory=dict)  # base, reinforcement, source, source_weight
    embedding: Vector | None = None


class ProceduralRow(Row):
    memory_id: str
    user_id: str | None = None
    pattern: str
    support_count: int
    source_ids: list[str] = Field(default_factory=list)
    confidence: float = Field(ge=0.0, le=1.0)
    status: MemoryStatus = "active"
    created_at: datetime
    embedding: Vector | None = None


class SummaryRow(Row):
    summary_id: str
    user_id: str | None = None
    scope_kind: Literal["entity", "conversation", "user"]
    scope_id: str
    content: str
    key_facts: list[Any] = Field(default_factory=list)
    source_ids: list[str] = Field(default_factory=list)
    confidence: float = Field(ge=0.0, le=1.0)
    created_at: datetime
    embedding: Vector | None = None


class ConflictRow(Row):
    conflict_id: str
    memory_id: str
    conflicting_memory_id: str
    status: Literal["open", "resolved"] = "open"
    strategy: str | None = None
    reason: str | None = None
    created_at: datetime
    resolved_at: datetime | None = None
    kind: str = "memory_vs_memory"
    winner_memory_id: str | None = None
    resolved_by: str | None = None
    note: str | None = None

    @model_validator(mode="after")
    def _document_names(self) -> ConflictRow:
        # A document written before migration 0025: same_predicate / cross_predicate, trust_domain_database and
        # recency_gap become seed 004's conflict types and strategies.
        self.kind = _known(document_conflict_kind(self.kind if "kind" in self.model_fields_set else "same_predicate",
                                                  self.strategy), ConflictKind, "conflict kind")
        if self.strategy is not None:
            self.strategy = _known(LEGACY_STRATEGIES.get(self.strategy, self.strategy), ConflictStrategy,
                                   "conflict strategy")
        return self


class SignalRow(Row):
    signal_id: str
    conversation_id: str
    user_id: str
    event_id: str
    signal_type: str
    content: str
    content_hash: str
    confidence: float = Field(ge=0.0, le=1.0)
    assumption_status: str | None = None
    occurred_at: datetime
    position: int = 0
    created_at: datetime
    updated_at: datetime
    dismissed_at: datetime | None = None
    embedding: Vector | None = None


class SignalCursorRow(Row):
    conversation_id: str
    last_event_id: str
    last_occurred_at: datetime
    pending_event_ids: list[str] = Field(default_factory=list)
    chars_since: int = Field(default=0, ge=0)
    version: int = 1
    updated_at: datetime


class QueryRow(Row):
    query_id: str
    user_id: str
    question: str
    conversation_id: str | None = None
    config: dict[str, Any]
    status: Literal["pending", "processing", "completed", "failed"]
    info_requests_used: int = 0
    answer: dict[str, Any] | None = None
    trace: list[Any] = Field(default_factory=list)
    model: str | None = None
    model_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    error: str | None = None
    signals: list[Any] = Field(default_factory=list)
    mode: Literal["answer", "research"] = "answer"
    research: dict[str, Any] | None = None
    created_at: datetime
    completed_at: datetime | None = None


class InsightStateRow(Row):
    conversation_id: str
    turns: int = Field(default=0, ge=0)
    checked_turn: int = Field(default=0, ge=0)
    inflection_turn: int | None = None
    intervention_turn: int | None = None
    updated_at: datetime


class InflectionRow(Row):
    inflection_id: str
    conversation_id: str
    turn: int = Field(ge=1)
    kind: str
    confidence: float = Field(ge=0.0, le=1.0)
    suggested_topic: str
    rationale: str = ""
    signal_ids: list[str] = Field(default_factory=list)
    event_ids: list[str] = Field(default_factory=list)
    model: str
    created_at: datetime


class InterventionRow(Row):
    intervention_id: str
    conversation_id: str
    kind: str
    status: Literal["open", "dismissed"] = "open"
    message: str
    signal_ids: list[str] = Field(default_factory=list)
    turn: int = Field(ge=1)
    created_at: datetime
    dismissed_at: datetime | None = None


class ConsolidationRunRow(Row):
    run_id: str
    started_at: datetime
    finished_at: datetime | None = None
    stats: dict[str, Any] = Field(default_factory=dict)


@dataclass(frozen=True)
class RecordKind:
    """One exported table: its record type, its key (what makes an import idempotent and orders pages),
    its vector columns, the keyword-index document kind of its rows, and whether a user export has it."""

    name: str
    table: str
    model: type[Row]
    key: tuple[str, ...]
    vectors: tuple[str, ...] = ()
    doc_kind: str | None = None
    per_user: bool = True
    generated: tuple[str, ...] = ()  # columns the importing database fills itself
    ids: tuple[str, ...] = ()  # columns holding ids the API addresses (a list column: every item), checked on import

    @property
    def columns(self) -> list[str]:
        return [f for f in self.model.model_fields if f not in self.vectors]


# In dependency order: an alias after its entity, a mention after its event, a conflict after its memories.
RECORD_KINDS: tuple[RecordKind, ...] = (
    RecordKind("config", "system_config", ConfigRow, ("key",), per_user=False),
    RecordKind("ontology", "domain_ontology", OntologyRow, ("kind", "concept"), per_user=False),
    RecordKind("entity", "canonical_entities", EntityRow, ("entity_id",), ("embedding",), "entity", ids=("entity_id",)),
    RecordKind("alias", "entity_aliases", AliasRow, ("normalized_alias", "entity_id", "user_id"),
               ids=("entity_id", "user_id")),
    RecordKind("event", "chat_events", EventRow, ("event_id",), ("embedding", "context_embedding"), "event",
               ids=("event_id", "user_id", "conversation_id")),
    RecordKind("mention", "entity_mentions", MentionRow, ("event_id", "span_start", "span_end"),
               generated=("mention_id",), ids=("event_id", "entity_id")),
    RecordKind("relationship", "entity_relationships", RelationshipRow, ("relationship_id",),
               ids=("relationship_id", "source_entity_id", "target_entity_id", "evidence_event_ids",
                    "source_memory_ids")),
    RecordKind("episodic", "episodic_memories", EpisodicRow, ("memory_id",), ("embedding",), "episodic",
               ids=("memory_id", "user_id", "conversation_id", "event_ids", "entity_ids")),
    RecordKind("semantic", "semantic_memories", SemanticRow, ("memory_id",), ("embedding",), "semantic",
               ids=("memory_id", "user_id", "subject_entity_id", "object_entity_id", "source_event_ids")),
    RecordKind("procedural", "procedural_memories", ProceduralRow, ("memory_id",), ("embedding",), "procedural",
               ids=("memory_id", "user_id")),
    RecordKind("summary", "memory_summaries", SummaryRow, ("summary_id",), ("embedding",), "summary",
               ids=("summary_id", "user_id", "scope_id")),
    RecordKind("conflict", "memory_conflicts", ConflictRow, ("conflict_id",),
               ids=("conflict_id", "memory_id", "conflicting_memory_id", "winner_memory_id")),
    RecordKind("signal", "signals", SignalRow, ("signal_id",), ("embedding",),
               ids=("signal_id", "conversation_id", "user_id", "event_id")),
    RecordKind("signal_cursor", "signal_cursors", SignalCursorRow, ("conversation_id",), per_user=False,
               ids=("conversation_id", "last_event_id", "pending_event_ids")),
    RecordKind("query", "world_queries", QueryRow, ("query_id",), ids=("query_id", "user_id", "conversation_id")),
    RecordKind("insight_state", "insight_states", InsightStateRow, ("conversation_id",), per_user=False,
               ids=("conversation_id",)),
    RecordKind("inflection", "inflections", InflectionRow, ("inflection_id",), per_user=False,
               ids=("inflection_id", "conversation_id", "signal_ids", "event_ids")),
    RecordKind("intervention", "interventions", InterventionRow, ("intervention_id",), per_user=False,
               ids=("intervention_id", "conversation_id", "signal_ids")),
    RecordKind("consolidation_run", "consolidation_runs", ConsolidationRunRow, ("run_id",), per_user=False,
               ids=("run_id",)),
)
KINDS = {k.name: k for k in RECORD_KINDS}
# Tables with a world_id that are not exported, and why. A test holds every world table to one of the two lists.
NOT_EXPORTED = {
    "index_outbox": "a queue of keyword-index writes: the import writes its own for what it inserts",
    "keyword_documents": "the PostgreSQL keyword index: derived data, rebuilt from the rows by the import",
    "query_contexts": "a query loop's working context between steps; a finished query keeps its answer and trace",
    "erased_users": "the world's record of erasures (who, when): it holds no memory to carry to another world",
    "llm_usage": "the world's model spend by day and stage: a running count for its budget, not memory",
    "memory_audit": "this world's record of the user's corrections and deletions of facts: the facts as they are "
                    "now are exported; what they were (and a deleted fact) stays behind",
}


# ---------------------------------------------------------------- the header
class EmbedderInfo(Frozen):
    name: str
    dim: int = Field(ge=1)


class ExportHeader(Frozen):
    format: Literal["engram-export"]
    version: int
    schema_version: int = Field(ge=1)
    world_id: str
    user_id: str | None = None
    exported_at: datetime
    embedder: EmbedderInfo | None = None  # None: the document carries no vectors
    counts: dict[str, int]


class ImportResult(Frozen):
    world_id: str
    source_world_id: str
    records: int
    inserted: dict[str, int]
    skipped: dict[str, int]
    vectors: Literal["imported", "recomputed", "none"]
    vectors_computed: int
    index_documents: int
