"""Conversation context, exactly as Komputa's rules say: the last 5 exchanges of the conversation (10
items), then the user's 3 past events most similar to the input not already chosen, then their 5 most
important not already chosen; at most 8 in all (taken in that order of priority, the latest exchanges
first), shown in the order they happened:

    Here's some relevant context from our previous conversations:
    - You said (3 hours ago): ...
    - I responded (3 hours ago): ...

    Current user input: ...

When the input needs current information (the web-search trigger rules) and a web search is enabled,
its results come first, under "Here's current web search information relevant to your question:" and
followed by an empty line. Another participant of a shared conversation is named ("- Sam said (...)")."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

from engram.model.events import StoredEvent
from engram.model.search import DocKind, SemanticHit
from engram.model.web import WebResult
from engram.model.world import World
from engram.ports import Embedder, EventStore, WebSearch
from engram.retrieval.embedding_cache import query_vector
from engram.rules.timefmt import relative_time
from engram.rules.web_trigger import needs_web_search

HEADER = "Here's some relevant context from our previous conversations:"
WEB_HEADER = "Here's current web search information relevant to your question:"
INPUT = "Current user input: {input}"


class ConversationStore(EventStore, Protocol):
    """What the conversation context reads: the conversation's events, and the user's similar ones (of
    `MemoryStore`)."""

    def semantic_search(
        self, world_id: str, embedding: Sequence[float], *, user_id: str | None, kinds: Sequence[DocKind],
        limit: int, min_similarity: float, context_weight: float = 0.0,
    ) -> list[SemanticHit]: ...


class ConversationPorts(Protocol):
    """The ports the conversation context uses: the store, the embedder, and the web search when enabled."""

    @property
    def store(self) -> ConversationStore: ...
    @property
    def embedder(self) -> Embedder: ...
    @property
    def web(self) -> WebSearch | None: ...


@dataclass(frozen=True)
class ConversationContext:
    events: list[StoredEvent]  # chosen, oldest first
    web: list[WebResult] = field(default_factory=list)
    singular_units: bool = False  # "1 minute ago" instead of the document's "1 minutes ago"
    # Why each event was chosen: "exchange" (the conversation's latest), "semantic_match" or "important".
    origins: dict[str, str] = field(default_factory=dict)

    def lines(self, user_id: str, now: datetime) -> list[str]:
        """The context lines: web results first, then one line per event."""
        web = [WEB_HEADER, *(f"- {r.title}: {r.snippet}" + (f" ({r.url})" if r.url else "") for r in self.web)]
        events = [HEADER, *(format_line(e, user_id, now, singular_units=self.singular_units) for e in self.events)]
        return ([*web, ""] if self.web else []) + (events if self.events else [])

    def render(self, user_id: str, user_input: str, now: datetime) -> str:
        """The whole block as the model reads it, ending with the current input."""
        lines = self.lines(user_id, now)
        return "\n".join([*lines, "", INPUT.format(input=user_input)] if lines else [INPUT.format(input=user_input)])


def format_line(event: StoredEvent, user_id: str, now: datetime, *, singular_units: bool = False) -> str:
    """`- You said (3 hours ago): ...` for the user, `- I responded (...)` for the assistant."""
    when = relative_time(event.occurred_at, now, singular=singular_units)
    if event.role == "assistant":
        who = "I responded"
    elif event.role == "user" and event.user_id == user_id:
        who = "You said"
    elif event.role == "user":
        who = f"{event.metadata.get('speaker') or event.user_id} said"
    else:
        who = f"{event.role.capitalize()} noted"
    return f"- {who} ({when}): {event.content}"


def conversation_context(clients: ConversationPorts, world: World, user_id: str, conversation_id: str | None,
                         user_input: str, now: datetime) -> ConversationContext:
    """The events the rules choose for this input (and web results when they are called for)."""
    world_id, h = world.world_id, world.heuristics
    recent: list[StoredEvent] = []
    if conversation_id:
        # Only a conversation the user takes part in: naming another user's conversation reads nothing of it.
        recent = clients.store.conversation_events(world_id, conversation_id, h.context.context_recent_exchanges * 2,
                                                   user_id=user_id)
    chosen: dict[str, StoredEvent] = {e.event_id: e for e in reversed(recent)}  # the latest exchange first
    origins = dict.fromkeys(chosen, "exchange")
    vector = query_vector(clients.embedder, user_input, h.retrieval.query_embedding_cache)
    similar = clients.store.semantic_search(world_id, vector, user_id=user_id, kinds=("event",),
                                            limit=h.context.context_semantic + len(chosen),
                                            min_similarity=h.retrieval.semantic_min_similarity)
    new = [s.doc_id for s in similar if s.doc_id not in chosen][: h.context.context_semantic]
    chosen.update({e.event_id: e for e in clients.store.get_events(world_id, new)})
    origins.update({i: "semantic_match" for i in chosen if i not in origins})
    important = clients.store.important_events(world_id, user_id, h.context.context_important + len(chosen))
    chosen.update({e.event_id: e for e in [e for e in important if e.event_id not in chosen]
                   [: h.context.context_important]})
    origins.update({i: "important" for i in chosen if i not in origins})
    kept = list(chosen.values())[: h.context.context_max_items]
    web: list[WebResult] = []
    if clients.web is not None and needs_web_search(user_input, h):
        web = clients.web.search(user_input, h.context.web_search_max_results)
    return ConversationContext(events=sorted(kept, key=lambda e: (e.occurred_at, e.event_id)), web=web,
                               singular_units=h.context.relative_time_singular,
                               origins={e.event_id: origins[e.event_id] for e in kept})
