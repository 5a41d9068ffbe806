"""The context for an agent's prompt (mem0's search, Zep's context string): the conversation context Komputa's
rules build for the input (the latest exchanges, the similar past events, the important ones, with their
exact prefixes and relative times, and web results when they are called for), then the user's current facts
relevant to the input, as one text within a token budget and as the items it is made of.

The budget drops whole items, the lowest priority first: important events, then similar ones, then web
results, then facts (the weakest first), the conversation's latest exchanges last (the oldest first)."""

from __future__ import annotations

import math
from datetime import datetime
from typing import Protocol

from engram.model.common import utcnow
from engram.model.events import StoredEvent
from engram.model.prompt_context import PromptContext, PromptContextItem
from engram.model.web import WebResult
from engram.model.world import World
from engram.ports import Embedder, KeywordIndex, WebSearch
from engram.retrieval.conversation import ConversationContext, ConversationStore, conversation_context, format_line
from engram.retrieval.search import SearchStore, search

FACTS_HEADER = "Here's what I currently know that is relevant:"
CONTEXT_FACTS = 5  # current facts joined to the conversation context, the best first
_PRIORITY = {"exchange": 0, "fact": 1, "semantic_match": 2, "important": 3, "web": 4}  # lower is kept longer


class PromptContextStore(ConversationStore, SearchStore, Protocol):
    """What the prompt context reads: the conversation's events and the fused search's documents."""


class PromptContextPorts(Protocol):
    """The ports the prompt context uses: the conversation context's and the fused search's."""

    @property
    def store(self) -> PromptContextStore: ...
    @property
    def index(self) -> KeywordIndex: ...
    @property
    def embedder(self) -> Embedder: ...
    @property
    def web(self) -> WebSearch | None: ...


def prompt_context(clients: PromptContextPorts, world: World, user_id: str, q: str, conversation_id: str | None,
                   max_tokens: int, now: datetime | None = None) -> PromptContext:
    """The user's context for the input `q`, as text of at most `max_tokens` (estimated) and as items. Only the
    user's own events and facts and the world's are read; another user's never."""
    now = now or utcnow()
    h = world.heuristics
    conversation = conversation_context(clients, world, user_id, conversation_id, q, now)
    found = search(clients, world, q, user_id=user_id, limit=CONTEXT_FACTS, kinds=("semantic",), now=now)
    facts = [f for f in found.hits if f.kind == "semantic" and f.user_id in (None, user_id)]
    items: list[PromptContextItem] = [
        *(_event_item(e, conversation, user_id, now) for e in conversation.events),
        *(PromptContextItem(kind="fact", id=f.doc_id, text=f.text, line=f"- {f.text}", score=round(f.score, 6),
                            when=f.occurred_at, user_id=f.user_id) for f in facts),
        *(_web_item(r) for r in conversation.web),
    ]
    ranked = sorted(range(len(items)), key=lambda i: (_PRIORITY[items[i].kind], _recency(items[i], i)))
    kept = set(ranked)
    text = _render(items, kept, conversation, user_id, now)
    for dropped in reversed(ranked):  # the lowest priority first, never part of a line
        if _tokens(text, h.query.chars_per_token) <= max_tokens:
            break
        kept.discard(dropped)
        text = _render(items, kept, conversation, user_id, now)
    return PromptContext(world_id=world.world_id, user_id=user_id, query=q, conversation_id=conversation_id,
                         text=text, items=[items[i] for i in sorted(kept)], max_tokens=max_tokens,
                         estimated_tokens=_tokens(text, h.query.chars_per_token), dropped=len(items) - len(kept))


def _recency(item: PromptContextItem, position: int) -> float:
    # Exchanges: the latest kept longest; facts: the best; other events and web results: in the rules' order.
    if item.kind == "exchange" and item.when is not None:
        return -item.when.timestamp()
    if item.kind == "fact" and item.score is not None:
        return -item.score
    return position


def _event_item(event: StoredEvent, conversation: ConversationContext, user_id: str,
                now: datetime) -> PromptContextItem:
    kind = conversation.origins.get(event.event_id, "important")
    return PromptContextItem(kind=kind, id=event.event_id, text=event.content, when=event.occurred_at,  # type: ignore[arg-type]
                             line=format_line(event, user_id, now, singular_units=conversation.singular_units),
                             role=event.role, user_id=event.user_id)


def _web_item(result: WebResult) -> PromptContextItem:
    line = f"- {result.title}: {result.snippet}" + (f" ({result.url})" if result.url else "")
    return PromptContextItem(kind="web", id=result.url or result.title, text=result.snippet, line=line)


def _render(items: list[PromptContextItem], kept: set[int], conversation: ConversationContext, user_id: str,
            now: datetime) -> str:
    """The kept items in sections: the conversation context exactly as the rules print it, then the facts."""
    events = {items[i].id for i in kept if items[i].kind not in ("fact", "web")}
    web = [r for r, i in zip(conversation.web, _web_positions(items), strict=True) if i in kept]
    lines = ConversationContext(events=[e for e in conversation.events if e.event_id in events], web=web,
                                singular_units=conversation.singular_units).lines(user_id, now)
    while lines and not lines[-1]:  # web results alone end with the blank line that precedes the events
        lines.pop()
    facts = [items[i].line for i in sorted(kept) if items[i].kind == "fact"]
    if facts:
        lines = [*lines, *([""] if lines else []), FACTS_HEADER, *facts]
    return "\n".join(lines)


def _web_positions(items: list[PromptContextItem]) -> list[int]:
    return [i for i, item in enumerate(items) if item.kind == "web"]


def _tokens(text: str, chars_per_token: float) -> int:
    return math.ceil(len(text) / chars_per_token)
