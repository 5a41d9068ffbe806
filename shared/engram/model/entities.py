"""Canonical entities, their aliases, mentions in text, resolutions and relationships."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field, model_validator

from engram.model.common import Frozen, Identifier, Record
from engram.model.memories import SemanticMemory

MentionKind = Literal["name", "pronoun", "description"]
ResolutionMethod = Literal[
    "exact", "alias", "fuzzy", "llm_coreference", "domain_db", "no_candidates", "not_found",
    "created", "disambiguation_required", "user",
]
"""How a mention was resolved, in seed 004's names (1. Entity Resolution): exact, alias, fuzzy,
llm_coreference, domain_db, no_candidates (a reference no coreference linked), not_found (a name nothing
resolved). engram's extensions: created (a new entity, in a world without a domain database),
disambiguation_required (waiting for the user's choice), user (the user chose)."""
AliasSource = Literal["seed", "user", "created", "alias", "fuzzy", "coreference", "domain_db"]
"""What taught an alias: seed 004's `learn_alias` sources (fuzzy, coreference, domain_db), engram's alias
(a part or variant of a known name), created (the entity's own name), user (stated or chosen), seed (loaded)."""

# The names engram stored before migration 0025 (and exports written before it), in the document's names.
LEGACY_METHODS = {"coreference": "llm_coreference", "domain": "domain_db"}
LEGACY_ALIAS_SOURCES = {"domain": "domain_db"}


def unresolved_method(kind: str) -> ResolutionMethod:
    """A mention nothing resolved: a name is `not_found`, a pronoun or description `no_candidates`."""
    return "not_found" if kind == "name" else "no_candidates"


def document_method(method: str, kind: str) -> str:
    """A stored or exported method in the document's names (engram's earlier names mapped, others kept)."""
    if method == "unresolved":
        return unresolved_method(kind)
    return LEGACY_METHODS.get(method, method)


class CanonicalEntity(Record):
    world_id: str
    entity_id: str
    name: str
    entity_type: str = "thing"
    description: str | None = None
    created_at: datetime
    aliases: list[str] = Field(default_factory=list)
    external_ref: str | None = None  # "customers:42": the domain row it was created from; "user:dana": a user


class EntityAlias(Record):
    world_id: str
    entity_id: str
    alias: str
    user_id: str | None = None  # None: a global alias of the world
    confidence: float = Field(ge=0.0, le=1.0)
    source: AliasSource = "seed"
    origin_event_id: str | None = None  # the event whose words taught it: an erasure of its user takes it along


class Mention(Frozen):
    text: str
    kind: MentionKind
    event_id: str
    start: int
    end: int
    entity_type: str | None = None  # what a parser read the name as (person, organization, place, thing)
    may_create: bool = True  # False: a capitalised sentence start no parser read as a name resolves, never creates


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
    source_memory_ids: list[str] = Field(default_factory=list)  # the facts this edge stands for


class RecordedMention(Record):
    """A mention as resolution left it, with who said it where: the rows a user settles."""

    mention_id: str  # "men_" and 32 random hex digits (migration 0018): no order, no count
    world_id: str
    event_id: str
    user_id: str
    conversation_id: str
    text: str
    kind: MentionKind
    start: int
    end: int
    entity_id: str | None
    method: ResolutionMethod
    confidence: float
    candidates: list[Candidate] = Field(default_factory=list)
    created_at: datetime


class EntityDetail(CanonicalEntity):
    """An entity with every alias (whose it is, how sure, learned how), its facts and its edges."""

    alias_details: list[EntityAlias] = Field(default_factory=list)
    facts: list[SemanticMemory] = Field(default_factory=list)
    relationships: list[Relationship] = Field(default_factory=list)


class EntityPath(Frozen):
    """A chain of relationships from one entity to another; its confidence is the product of the edges'."""

    entity_ids: list[str]
    names: list[str]
    relationships: list[Relationship]
    confidence: float


class SettleRequest(Frozen):
    """The user's answer to a disambiguation: one of the entities (any of the world's), or a new one."""

    entity_id: Identifier | None = None
    new_entity: bool = False

    @model_validator(mode="after")
    def _one_answer(self) -> SettleRequest:
        if (self.entity_id is None) == (not self.new_entity):
            raise ValueError("give either entity_id or new_entity: true")
        return self


class Settlement(Frozen):
    mention: RecordedMention
    entity: CanonicalEntity
    alias: EntityAlias
    also_settled: list[str] = Field(default_factory=list)  # the user's other mentions of the same words


class DomainSource(Frozen):
    """A domain table holding instances of an entity type (a `domain_ontology` row)."""

    entity_type: str
    source_table: str
    key_column: str
    name_column: str

    @property
    def described(self) -> str:
        return f"{self.source_table}({self.key_column}, {self.name_column})"


class DomainMatch(Frozen):
    entity_type: str
    name: str
    external_ref: str  # "<table>:<key>"


class NameMatch(Frozen):
    """One row of the fast path for a name: an exact canonical name, a known alias, or a trigram neighbour
    (score: similarity times the alias's confidence)."""

    entity_id: str
    stage: Literal["exact", "alias", "fuzzy"]
    score: float
    user_id: str | None = None  # whose alias; None for a canonical name or a global alias
    source: str = "created"
    external_ref: str | None = None  # the entity's, when the store read it (`match_names`)
    # The entities within the walk's hops of this one, (id, hops) nearest first, when the store walked (`match_names`).
    near: tuple[tuple[str, int], ...] | None = None


class EntitySighting(Frozen):
    """An entity the conversation made salient: a resolved mention (where and when), or a relation of a
    speaker ("Sam is dana's boss") that a description like "my boss" can point at."""

    entity_id: str
    name: str
    entity_type: str
    event_id: str | None = None
    occurred_at: datetime | None = None
    start: int = 0
    relation: str | None = None  # "boss": this entity is the boss of `related_entity_id`
    related_entity_id: str | None = None
