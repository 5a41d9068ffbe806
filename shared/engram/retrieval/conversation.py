"""Conversation context (Komputa rules): the last exchanges of the conversation, the user's past
events most similar to the question, and the most important ones; deduplicated, chronological,
at most `context_max_items` lines of "[relative time] Role: content"."""

from __future__ import annotations

from datetime import datetime

from engram.model.events import StoredEvent
from engram.rules.timefmt import relative_time
from engram.service import Clients


def conversation_context(clients: Clients, world_id: str, user_id: str, conversation_id: str | None,
                         question: str, now: datetime) -> list[StoredEvent]:
    h = clients.heuristics_for(world_id)
    picked: dict[str, StoredEvent] = {}
    if conversation_id:
        for e in clients.store.conversation_events(world_id, conversation_id, h.context_recent_exchanges * 2):
            picked.setdefault(e.event_id, e)
    [vector] = clients.embedder.embed([question])
    similar = clients.store.semantic_search(world_id, vector, user_id=user_id, kinds=("event",),
                                            limit=h.context_semantic, min_similarity=h.semantic_min_similarity)
    for e in clients.store.get_events(world_id, [s.doc_id for s in similar]):
        picked.setdefault(e.event_id, e)
    for e in clients.store.important_events(world_id, user_id, h.context_important):
        picked.setdefault(e.event_id, e)
    # Keep the most recent when over the cap, then show them in order.
    chosen = sorted(picked.values(), key=lambda e: e.occurred_at)[-h.context_max_items:]
    return chosen


def format_line(event: StoredEvent, now: datetime) -> str:
    return f"[{relative_time(event.occurred_at, now)}] {event.role.capitalize()}: {event.content}"
