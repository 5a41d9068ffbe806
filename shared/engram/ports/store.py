"""The store port (PostgreSQL): one Protocol per responsibility, and `Store`, all of them. Re-exported by
`engram.ports`."""

from __future__ import annotations

from collections.abc import Collection, Generator, Sequence
from datetime import datetime
from typing import Any, Protocol

from engram.model.context import QueryContext
from engram.model.entities import (
    CanonicalEntity,
    DomainSource,
    EntityAlias,
    EntitySighting,
    NameMatch,
    RecordedMention,
    Relationship,
    Resolution,
)
from engram.model.events import EnrichmentStatus, ErasedRows, StoredEvent, WorldUser
from engram.model.insights import Inflection, InsightState, Intervention
from engram.model.memories import (
    EpisodicMemory,
    MemoryConflict,
    MemorySummary,
    OntologyPredicate,
    ProceduralMemory,
    SemanticMemory,
)
from engram.model.portability import RecordKind
from engram.model.queries import EntityDefinition, WorldQuery
from engram.model.search import DocKind, IndexDocument, SemanticHit
from engram.model.signals import AssumptionStatus, Signal, SignalCursor


class EventStore(Protocol):
    def insert_events(self, events: Sequence[StoredEvent]) -> list[bool]:
        """Insert events of one world atomically; True per event newly stored, False for a
        duplicate event_id (the stored row is left as it was)."""
        ...

    def get_event(self, world_id: str, event_id: str) -> StoredEvent | None: ...
    def get_events(self, world_id: str, event_ids: Sequence[str]) -> list[StoredEvent]: ...
    def set_enrichment(
        self, world_id: str, event_ids: Sequence[str], status: EnrichmentStatus,
        enrichment_id: str | None = None, error: str | None = None,
    ) -> None: ...
    def conversation_events(
        self, world_id: str, conversation_id: str, limit: int, before: datetime | None = None, *,
        user_id: str | None = None
    ) -> list[StoredEvent]:
        """The latest `limit` events of a conversation, oldest first; with `user_id`, none unless that user
        takes part in the conversation (a user reads the conversations they are in, not another user's)."""
        ...
    def user_events(self, world_id: str, user_id: str, limit: int) -> list[StoredEvent]: ...
    def important_events(self, world_id: str, user_id: str, limit: int) -> list[StoredEvent]: ...
    def world_users(self, world_id: str, limit: int) -> list[WorldUser]:
        """The users of a world with their event counts, the most recently active first."""
        ...
    def set_event_embeddings(self, world_id: str, embeddings: dict[str, Sequence[float]],
                             context_embeddings: dict[str, Sequence[float]] | None = None) -> None:
        """Each event's vector and, when given, its vector read in context (after the turn before it)."""
        ...
    def stalled_events(self, world_id: str | None, statuses: Sequence[EnrichmentStatus], received_before: datetime,
                       limit: int | None) -> list[tuple[str, str]]:
        """(world id, event id) of events in `statuses` received before the cutoff, oldest first, at most
        `limit` (None: all); every world when `world_id` is None (the scheduled sweep)."""
        ...


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
    def record_resolutions(self, world_id: str, resolutions: Sequence[Resolution],
                           aliases: Sequence[EntityAlias] = ()) -> None:
        """Record an event's resolutions and, in the same transaction, the aliases they taught."""
        ...
    def get_entities(self, world_id: str, entity_ids: Sequence[str]) -> list[CanonicalEntity]: ...
    def event_entity_ids(self, world_id: str, event_ids: Sequence[str]) -> dict[str, list[str]]: ...
    def upsert_relationship(self, rel: Relationship) -> Relationship: ...
    def relationships(self, world_id: str, entity_id: str, depth: int, *,
                      user_id: str | None = None) -> list[Relationship]:
        """Edges within `depth` hops of the entity, either direction. Every read of the graph takes `user_id`:
        given, only the edges that user sees (their own facts' and the world's), each with only that user's
        evidence and confidence; None, every edge as stored (world-level callers)."""
        ...
    # resolution: the fast path, provenance, what waits for the user, coreference candidates, the graph
    def match_name(self, world_id: str, name: str, user_id: str | None, *, fuzzy_min: float, alias_accept: float,
                   limit: int) -> list[NameMatch]:
        """The fast path in one round trip: entities whose normalized canonical name is `name`; else aliases
        equal to it (global and `user_id`'s own); else, when no alias is above `alias_accept`, trigram neighbours
        whose similarity times alias confidence is above `fuzzy_min`, best first."""
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
    def known_aliases_in(self, world_id: str, phrases: Sequence[str], user_id: str | None) -> list[str]:
        """Those normalized phrases that are aliases of the world (global or the user's own)."""
        ...
    def recorded_mentions(self, world_id: str, event_ids: Sequence[str]) -> list[RecordedMention]: ...
    def get_mention(self, world_id: str, mention_id: str) -> RecordedMention | None: ...
    def pending_disambiguations(self, world_id: str, user_id: str | None, limit: int) -> list[RecordedMention]: ...
    def set_mention_entities(self, world_id: str, updates: Sequence[tuple[str, str, str, float]]) -> None:
        """(mention id, entity id, method, confidence) for mentions resolved after they were recorded."""
        ...
    def conversation_sightings(self, world_id: str, conversation_id: str, until: datetime,
                               limit: int) -> list[EntitySighting]:
        """The conversation's resolved mentions up to `until`, most recent first."""
        ...
    def relations_of(self, world_id: str, entity_ids: Sequence[str], *,
                     user_id: str | None = None) -> list[EntitySighting]:
        """Entities standing in an `<x>_of` relationship to one of these (Sam boss_of dana: dana's boss), on the
        edges `user_id` sees when given."""
        ...
    def entity_aliases(self, world_id: str, entity_id: str, user_id: str | None) -> list[EntityAlias]:
        """An entity's aliases: global ones and `user_id`'s own, or everyone's when `user_id` is None."""
        ...
    def neighbours(self, world_id: str, entity_ids: Sequence[str], *,
                   user_id: str | None = None) -> list[Relationship]:
        """Relationships touching any of the entities, either direction (those `user_id` sees when given)."""
        ...
    def drop_relationship_source(self, world_id: str, memory_id: str) -> int:
        """Forget a fact behind its edges; edges left with no fact behind them go. Returns edges removed."""
        ...
    def domain_sources(self, world_id: str) -> list[DomainSource]: ...
    def upsert_domain_source(self, world_id: str, source: DomainSource, description: str | None = None) -> None: ...
    def ontology_predicates(self, world_id: str) -> list[OntologyPredicate]:
        """The predicates of the world's ontology with their synonyms, by name."""
        ...
    def upsert_ontology_predicate(self, world_id: str, predicate: OntologyPredicate) -> None: ...


