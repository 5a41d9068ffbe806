"""The retrieval store: candidate documents for the brains, similarity and the entity graph."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import datetime
from typing import Any, Protocol

from engram.model.entities import Relationship
from engram.model.search import DocKind, IndexDocument, LinkedTurn, SemanticHit


class RetrievalStore(Protocol):
    """What the search reads besides the semantic brain: candidates with their similarity, the turns around
    an event, the documents the graph reaches, find-similar, and traversals of the entity graph."""

    def facts_as_of(self, world_id: str, embedding: Sequence[float], as_of: datetime, *, user_id: str | None,
                    limit: int) -> list[tuple[IndexDocument, float]]:
        """The facts true at `as_of` (begun by then, not ended by then, not archived; superseded ones included)
        the user may read, nearest the vector first, with their documents and cosine similarity."""
        ...
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
    def linked_turns(self, world_id: str, entity_weights: dict[str, float], embedding: Sequence[float], *,
                     user_id: str | None, limit: int, context_weight: float = 0.0) -> list[LinkedTurn]:
        """The turns stating the weighted entities' facts, the evidence of their relationships, the turns naming
        two of them, their users' nearest turns: each with its strongest link, the best `limit`."""
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
