"""The in-memory memory and retrieval stores, dict-backed: facts and episodes, their conflicts, the
documents the keyword index holds, the semantic brain (cosine over the stored vectors), the graph brain's
reads, and the index outbox. Only what the use cases call of `MemoryStore` and `RetrievalStore`."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import datetime
from typing import Any

from engram.model.memories import EpisodicMemory, MemoryAudit, MemoryConflict, SemanticMemory
from engram.model.search import DocKind, IndexDocument, LinkedTurn, SemanticHit
from tests.fakes.tables import Key, Tables, copy


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """Of unit vectors (every embedder's), their dot product."""
    return sum(x * y for x, y in zip(a, b, strict=True))


class InMemoryMemoryStore:
    t: Tables

    # ------------------------------------------------------------ facts and episodes
    def find_facts(self, world_id: str, subject_entity_id: str, predicate: str | None = None,
                   statuses: Sequence[str] = ("active",), *, user_id: str | None = None) -> list[SemanticMemory]:
        facts = [f for f in self.t.of_world(self.t.facts, world_id) if f.subject_entity_id == subject_entity_id
                 and predicate in (None, f.predicate) and f.status in statuses and user_id in (None, f.user_id)]
        return [copy(f) for f in sorted(facts, key=lambda f: f.created_at)]

    def facts_about(self, world_id: str, entity_ids: Sequence[str], limit: int, *,
                    user_id: str | None = None, as_of: datetime | None = None,
                    statuses: Sequence[str] = ("active",)) -> list[SemanticMemory]:
        facts = [f for f in self.t.of_world(self.t.facts, world_id)
                 if (f.status in statuses if as_of is None else f.holds_at(as_of))
                 and (f.subject_entity_id in entity_ids or f.object_entity_id in entity_ids)
                 and user_id in (None, f.user_id)]
        return [copy(f) for f in sorted(facts, key=lambda f: (-f.confidence, f.created_at))[:limit]]

    def memory_conflicts(self, world_id: str, memory_ids: Sequence[str]) -> list[MemoryConflict]:
        return [copy(c) for c in sorted(self.t.of_world(self.t.conflicts, world_id),
                                        key=lambda c: (c.created_at, c.conflict_id))
                if c.memory_id in memory_ids or c.conflicting_memory_id in memory_ids]

    def get_semantic(self, world_id: str, memory_ids: Sequence[str]) -> list[SemanticMemory]:
        return [copy(self.t.facts[(world_id, i)]) for i in memory_ids if (world_id, i) in self.t.facts]

    def record_facts(self, world_id: str, created: Sequence[tuple[SemanticMemory, Sequence[float] | None]],
                     updated: Sequence[SemanticMemory], conflicts: Sequence[MemoryConflict]) -> None:
        for fact, vector in created:
            if (world_id, fact.memory_id) not in self.t.facts:
                self.t.facts[(world_id, fact.memory_id)] = copy(fact)
                if vector is not None:
                    self.t.fact_vectors[(world_id, fact.memory_id)] = list(vector)
                self.t.queue(world_id, "semantic", fact.memory_id)
        for fact in updated:
            self.t.facts[(world_id, fact.memory_id)] = copy(fact)
            self.t.queue(world_id, "semantic", fact.memory_id)
        for conflict in conflicts:
            self.t.conflicts.setdefault((world_id, conflict.conflict_id), copy(conflict))

    def correct_semantic(self, fact: SemanticMemory, embedding: Sequence[float] | None, audit: MemoryAudit) -> bool:
        key = (fact.world_id, fact.memory_id)
        if key not in self.t.facts:
            return False
        self.t.facts[key] = copy(fact)
        if embedding is not None:
            self.t.fact_vectors[key] = list(embedding)
        self.t.queue(fact.world_id, "semantic", fact.memory_id)
        self.t.audit.append(copy(audit))
        return True

    def delete_semantic(self, audit: MemoryAudit) -> MemoryAudit | None:
        key = (audit.world_id, audit.memory_id)
        fact = self.t.facts.pop(key, None)
        if fact is None:
            return None
        self.t.fact_vectors.pop(key, None)
        conflicts = [self.t.conflicts.pop(k) for k, c in list(self.t.conflicts.items()) if k[0] == audit.world_id
                     and audit.memory_id in (c.memory_id, c.conflicting_memory_id)]
        self.t.queue(audit.world_id, "semantic", audit.memory_id, "delete")
        done = audit.model_copy(update={"user_id": fact.user_id, "before": {
            **fact.model_dump(mode="json"), "conflicts": [c.model_dump(mode="json") for c in conflicts]}})
        self.t.audit.append(done)
        return copy(done)

    def memory_audit(self, world_id: str, memory_id: str) -> list[MemoryAudit]:
        return [copy(a) for a in self.t.audit if (a.world_id, a.memory_id) == (world_id, memory_id)]

    def list_conflicts(self, world_id: str, status: str | None) -> list[MemoryConflict]:
        return [copy(c) for c in sorted(self.t.of_world(self.t.conflicts, world_id), key=lambda c: c.created_at,
                                        reverse=True) if status in (None, c.status)]

    def insert_episodic(self, memory: EpisodicMemory, embedding: Sequence[float] | None) -> None:
        key = (memory.world_id, memory.memory_id)
        if key in self.t.episodes or any((memory.world_id, i) not in self.t.events for i in memory.event_ids):
            return
        self.t.episodes[key] = copy(memory)
        if embedding is not None:
            self.t.episode_vectors[key] = list(embedding)
        self.t.queue(memory.world_id, "episodic", memory.memory_id)

    # ------------------------------------------------------------ documents (what the keyword index holds)
    def documents(self, world_id: str, refs: Sequence[tuple[DocKind, str]]) -> list[IndexDocument]:
        found = [self._document(world_id, kind, doc_id) for kind, doc_id in refs]
        return [d for d in found if d is not None]

    def _document(self, world_id: str, kind: DocKind, doc_id: str) -> IndexDocument | None:
        key = (world_id, doc_id)
        if kind == "event" and key in self.t.events:
            e = self.t.events[key]
            speaker = e.metadata.get("speaker") or (e.user_id if e.role == "user" else e.role)
            named = [m.entity_id for m in self.t.of_world(self.t.mentions, world_id)
                     if m.event_id == doc_id and m.entity_id is not None]
            own = [x.entity_id for x in self.t.of_world(self.t.entities, world_id) if x.external_ref == f"user:{e.user_id}"]
            return IndexDocument(world_id=world_id, doc_id=doc_id, kind=kind, text=f"{speaker}: {e.content}",
                                 user_id=e.user_id, conversation_id=e.conversation_id, speaker=speaker,
                                 occurred_at=e.occurred_at, importance=e.importance,
                                 entity_ids=sorted({*named, *own}), event_ids=[doc_id])
        if kind == "episodic" and key in self.t.episodes and self.t.episodes[key].status == "active":
            p = self.t.episodes[key]
            return IndexDocument(world_id=world_id, doc_id=doc_id, kind=kind, text=p.content, user_id=p.user_id,
                                 conversation_id=p.conversation_id, occurred_at=p.occurred_at,
                                 importance=p.importance, entity_ids=p.entity_ids, event_ids=p.event_ids)
        if kind == "semantic" and key in self.t.facts and self.t.facts[key].status == "active":
            return self._fact_document(self.t.facts[key])
        if kind == "entity" and key in self.t.entities:
            n = self.t.entities[key]
            others = sorted({a.alias for a in self.t.aliases if (a.world_id, a.entity_id) == key and a.alias != n.name})
            text = n.name + (f" ({', '.join(others)})" if others else "") + (f": {n.description}" if n.description else "")
            return IndexDocument(world_id=world_id, doc_id=doc_id, kind=kind, text=text, entity_ids=[doc_id],
                                 occurred_at=n.created_at)
        return None

    def _fact_document(self, f: SemanticMemory) -> IndexDocument:
        subject = self.t.entities.get((f.world_id, f.subject_entity_id))
        first = self.t.events.get((f.world_id, f.source_event_ids[0])) if f.source_event_ids else None
        return IndexDocument(world_id=f.world_id, doc_id=f.memory_id, kind="semantic",
                             text=f.statement(subject.name if subject else f.subject_entity_id), user_id=f.user_id,
                             conversation_id=first.conversation_id if first else None,
                             occurred_at=f.valid_from or f.created_at, importance=f.confidence,
                             entity_ids=[i for i in (f.subject_entity_id, f.object_entity_id) if i],
                             event_ids=f.source_event_ids, confidence=f.confidence,
                             reinforcements=f.reinforcement_count, validated_at=f.last_validated_at)

    def facts_as_of(self, world_id: str, embedding: Sequence[float], as_of: datetime, *, user_id: str | None,
                    limit: int) -> list[tuple[IndexDocument, float]]:
        found = []
        for f in self.t.of_world(self.t.facts, world_id):
            vector = self.t.fact_vectors.get((world_id, f.memory_id))
            if vector is not None and f.holds_at(as_of) and user_id in (None, f.user_id):
                found.append((self._fact_document(f), cosine(vector, embedding)))
        return sorted(found, key=lambda d: -d[1])[:limit]

    def set_entity_embeddings(self, world_id: str, embeddings: dict[str, Sequence[float]]) -> None:
        for entity_id, vector in embeddings.items():
            self.t.entity_vectors[(world_id, entity_id)] = list(vector)

    # ------------------------------------------------------------ the semantic brain
    def _vector(self, world_id: str, kind: DocKind, doc_id: str, context_weight: float = 0.0,
                query: Sequence[float] | None = None) -> float | None:
        """The row's cosine similarity to `query` (an event's blended with its in-context one)."""
        key = (world_id, doc_id)
        tables: dict[str, dict[Key, list[float]]] = {"event": self.t.event_vectors, "semantic": self.t.fact_vectors,
                                                     "episodic": self.t.episode_vectors, "entity": self.t.entity_vectors}
        vector = tables.get(kind, {}).get(key)
        if vector is None or query is None:
            return None
        own = cosine(vector, query)
        if kind == "event" and context_weight > 0:
            return (1 - context_weight) * own + context_weight * cosine(self.t.context_vectors.get(key, vector), query)
        return own

    def _readable(self, world_id: str, kind: DocKind, doc_id: str, user_id: str | None) -> bool:
        """The row exists and is active, and the user may read it (theirs or the world's)."""
        document = self._document(world_id, kind, doc_id)
        return document is not None and (user_id is None or kind == "entity" or document.user_id in (None, user_id))

    def _rows(self, world_id: str, kinds: Sequence[DocKind]) -> list[tuple[DocKind, str]]:
        tables: dict[DocKind, dict[Key, Any]] = {"event": self.t.events, "semantic": self.t.facts,
                                                 "episodic": self.t.episodes, "entity": self.t.entities}
        return [(kind, doc_id) for kind in kinds for (world, doc_id) in tables.get(kind, {}) if world == world_id]

    def semantic_search(self, world_id: str, embedding: Sequence[float], *, user_id: str | None,
                        kinds: Sequence[DocKind], limit: int, min_similarity: float,
                        context_weight: float = 0.0) -> list[SemanticHit]:
        hits = []
        for kind, doc_id in self._rows(world_id, kinds):
            score = self._vector(world_id, kind, doc_id, context_weight, embedding)
            if score is not None and score >= min_similarity and self._readable(world_id, kind, doc_id, user_id):
                hits.append(SemanticHit(doc_id=doc_id, kind=kind, score=score))
        by_kind = [h for kind in kinds for h in sorted((h for h in hits if h.kind == kind), key=lambda h: -h.score)[:limit]]
        return sorted(by_kind, key=lambda h: -h.score)

    def similar_to(self, world_id: str, kind: DocKind, doc_id: str, *, kinds: Sequence[DocKind], limit: int,
                   min_similarity: float, user_id: str | None = None) -> list[SemanticHit]:
        tables = {"event": self.t.event_vectors, "semantic": self.t.fact_vectors, "episodic": self.t.episode_vectors,
                  "entity": self.t.entity_vectors}
        vector = tables.get(kind, {}).get((world_id, doc_id))
        if vector is None or not self._readable(world_id, kind, doc_id, user_id):
            return []
        hits = self.semantic_search(world_id, vector, user_id=user_id, kinds=kinds, limit=limit + 1,
                                    min_similarity=min_similarity)
        return [h for h in hits if (h.kind, h.doc_id) != (kind, doc_id)][:limit]

    # ------------------------------------------------------------ what the search reads besides
    def candidate_documents(self, world_id: str, refs: Sequence[tuple[DocKind, str]], embedding: Sequence[float], *,
                            context_weight: float = 0.0) -> list[tuple[IndexDocument, float | None]]:
        return [(d, self._vector(world_id, d.kind, d.doc_id, context_weight, embedding))
                for d in self.documents(world_id, refs)]

    def adjacent_documents(self, world_id: str, event_ids: Sequence[str], embedding: Sequence[float], *,
                           context_weight: float = 0.0, span: int = 1, known: Collection[str] = ()
                           ) -> tuple[dict[str, list[str]], list[tuple[IndexDocument, float | None]]]:
        adjacent: dict[str, list[str]] = {}
        for event_id in event_ids:
            event = self.t.events.get((world_id, event_id))
            if event is None:
                continue
            turns = sorted((e for e in self.t.of_world(self.t.events, world_id)
                            if e.conversation_id == event.conversation_id), key=lambda e: (e.occurred_at, e.event_id))
            at = [e.event_id for e in turns].index(event_id)
            near = turns[max(0, at - span):at] + turns[at + 1:at + 1 + span]
            adjacent[event_id] = [e.event_id for e in sorted(near, key=lambda e: abs(e.occurred_at - event.occurred_at))]
        wanted = [n for n in dict.fromkeys(n for near in adjacent.values() for n in near) if n not in known]
        return adjacent, self.candidate_documents(world_id, [("event", n) for n in wanted], embedding,
                                                  context_weight=context_weight)

    def linked_turns(self, world_id: str, entity_weights: dict[str, float], embedding: Sequence[float], *,
                     user_id: str | None, limit: int, context_weight: float = 0.0) -> list[LinkedTurn]:
        """As PostgreSQL's: the turns stating a reached entity's facts, its edges' evidence, the turns naming two
        reached entities, the seed users' nearest turns; each with its strongest link."""
        links: list[tuple[str, str, float]] = []
        for f in self.t.of_world(self.t.facts, world_id):
            weight = max((entity_weights.get(e, 0.0) for e in (f.subject_entity_id, f.object_entity_id) if e),
                         default=0.0)
            if weight > 0 and user_id in (None, f.user_id):
                similarity = self._vector(world_id, "semantic", f.memory_id, 0.0, embedding)
                links += [(e, "fact", weight * max(0.0, 0.5 if similarity is None else similarity))
                          for e in f.source_event_ids]
        for r in self.t.of_world(self.t.relationships, world_id):
            weight = max(entity_weights.get(r.source_entity_id, 0.0), entity_weights.get(r.target_entity_id, 0.0))
            if weight > 0 and self._sees_edge(world_id, r.source_memory_ids, r.evidence_event_ids, user_id):
                links += [(e, "relationship", weight) for e in r.evidence_event_ids]
        named: dict[str, dict[str, float]] = {}
        for m in self.t.of_world(self.t.mentions, world_id):
            if m.entity_id in entity_weights:
                named.setdefault(m.event_id, {})[m.entity_id] = entity_weights[m.entity_id]
        links += [(e, "mention", sorted(ws.values())[-2]) for e, ws in named.items() if len(ws) >= 2]
        for x in self.t.of_world(self.t.entities, world_id):
            if entity_weights.get(x.entity_id, 0.0) >= 1 and x.external_ref and x.external_ref.startswith("user:"):
                said = [(self._vector(world_id, "event", e.event_id, 0.0, embedding) or 0.0, e.event_id)
                        for e in self.t.of_world(self.t.events, world_id) if e.user_id == x.external_ref[5:]]
                links += [(e, "said", entity_weights[x.entity_id]) for _s, e in sorted(said, reverse=True)[:limit]]
        strongest: dict[str, tuple[str, float]] = {}
        for event_id, via, weight in links:
            if event_id not in strongest or weight > strongest[event_id][1]:
                strongest[event_id] = (via, weight)
        turns = []
        for event_id, (via, weight) in strongest.items():
            event = self.t.events.get((world_id, event_id))
            similarity = self._vector(world_id, "event", event_id, context_weight, embedding)
            if event is not None and similarity is not None and user_id in (None, event.user_id):
                turns.append(LinkedTurn(event_id=event_id, text=event.content, user_id=event.user_id,
                                        conversation_id=event.conversation_id, occurred_at=event.occurred_at,
                                        via=via, weight=weight, similarity=similarity))  # type: ignore[arg-type]
        return sorted(turns, key=lambda t: (-t.weight * t.similarity, t.event_id))[:limit]

    def _sees_edge(self, world_id: str, memory_ids: Sequence[str], event_ids: Sequence[str],
                   user_id: str | None) -> bool:
        """As `edges.seen_edges`: a user's edges (one of its facts is theirs) and the world's (no user's evidence)."""
        if user_id is None:
            return True
        facts = [self.t.facts[(world_id, i)] for i in memory_ids if (world_id, i) in self.t.facts]
        if facts:
            return any(f.user_id == user_id for f in facts)
        events = [self.t.events[(world_id, i)] for i in event_ids if (world_id, i) in self.t.events]
        return not events or any(e.user_id == user_id for e in events)

    def entity_documents(self, world_id: str, entity_weights: dict[str, float], embedding: Sequence[float], *,
                         user_id: str | None, kinds: Sequence[DocKind], limit: int,
                         context_weight: float = 0.0) -> list[SemanticHit]:
        hits = []
        for kind, doc_id in self._rows(world_id, kinds):
            document = self._document(world_id, kind, doc_id)
            weight = max((entity_weights[e] for e in document.entity_ids if e in entity_weights), default=0.0) \
                if document is not None else 0.0
            score = self._vector(world_id, kind, doc_id, context_weight, embedding)
            if weight > 0 and score is not None and self._readable(world_id, kind, doc_id, user_id):
                hits.append(SemanticHit(doc_id=doc_id, kind=kind, score=weight * score))
        return sorted(hits, key=lambda h: -h.score)[:limit]

    # ------------------------------------------------------------ the index outbox and erasures
    def pending_index_ops(self, world_id: str | None, limit: int) -> list[tuple[int, str, DocKind, str, str]]:
        return [(o.outbox_id, o.world_id, o.kind, o.doc_id, o.op) for o in self.t.outbox
                if not o.done and world_id in (None, o.world_id)][:limit]

    def mark_index_ops_done(self, outbox_ids: Sequence[int]) -> None:
        for o in self.t.outbox:
            if o.outbox_id in outbox_ids:
                o.done = True

    def indexed_worlds(self) -> list[str]:
        return sorted({w for table in (self.t.events, self.t.facts, self.t.episodes, self.t.entities) for w, _ in table})

    def indexed_refs(self, world_id: str) -> list[tuple[DocKind, str]]:
        return self._rows(world_id, ("event", "episodic", "semantic", "entity"))

    def erasures(self, world_id: str) -> int:
        return self.t.erasures.get(world_id, 0)