class MemoryStore(Protocol):
    def insert_episodic(self, memory: EpisodicMemory, embedding: Sequence[float] | None) -> None: ...
    def insert_semantic(self, memory: SemanticMemory, embedding: Sequence[float] | None) -> None: ...
    def update_semantic(self, memory: SemanticMemory) -> None: ...
    def find_facts(self, world_id: str, subject_entity_id: str, predicate: str | None = None,
                   statuses: Sequence[str] = ("active",), *, user_id: str | None = None) -> list[SemanticMemory]:
        """A subject's facts (of one predicate), oldest first; `user_id`'s only when given."""
        ...
    def facts_about(self, world_id: str, entity_ids: Sequence[str], limit: int, *,
                    user_id: str | None = None) -> list[SemanticMemory]:
        """Active facts about the entities (as subject or object), strongest first; `user_id`'s only when given."""
        ...
    def user_memories(self, world_id: str, user_id: str, layer: str, limit: int) -> list[Any]: ...
    def insert_conflict(self, conflict: MemoryConflict) -> None: ...
    def list_conflicts(self, world_id: str, status: str | None) -> list[MemoryConflict]: ...
    def record_facts(self, world_id: str, created: Sequence[tuple[SemanticMemory, Sequence[float] | None]],
                     updated: Sequence[SemanticMemory], conflicts: Sequence[MemoryConflict]) -> None:
        """One lifecycle step in one transaction: new facts (idempotent on memory_id), changed facts,
        new conflicts (idempotent on conflict_id), and their index outbox rows."""
        ...
    def get_semantic(self, world_id: str, memory_ids: Sequence[str]) -> list[SemanticMemory]: ...
    def get_conflict(self, world_id: str, conflict_id: str) -> MemoryConflict | None: ...
    def settle_conflict(self, conflict: MemoryConflict, updated: Sequence[SemanticMemory]) -> bool:
        """Write a user's settlement and the facts it changes in one transaction; False (nothing written)
        when the user had settled it already."""
        ...
    def insert_procedural(self, memory: ProceduralMemory, embedding: Sequence[float] | None) -> None: ...
    def semantic_search(
        self, world_id: str, embedding: Sequence[float], *, user_id: str | None, kinds: Sequence[DocKind],
        limit: int, min_similarity: float, context_weight: float = 0.0,
    ) -> list[SemanticHit]:
        """The nearest rows of each kind by cosine similarity, at least `min_similarity`, best first; an
        event scores its own vector blended with its in-context one (`context_weight` the latter's share)."""
        ...
    def documents(self, world_id: str, refs: Sequence[tuple[DocKind, str]]) -> list[IndexDocument]:
        """The indexable text and metadata of rows, by (kind, id); missing rows are skipped."""
        ...


