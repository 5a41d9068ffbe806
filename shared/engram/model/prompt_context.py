"""The context for an agent's prompt: the conversation context the rules build and the current facts relevant
to the input, as one text to paste into a prompt and as the items it is made of."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field

from engram.model.common import Frozen

PromptItemKind = Literal["exchange", "semantic_match", "important", "fact", "web"]


class PromptContextItem(Frozen):
    """One line of the text: an event the conversation rules chose, a current fact, or a web result."""

    kind: PromptItemKind
    id: str  # the event_id, the fact's memory_id, or the web result's url
    text: str  # the content alone
    line: str  # the line exactly as the text shows it (prefix and relative time included)
    score: float | None = None  # a fact's fused search score (higher is better)
    when: datetime | None = None  # when it was said or learned
    role: str | None = None  # an event's role
    user_id: str | None = None  # whose it is (None: the world's)


class PromptContext(Frozen):
    """`text` holds the kept items in sections; `items` lists them in the order of the text."""

    world_id: str
    user_id: str
    query: str
    conversation_id: str | None = None
    text: str
    items: list[PromptContextItem] = Field(default_factory=list)
    estimated_tokens: int  # the text's, at the world's chars_per_token
    max_tokens: int
    dropped: int = 0  # items left out to stay within max_tokens, the lowest priority first
