"""Erasing a user everywhere: the database (one transaction), the keyword index, then the other users' memory that
held something of theirs, made again from the other users' own words."""

from __future__ import annotations

from collections.abc import Sequence

from engram.enrichment.facts import relate_fact
from engram.enrichment.indexing import embed_events, index_pending
from engram.enrichment.ingest import _start_batches
from engram.model.common import utcnow
from engram.model.events import Erasure
from engram.model.heuristics import Heuristics
from engram.model.memories import ConfidenceFactors
from engram.model.world import World
from engram.observability import logger
from engram.ports.clients import Clients
from engram.rules.confidence import reinforced, stored_confidence


def erase_user(clients: Clients, world: World, user_id: str) -> Erasure:
    """Remove the user's events, memories, signals, queries and index documents, and whatever was made only of
    them: the entities and aliases their words created, the edges their facts drew, the summaries, episodes,
    patterns and inflections that quote them. What other users' rows held of theirs is taken out and rebuilt:
    a fact they restated or overturned is as its own events left it, an answer that cited them is withdrawn, a
    summary that quoted them is dropped (the next consolidation writes it again from what is left), an episode
    that mixed their turns with another user's is dropped and the other user's events are enriched again.
    Every other world is untouched. Erasing twice is harmless; events the same user id sends after the erasure
    are a new start."""
    world_id, h = world.world_id, world.heuristics
    rows = clients.store.erase_user(world_id, user_id)
    by_user = clients.index.delete_world_user(world_id, user_id)
    erased = list(rows.documents)
    if erased:
        clients.index.delete(world_id, erased)
    _reweigh(clients, world_id, rows.facts_restated, h)
    _reconnect(clients, world_id, rows.facts_restored)
    if rows.events_to_embed:
        embed_events(clients, world_id, sorted(clients.store.get_events(world_id, rows.events_to_embed),
                                               key=lambda e: (e.occurred_at, e.event_id)), h)
    index_pending(clients, world_id)  # the documents that changed (an entity's aliases, a fact active again)
    if rows.events_to_enrich:
        _start_batches(clients, [(world_id, event_id) for event_id in rows.events_to_enrich], h)
    logger.info("user erased", extra={"world_id": world_id, "deleted": rows.deleted, "rebuilt": rows.rebuilt,
                                      "index_documents": len(erased)})
    return Erasure(world_id=world_id, user_id=user_id, deleted=rows.deleted, index_documents=max(len(erased), by_user),
                   rebuilt=rows.rebuilt, erased_at=rows.erased_at)


def _reweigh(clients: Clients, world_id: str, memory_ids: Sequence[str], h: Heuristics) -> None:
    """Facts that lost restatements: their confidence is derived again from the restatements left (a consolidation
    confirms them again on its next run)."""
    facts = clients.store.get_semantic(world_id, memory_ids) if memory_ids else []
    for fact in facts:
        factors = (fact.factors or ConfidenceFactors(base=fact.confidence)).model_copy(update={"reinforcement": 0.0})
        for _ in range(fact.reinforcement_count):
            factors = reinforced(factors, h.extract.max_confidence, h.extract.reinforce_gain)
        fact.factors, fact.confidence = factors, stored_confidence(factors, h.extract.max_confidence)
    if facts:
        clients.store.record_facts(world_id, [], facts, [])


def _reconnect(clients: Clients, world_id: str, memory_ids: Sequence[str]) -> None:
    """Facts active again: the edges they stand for come back."""
    now = utcnow()
    for fact in clients.store.get_semantic(world_id, memory_ids) if memory_ids else []:
        if fact.status == "active" and fact.object_entity_id is not None and fact.source_event_ids:
            relate_fact(clients, fact, fact.source_event_ids[-1], now)