class QueryStore(Protocol):
    def save_query(self, query: WorldQuery) -> None: ...
    def get_query(self, world_id: str, query_id: str) -> WorldQuery | None: ...
    def list_queries(self, world_id: str, user_id: str | None, limit: int) -> list[WorldQuery]: ...
    def save_context(self, context: QueryContext) -> None: ...
    def load_context(self, world_id: str, query_id: str) -> QueryContext | None: ...
    def entity_definitions(self, world_id: str, limit: int) -> list[EntityDefinition]:
        """The world's entity definitions (types) with how many entities each has, and the domain ontology's
        description where it has one; most entities first."""
        ...
    def conflicts_touching(self, world_id: str, user_id: str, memory_ids: Sequence[str], entity_ids: Sequence[str],
                           limit: int) -> list[MemoryConflict]:
        """Conflicts between two of the user's facts where either is one of `memory_ids` or about one of
        `entity_ids` (research names them in its synthesis); open ones first."""
        ...


class OutboxStore(Protocol):
    """Keyword-index writes, recorded in the same transaction as the rows they index."""

    def pending_index_ops(self, world_id: str | None, limit: int) -> list[tuple[int, str, DocKind, str, str]]:
        """(outbox id, world id, kind, doc id, op 'upsert'|'delete'), oldest first."""
        ...
    def mark_index_ops_done(self, outbox_ids: Sequence[int]) -> None: ...
    def indexed_worlds(self) -> list[str]:
        """Every world with a row the keyword index holds a document of (a rebuild spans worlds)."""
        ...
    def indexed_refs(self, world_id: str) -> list[tuple[DocKind, str]]:
        """(kind, id) of every row of the world the keyword index may hold a document of."""
        ...


class SummaryStore(Protocol):
    """Consolidation's reads and writes. Summary and procedure writes tell the keyword index only of a change."""

    def save_summary(self, summary: MemorySummary, embedding: Sequence[float] | None,
                     confirmed: Sequence[SemanticMemory] = ()) -> bool: ...
    def get_summary(self, world_id: str, scope_kind: str, scope_id: str,
                    user_id: str | None = None) -> MemorySummary | None: ...
    def list_summaries(self, world_id: str, user_id: str | None, limit: int) -> list[MemorySummary]: ...
    def stale_scopes(self, world_id: str | None, limit: int, *,
                     min_facts: int) -> list[tuple[str, str, str, str | None, datetime]]: ...
    def worlds_to_maintain(self, world_id: str | None, limit: int) -> list[str]: ...
    def scope_facts(self, world_id: str, scope_kind: str, scope_id: str, user_id: str | None,
                    limit: int) -> list[tuple[SemanticMemory, str]]: ...
    def scope_events(self, world_id: str, scope_kind: str, scope_id: str, user_id: str | None,
                     limit: int) -> list[StoredEvent]: ...
    def user_entity_sightings(self, world_id: str, user_id: str, conversations: int) -> list[tuple[str, str, str]]: ...
    def user_fact_sightings(self, world_id: str, user_id: str,
                            conversations: int) -> list[tuple[str, str, str, str | None]]: ...
    def save_procedure(self, memory: ProceduralMemory, embedding: Sequence[float] | None) -> bool: ...
    def facts_least_validated(self, world_id: str, limit: int) -> list[SemanticMemory]: ...
    def archive_facts(self, world_id: str, memory_ids: Sequence[str]) -> list[str]: ...
    def start_run(self, world_id: str, run_id: str, started_at: datetime) -> None: ...
    def finish_run(self, world_id: str, run_id: str, finished_at: datetime, stats: dict[str, Any]) -> None: ...


