"""Erasing a user everywhere: the database (one transaction), then the keyword index."""

from __future__ import annotations

from engram.model.events import Erasure
from engram.observability import logger
from engram.service import Clients


def erase_user(clients: Clients, world_id: str, user_id: str) -> Erasure:
    """Remove the user's events, memories, signals, queries and index documents, and whatever was derived
    only from them. Another user's data, and every other world, are untouched. Erasing twice is harmless."""
    deleted, entity_ids = clients.store.erase_user(world_id, user_id)
    documents = clients.index.delete_world_user(world_id, user_id)
    if entity_ids:
        clients.index.delete(world_id, [("entity", e) for e in entity_ids])
        documents += len(entity_ids)
    logger.info("user erased", extra={"world_id": world_id, "deleted": deleted, "index_documents": documents})
    return Erasure(world_id=world_id, user_id=user_id, deleted=deleted, index_documents=documents)
