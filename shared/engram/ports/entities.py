"""The entity store: canonical entities, their aliases, domain sources, the ontology (mentions and relationships
have stores of their own: `mentions.py`, `relationships.py`)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

from engram.model.entities import (
    CanonicalEntity,
    DomainSource,
    EntityAlias,
    NameMatch,
)
from engram.model.memories import OntologyPredicate


class EntityStore(Protocol):
    def get_entity(self, world_id: str, entity_id: str) -> CanonicalEntity | None: ...
    def find_entity_by_name(self, world_id: str, name: str) -> CanonicalEntity | None:
        """Exact match on the normalized canonical name."""
        ...
    def find_alias(self, world_id: str, alias: str, user_id: str | None) -> list[EntityAlias]:
        """Aliases equal to `alias` (normalized): the user's own first, then global ones."""
        ...
    def create_entity(self, world_id: str, name: str, entity_type: str, description: str | None = None, *,
                      origin_event_id: str | None = None) -> CanonicalEntity:
        """A new entity named so; `origin_event_id`: the event whose words made it."""
        ...
    def add_alias(self, alias: EntityAlias) -> None: ...
    def list_entities(self, world_id: str, name: str | None, limit: int, definition: str | None = None,
                      min_similarity: float = 0.5) -> list[CanonicalEntity]: ...
    def get_entities(self, world_id: str, entity_ids: Sequence[str]) -> list[CanonicalEntity]: ...
    # resolution: the fast path, provenance, what waits for the user, coreference candidates, the graph
    def match_name(self, world_id: str, name: str, user_id: str | None, *, fuzzy_min: float, alias_accept: float,
                   limit: int, by_confidence: bool = False) -> list[NameMatch]:
        """The fast path in one round trip: entities whose normalized canonical name is `name`; else aliases
        equal to it (global and `user_id`'s own); else, when no alias is above `alias_accept`, trigram neighbours
        whose similarity (times the alias's confidence with `by_confidence`) is above `fuzzy_min`, best first."""
        ...
    def match_names(self, world_id: str, names: Sequence[str], user_id: str | None, *, fuzzy_min: float,
                    alias_accept: float, limit: int, by_confidence: bool = False, walk_depth: int = 0,
                    walk_limit: int = 0) -> list[list[NameMatch]]:
        """`match_name` for each name, in order, in one round trip (a search's question, read-only); each match
        with its entity's external reference and, with `walk_depth`, its `near` entities: those within that many
        hops on the edges `user_id` sees (every edge without one), the entity itself left out, nearest first by
        (hops, id in code point order), at most `walk_limit`. A match the cascade cannot choose (one of several
        trigram neighbours) may be left unwalked (`near` None)."""
        ...
    def entities_named_from(self, world_id: str, words: str, limit: int) -> list[CanonicalEntity]:
        """Entities whose normalized name or an alias is `words` or begins with them and goes on ("robert" ->
        Robert Lang), oldest first: the candidates a first name or a company's short name may stand for."""
        ...
    def entity_usage(self, world_id: str, entity_ids: Sequence[str]) -> dict[str, tuple[str, int, datetime | None]]:
        """(name, resolved mentions, latest mention time) per entity, for ranking candidates."""
        ...
    def find_entity_by_external_ref(self, world_id: str, external_ref: str) -> CanonicalEntity | None: ...
    def set_external_ref(self, world_id: str, entity_id: str, external_ref: str) -> CanonicalEntity | None:
        """Give an entity that has none an external reference no other entity holds; returns the holder."""
        ...
    def create_entity_with_ref(self, world_id: str, name: str, entity_type: str, external_ref: str,
                               description: str | None = None, alias_source: str = "created") -> CanonicalEntity:
        """The entity with this external reference, created with its name as a global alias if missing."""
        ...
    def entity_aliases(self, world_id: str, entity_id: str, user_id: str | None) -> list[EntityAlias]:
        """An entity's aliases: global ones and `user_id`'s own, or everyone's when `user_id` is None."""
        ...
    def domain_sources(self, world_id: str) -> list[DomainSource]: ...
    def upsert_domain_source(self, world_id: str, source: DomainSource, description: str | None = None) -> None: ...
    def ontology_predicates(self, world_id: str) -> list[OntologyPredicate]:
        """The predicates of the world's ontology with their synonyms, by name."""
        ...
    def upsert_ontology_predicate(self, world_id: str, predicate: OntologyPredicate) -> None: ...