class SignalStore(Protocol):
    def insert_signals(self, world_id: str, signals: Sequence[Signal]) -> list[str]:
        """Store a batch in one statement, skipping any whose content hash its conversation already
        holds; returns the ids newly stored."""
        ...
    def get_signal(self, world_id: str, signal_id: str) -> Signal | None: ...
    def list_signals(self, world_id: str, conversation_id: str, signal_type: str | None = None,
                     limit: int = 200) -> list[Signal]:
        """A conversation's signals in the order they were said, optionally of one type."""
        ...
    def set_assumption_status(self, world_id: str, signal_id: str, status: AssumptionStatus) -> Signal | None:
        """The updated assumption, or None when no Assumption has this id."""
        ...
    def signal_cursors(self, world_id: str, conversation_ids: Sequence[str]) -> dict[str, SignalCursor]: ...
    def save_signal_cursors(self, world_id: str, cursors: Sequence[SignalCursor]) -> set[str]:
        """Write cursors read at their `version` (0: none was read); returns the conversations written.
        A cursor another writer moved since it was read is left as it is and not returned."""
        ...


class InsightStore(Protocol):
    """Per-conversation insight state, inflections and interventions. Guarded writes (a checkpoint
    checked once, the intervention cooldown) are single conditional statements."""

    def sync_insight_states(self, world_id: str, conversation_ids: Sequence[str],
                            roles: Sequence[str]) -> dict[str, InsightState]:
        """Count each conversation's turns (stored `roles` messages) into its state; the states of the
        conversations that have a turn."""
        ...
    def insight_state(self, world_id: str, conversation_id: str) -> InsightState | None: ...
    def turn_window(self, world_id: str, conversation_id: str, roles: Sequence[str], turn: int,
                    limit: int) -> list[StoredEvent]:
        """The last `limit` messages up to and including the `turn`-th turn (1-based), oldest first."""
        ...
    def recent_signals(self, world_id: str, conversation_id: str, limit: int) -> list[Signal]:
        """A conversation's latest `limit` signals, in the order they were said."""
        ...
    def record_inflection_check(self, world_id: str, conversation_id: str, turn: int,
                                inflection: Inflection | None) -> bool:
        """Mark checkpoint `turn` checked with its inflection, if one counted; False (nothing stored)
        when it or a later checkpoint was checked already."""
        ...
    def current_inflection(self, world_id: str, conversation_id: str) -> Inflection | None: ...
    def offer_intervention(self, intervention: Intervention, cooldown_turns: int) -> bool:
        """Store it if the conversation's cooldown has passed at its turn; False when not offered."""
        ...
    def list_interventions(self, world_id: str, conversation_id: str,
                           status: str | None = None) -> list[Intervention]: ...
    def dismiss_intervention(self, world_id: str, conversation_id: str, intervention_id: str) -> Intervention | None:
        """The dismissed intervention (dismissing again changes nothing), None when unknown."""
        ...


