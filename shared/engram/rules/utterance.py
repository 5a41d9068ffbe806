"""How an event reads as an utterance: who said it and what, alone and after the turn it answers.
Vectors are made of these, so that the speaker (who "I" is) and the question a reply answers count."""

from __future__ import annotations

import re

from engram.model.events import StoredEvent

SPEAKER = re.compile(r"^(?:user|assistant|system|[A-Z][\w.'-]*(?: [A-Z][\w.'-]*){0,2})\s*:\s+")  # "Dana: ..."
SENTENCE_END = re.compile(r"(?<=[.!?])\s+")  # where a turn's sentences part, as the readers of turns split them


def speaker_of(event: StoredEvent) -> str:
    """The name the event was said under: its `speaker` metadata, the user for a user's turn, else the role."""
    named = event.metadata.get("speaker")
    if isinstance(named, str) and named.strip():
        return named.strip()
    return event.user_id if event.role == "user" else event.role


def utterance(event: StoredEvent) -> str:
    """`Speaker: content`."""
    return f"{speaker_of(event)}: {event.content}"


def in_context(previous: StoredEvent | None, event: StoredEvent) -> str:
    """The utterance after the one before it in its conversation (itself alone when it opens one)."""
    return utterance(event) if previous is None else f"{utterance(previous)}\n{utterance(event)}"
