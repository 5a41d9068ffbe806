"""Memory layers 2-4: episodic, semantic facts, procedural habits, summaries, and conflicts."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import Field, model_validator

from engram.model.common import Frozen, Record

MemoryStatus = Literal["active", "superseded", "archived"]
MemoryLayer = Literal["episodic", "semantic", "procedural", "summary"]
ConflictStatus = Literal["open", "resolved"]
# Where a fact comes from: the speaker about themselves, the speaker about someone else, the world's domain database.
FactSource = Literal["user", "reported", "domain"]
# Seed 004's conflict types (4. Conflict Detection): two facts of one predicate, a fact against the domain
# database's value, two facts of different predicates the model found contradicting.
ConflictKind = Literal["memory_vs_memory", "memory_vs_db", "semantic_conflict"]
# Seed 004's strategies: trust_db, trust_recent (the more recent, past the recency gap), ask_user (left open for
# the user). engram's extensions, settled by the rules too: confidence_gap (the surer side, Pattern 3's rule),
# correction (the user's own answer), change (a new value said to replace the old), history (an older value that
# the current one followed).
ConflictStrategy = Literal["trust_db", "trust_recent", "ask_user", "confidence_gap", "correction", "change", "history"]
# The names engram stored before migration 0025 (and exports written before it), in the document's names.
LEGACY_STRATEGIES = {"trust_domain_database": "trust_db", "recency_gap": "trust_recent"}


def document_conflict_kind(kind: str, strategy: str | None) -> str:
    """A stored or exported conflict kind in the document's names: same_predicate is memory_vs_db where the
    domain database's value decided it, else memory_vs_memory; cross_predicate is semantic_conflict."""
    if kind == "same_predicate":
        return "memory_vs_db" if strategy in ("trust_domain_database", "trust_db") else "memory_vs_memory"
    return "semantic_conflict" if kind == "cross_predicate" else kind


class EpisodeEntity(Frozen):
    """An entity an episode involves, and how: the speaker, a fact's subject or object, or a mention."""

    entity_id: str
    name: str
    entity_type: str
    roles: list[str] = Field(default_factory=list)


class ConfidenceFactors(Frozen):
    """Why a fact is believed as much as it is. Stored confidence = min(cap, base x source_weight +
    reinforcement); recency (passive decay since the last validation) is applied when it is read."""

    base: float = Field(ge=0.0, le=1.0)  # the extractor's confidence when the fact was first stated
    reinforcement: float = Field(default=0.0, ge=0.0, le=1.0)  # what restatements added, with diminishing returns
    source: FactSource = "user"
    source_weight: float = Field(default=1.0, ge=0.0, le=1.0)


class ConfidenceExplanation(Frozen):
    """A fact's confidence as of a read: the stored factors, the decay since its last validation, the result."""

    base: float
    reinforcement: float
    source: FactSource
    source_weight: float
    recency: float  # 1.0 just validated, 0.5 one decay half-life later
    stored: float
    effective: float


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
    entities: list[EpisodeEntity] = Field(default_factory=list)


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
    factors: ConfidenceFactors | None = None  # None: a fact stored before factors were kept

    def statement(self, subject_name: str) -> str:
        return f"{subject_name} {self.predicate.replace('_', ' ')} {self.object_value}"

    def holds_at(self, at: datetime) -> bool:
        """Whether memory held it true at `at`: begun by then (its valid_from, else when it was recorded), not
        ended by then, not forgotten (archived)."""
        return (self.status != "archived" and (self.valid_from or self.created_at) <= at
                and (self.valid_to is None or self.valid_to > at))

    def as_held_at(self, at: datetime | None) -> SemanticMemory:
        """The fact as memory held it at `at` (as it is without one): one true then was current then, with no
        end known yet; what came after is not known then."""
        if at is None or not self.holds_at(at):
            return self
        return self.model_copy(update={"status": "active", "valid_to": None})