class RetrievalStore(Protocol):
    """What the search reads besides the semantic brain: candidates with their similarity, the turns around
    an event, the documents the graph reaches, find-similar, and traversals of the entity graph."""

    def candidate_documents(self, world_id: str, refs: Sequence[tuple[DocKind, str]], embedding: Sequence[float], *,
                            context_weight: float = 0.0) -> list[tuple[IndexDocument, float | None]]:
        """`documents` with each row's cosine similarity to the vector (None for a row without one)."""
        ...
    def adjacent_documents(self, world_id: str, event_ids: Sequence[str], embedding: Sequence[float], *,
                           context_weight: float = 0.0, span: int = 1, known: Collection[str] = ()
                           ) -> tuple[dict[str, list[str]], list[tuple[IndexDocument, float | None]]]:
        """The `span` events before and after each event in its conversation, nearest first, and the documents
        (as `candidate_documents`) of those neighbours not `known` already."""
        ...
    def entity_documents(self, world_id: str, entity_weights: dict[str, float], embedding: Sequence[float], *,
                         user_id: str | None, kinds: Sequence[DocKind], limit: int,
                         context_weight: float = 0.0) -> list[SemanticHit]:
        """Entities, their facts, the events naming them or said by them, their episodes: each scored by
        similarity to the vector times its entity's weight, best first."""
        ...
    def similar_to(self, world_id: str, kind: DocKind, doc_id: str, *, kinds: Sequence[DocKind], limit: int,
                   min_similarity: float, user_id: str | None = None) -> list[SemanticHit]:
        """Rows nearest one row's vector, itself excluded; for a user, from and among the rows the user reads."""
        ...
    def set_entity_embeddings(self, world_id: str, embeddings: dict[str, Sequence[float]]) -> None:
        """Each entity's vector, of its indexed document (name, aliases, description)."""
        ...
    # The traversals walk the edges `user_id` sees when given (as `relationships`), every edge without one.
    def connected_entities(self, world_id: str, seeds: Sequence[str], depth: int, limit: int, *,
                           user_id: str | None = None) -> list[tuple[str, int]]:
        """(entity id, fewest hops) within `depth` hops of the seeds, nearest first, seeds excluded."""
        ...
    def shortest_path(self, world_id: str, from_entity_id: str, to_entity_id: str, max_length: int, *,
                      user_id: str | None = None) -> list[Relationship] | None:
        """A shortest chain of relationships (either direction), None beyond `max_length` edges."""
        ...
    def shared_connections(self, world_id: str, entity_id: str, limit: int, *,
                           user_id: str | None = None) -> list[tuple[str, int, list[str]]]:
        """(entity id, shared neighbours, which) for entities related only through common neighbours."""
        ...
    def relationship_stats(self, world_id: str, entity_id: str | None = None, *,
                           user_id: str | None = None) -> dict[str, Any]:
        """Relationship counts in total and by relation, average confidence, the most connected entities."""
        ...


class EraseStore(Protocol):
    def erase_user(self, world_id: str, user_id: str) -> ErasedRows:
        """Delete a user's events, memories, signals, queries and aliases, what was made only of them, and what
        other users' rows held of theirs, in one transaction; returns the counts and what is left to rebuild."""
        ...
    def erasures(self, world_id: str) -> int:
        """How many erasures the world has had (only grows)."""
        ...


class PortabilityStore(Protocol):
    """Export and import (engram.memory.portability): rows as records of the kinds in `engram.model.portability`."""

    def schema_version(self) -> int:
        """The latest migration applied to the database."""
        ...
    def export_rows(self, world_id: str, user_id: str | None, kinds: Sequence[RecordKind],
                    start: tuple[RecordKind, list[Any]] | None, *,
                    vectors: bool) -> Generator[tuple[RecordKind, dict[str, Any]], None, None]:
        """Rows of each kind in key order (a user's only, with `user_id`), after `start` (a kind and the key
        of the last row read), from one read-only snapshot; close the iterator when done with it."""
        ...
    def import_rows(self, world_id: str, batches: Sequence[tuple[RecordKind, Sequence[dict[str, Any]]]]
                    ) -> tuple[dict[str, list[Any]], list[int]]:
        """Insert rows in one transaction, skipping those whose key the world holds; the keys inserted by kind,
        and the ids of the outbox entries written with the rows that have an index document."""
        ...
    def rows_without_vectors(self, world_id: str, kind: RecordKind, ids: Sequence[str]) -> list[str]: ...
    def vector_texts(self, world_id: str, kind: RecordKind, ids: Sequence[str]) -> dict[str, str]:
        """What each row's vector is made of (memories, facts, summaries, patterns)."""
        ...
    def set_vectors(self, world_id: str, kind: RecordKind, vectors: dict[str, Sequence[float]]) -> None: ...


class Store(PortabilityStore, EraseStore, EventStore, EntityStore, MemoryStore, QueryStore, OutboxStore, SignalStore, SummaryStore, InsightStore,
            RetrievalStore, Protocol):
    def world_config(self, world_id: str) -> dict[str, Any]:
        """The world's `system_config` rows (heuristics and tag categories), as stored: not validated."""
        ...
    def set_world_config(self, world_id: str, config: dict[str, Any]) -> None:
        """Replace the world's `system_config` rows with one row per key of `config` (empty: none)."""
        ...
    def ping(self) -> None: ...
