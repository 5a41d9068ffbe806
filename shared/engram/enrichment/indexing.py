"""Indexing: the events' vectors, and the keyword index catching up with the rows through the outbox; the end
of an enrichment, enriched or failed for good."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from engram.model.events import StoredEvent
from engram.model.heuristics import Heuristics
from engram.model.search import DocKind, IndexDocument
from engram.ports import Embedder, EventStore, KeywordIndex, OutboxStore
from engram.rules.utterance import in_context, utterance


class EventEmbeddingPorts(Protocol):
    """The ports an event's two vectors need."""

    @property
    def store(self) -> EventStore: ...
    @property
    def embedder(self) -> Embedder: ...


class IndexingStore(EventStore, OutboxStore, Protocol):
    """What the index step reads and writes: the outbox, the rows' documents, the entities' vectors, the
    erasures that may overtake a write, and the batch's status."""

    def erasures(self, world_id: str) -> int: ...
    def documents(self, world_id: str, refs: Sequence[tuple[DocKind, str]]) -> list[IndexDocument]: ...
    def set_entity_embeddings(self, world_id: str, embeddings: dict[str, Sequence[float]]) -> None: ...


class IndexingPorts(Protocol):
    """The ports the index step uses."""

    @property
    def store(self) -> IndexingStore: ...
    @property
    def index(self) -> KeywordIndex: ...
    @property
    def embedder(self) -> Embedder: ...


def embed_events(clients: EventEmbeddingPorts, world_id: str, events: list[StoredEvent], h: Heuristics) -> None:
    """Each event's vector, of who said what; and, unless turned off, its vector in context: read after
    the turn before it in its conversation (what it replies to). One embedding call for the batch."""
    if not events:
        return
    texts = [utterance(e) for e in events]
    if h.extract.event_context_embedding:
        previous: dict[str, StoredEvent | None] = {}
        for e in events:  # sorted by time: the batch's own turns, else the stored turn before the first
            if e.conversation_id not in previous:
                before = clients.store.conversation_events(world_id, e.conversation_id, 1, before=e.occurred_at)
                previous[e.conversation_id] = before[-1] if before else None
            texts.append(in_context(previous[e.conversation_id], e))
            previous[e.conversation_id] = e
    vectors = clients.embedder.embed(texts)
    ids = [e.event_id for e in events]
    clients.store.set_event_embeddings(world_id, dict(zip(ids, vectors[:len(ids)], strict=True)),
                                       dict(zip(ids, vectors[len(ids):], strict=True))
                                       if h.extract.event_context_embedding else None)


def index_pending(clients: IndexingPorts, world_id: str, event_ids: Sequence[str] = (), *, batch: int = 500) -> int:
    """Apply the world's pending outbox operations to the keyword index, then mark the batch enriched.
    Safe to re-run: an upsert replaces and a delete of a missing document is a no-op."""
    done = 0
    while True:
        ops = clients.store.pending_index_ops(world_id, batch)
        if not ops:
            break
        # By kind and id: an event may carry the id of a fact or an entity, and each is its own document.
        upserts = list(dict.fromkeys((kind, doc_id) for _id, _w, kind, doc_id, op in ops if op == "upsert"))
        deletes = [(kind, doc_id) for _id, _w, kind, doc_id, op in ops if op == "delete"]
        erasures = clients.store.erasures(world_id)
        documents = clients.store.documents(world_id, upserts)
        clients.index.upsert(documents)
        clients.index.delete(world_id, deletes)
        if clients.store.erasures(world_id) != erasures:  # an erasure came in between the read and the write
            documents = _reindex_after_erasure(clients, world_id, documents)
        # An entity's vector is of what its document says (name, aliases, description): kept current with it.
        entities = [d for d in documents if d.kind == "entity"]
        if entities:
            vectors = clients.embedder.embed([d.text for d in entities])
            clients.store.set_entity_embeddings(world_id, {d.doc_id: v for d, v in zip(entities, vectors, strict=True)})
        clients.store.mark_index_ops_done([op[0] for op in ops])
        done += len(ops)
    if event_ids:
        still_processing = [e.event_id for e in clients.store.get_events(world_id, event_ids)
                            if e.enrichment_status != "failed"]
        clients.store.set_enrichment(world_id, still_processing, "enriched")
    return done


def _reindex_after_erasure(clients: IndexingPorts, world_id: str,
                           documents: Sequence[IndexDocument]) -> list[IndexDocument]:
    """Documents written to the index from rows read before an erasure: those it removed go again (its own
    deletion of them may have come first), those it changed are written as they are now."""
    current = clients.store.documents(world_id, [(d.kind, d.doc_id) for d in documents])
    kept = {(d.kind, d.doc_id) for d in current}
    clients.index.delete(world_id, [(d.kind, d.doc_id) for d in documents if (d.kind, d.doc_id) not in kept])
    clients.index.upsert(current)
    return current


def mark_failed(clients: IndexingPorts, world_id: str, event_ids: Sequence[str],
                error: dict[str, Any]) -> dict[str, Any]:
    """The enrichment failed for good: the events stay stored, marked failed with the cause."""
    cause = f"{error.get('Error', 'Error')}: {str(error.get('Cause', ''))[:500]}"
    clients.store.set_enrichment(world_id, event_ids, "failed", error=cause)
    return {"world_id": world_id, "event_ids": list(event_ids), "status": "failed"}