class OntologyPredicate(Frozen):
    """A predicate of the world's ontology (a `domain_ontology` row of kind 'predicate'): the name facts are
    recorded under, what it means, and the other words a model or a rule may use for it."""

    concept: str
    description: str | None = None
    synonyms: list[str] = Field(default_factory=list)


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
    strategy: ConflictStrategy | None = None
    reason: str | None = None
    created_at: datetime
    resolved_at: datetime | None = None
    kind: ConflictKind = "memory_vs_memory"
    winner_memory_id: str | None = None  # the side kept; None while open, or when the user kept both
    resolved_by: Literal["rules", "user"] | None = None
    note: str | None = None


class ExplainedFact(SemanticMemory):
    """A fact as read: the stored row, its effective confidence as of the read and why."""

    effective_confidence: float
    explanation: ConfidenceExplanation


class FactVersion(ExplainedFact):
    """One value in a fact's history, as read, and how it ended: the fact that replaced it and the resolved
    conflict that closed it (both None while it holds, while its conflict is open, or after a stated end)."""

    superseded_by: str | None = None
    closed_by: MemoryConflict | None = None


class FactHistory(Frozen):
    """The values one user's fact about one subject and predicate has had, in the order they became true (each
    with valid_from, valid_to and status), which hold now, and every conflict between them."""

    world_id: str
    memory_id: str  # the fact asked about
    user_id: str
    subject_entity_id: str
    subject: str
    predicate: str
    current: list[str] = Field(default_factory=list)  # the active values' memory ids (two while a conflict is open)
    versions: list[FactVersion] = Field(default_factory=list)
    conflicts: list[MemoryConflict] = Field(default_factory=list)


class ConflictDetail(MemoryConflict):
    """A conflict with both sides, each explained as of the read."""

    memory: ExplainedFact | None = None
    conflicting_memory: ExplainedFact | None = None


class ConflictResolution(Frozen):
    """The user's answer to a conflict: the memory to keep (the other is superseded), or both (no conflict)."""

    winner_memory_id: str | None = Field(default=None, max_length=128)
    keep_both: bool = False
    note: str | None = Field(default=None, max_length=1000)

    @model_validator(mode="after")
    def _one_answer(self) -> ConflictResolution:
        if (self.winner_memory_id is None) == (not self.keep_both):
            raise ValueError("give either winner_memory_id or keep_both: true")
        return self


# What `GET .../users/{user}/memories?layer=` answers, one model per layer: facts come explained as of now.
LayerMemory = ExplainedFact | EpisodicMemory | ProceduralMemory | MemorySummary
LAYER_MODELS: dict[str, type[LayerMemory]] = {"semantic": ExplainedFact, "episodic": EpisodicMemory,
                                              "procedural": ProceduralMemory, "summary": MemorySummary}


class MemoryCorrection(Frozen):
    """The user's correction of a fact: a new value, confidence or valid time (at least one). A field sent as null
    clears it (valid_from, valid_to); object_value and confidence cannot be null."""

    object_value: str | None = Field(default=None, min_length=1, max_length=1000)
    confidence: float | None = Field(default=None, ge=0.0, le=1.0)
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    note: str | None = Field(default=None, max_length=1000)

    @model_validator(mode="after")
    def _something(self) -> MemoryCorrection:
        given = self.model_fields_set - {"note"}
        if not given:
            raise ValueError("give at least one of object_value, confidence, valid_from, valid_to")
        for name in ("object_value", "confidence"):
            if name in given and getattr(self, name) is None:
                raise ValueError(f"{name} cannot be null")
        if self.valid_from is not None and self.valid_to is not None and self.valid_to < self.valid_from:
            raise ValueError("valid_to must not be before valid_from")
        return self


AuditAction = Literal["correct", "delete"]


class MemoryAudit(Record):
    """What a correction or deletion of a fact did: the fact before (and after), when, by which request."""

    world_id: str
    audit_id: str
    memory_id: str
    user_id: str  # the fact's owner
    action: AuditAction
    before: dict[str, Any]
    after: dict[str, Any] | None = None
    note: str | None = None
    request_id: str | None = None
    at: datetime


class MemoryDeletion(Frozen):
    """A fact deleted: gone from memory, the keyword index and the graph; the audit row keeps what it was."""

    world_id: str
    memory_id: str
    audit_id: str
    deleted_at: datetime
    relationships_removed: int = 0
    conflicts_removed: int = 0
