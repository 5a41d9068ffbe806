"""The memory store: episodic, semantic (facts) and procedural memories and their conflicts."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, Protocol

from engram.model.memories import EpisodicMemory, MemoryAudit, MemoryConflict, ProceduralMemory, SemanticMemory
from engram.model.search import DocKind, IndexDocument, SemanticHit


class MemoryStore(Protocol):
    def insert_episodic(self, memory: EpisodicMemory, embedding: Sequence[float] | None) -> None: ...
    def insert_semantic(self, memory: SemanticMemory, embedding: Sequence[float] | None) -> None: ...
    def update_semantic(self, memory: SemanticMemory) -> None: ...
    def find_facts(self, world_id: str, subject_entity_id: str, predicate: str | None = None,
                   statuses: Sequence[str] = ("active",), *, user_id: str | None = None) -> list[SemanticMemory]:
        """A subject's facts (of one predicate), oldest first; `user_id`'s only when given."""
        ...
    def facts_about(self, world_id: str, entity_ids: Sequence[str], limit: int, *,
                    user_id: str | None = None, as_of: datetime | None = None,
                    statuses: Sequence[str] = ("active",)) -> list[SemanticMemory]:
        """Facts of the statuses (active) about the entities (as subject or object), strongest first; `user_id`'s
        only when given; with `as_of`, the facts true then (begun by then, not ended by then, not archived)."""
        ...
    def memory_conflicts(self, world_id: str, memory_ids: Sequence[str]) -> list[MemoryConflict]:
        """The conflicts naming any of the facts, on either side, oldest first."""
        ...
    def user_memories(self, world_id: str, user_id: str, layer: str, limit: int, *,
                      as_of: datetime | None = None) -> list[Any]:
        """A user's memories of one layer, the newest first; with `as_of`, those memory held then (facts true
        then, episodes that had happened, patterns already found)."""
        ...
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
    def correct_semantic(self, fact: SemanticMemory, embedding: Sequence[float] | None, audit: MemoryAudit) -> bool:
        """Write the user's correction of a fact (its value, confidence, valid time, factors; its vector when given),
        its index outbox row and its audit row in one transaction; False (nothing written) when the fact is gone."""
        ...
    def delete_semantic(self, audit: MemoryAudit) -> MemoryAudit | None:
        """Delete a fact and the conflicts naming it, queue its index document's deletion and write the audit row
        (`before` the deleted row, with its conflicts) in one transaction; None when there was no such fact."""
        ...
    def memory_audit(self, world_id: str, memory_id: str) -> list[MemoryAudit]:
        """A fact's audit rows, oldest first."""
        ...
