"""Event classification by rules: only statements, corrections and explicit preferences are extracted."""

from __future__ import annotations

import re
from typing import Literal

EventClass = Literal["statement", "correction", "explicit_preference", "question", "command", "confirmation",
                     "greeting", "other"]
EXTRACTABLE: frozenset[str] = frozenset({"statement", "correction", "explicit_preference"})

_GREETING = re.compile(r"^\s*(hi|hello|hey|good (morning|afternoon|evening)|greetings|thanks|thank you|bye)\b[\s!.,]*$",
                       re.I)
_CONFIRM = re.compile(r"^\s*(yes|yeah|yep|ok|okay|sure|right|exactly|correct|sounds good|great)\b[\s!.]*$", re.I)
_CORRECTION = re.compile(r"\b(actually|correction|i meant|not .+ but|no longer|i was wrong|to be clear|mixed (?:that|it|"
                         r"those|them|these) up|my (?:bad|mistake)|i misspoke|scratch that|i got (?:that|it) wrong|"
                         r"i (?:mis)?remembered wrong|let me correct|i stand corrected)\b", re.I)
# "Kim works at Zentri, not (at) Acme": a value said against another one it replaces (a name after the "not").
_CONTRAST = re.compile(r"\w,\s+(?i:not)\s+(?:(?i:at|in|with|for|to|from)\s+)?(?:the\s+)?[A-Z]\w")
# "Did I tell you that Kim lives in Cork?": a question about telling whose clause is news.
_TOLD = re.compile(r"^\s*(?:did|have)\s+i\s+(?:ever\s+)?(?:tell|told|mention|mentioned)\s+(?:to\s+)?you\s+(?:that\s+)?\w+\s+\w+",
                   re.I)
_PREFERENCE = re.compile(r"\b(i (really )?(prefer|like|love|hate|dislike|enjoy|can't stand)|my fav(ou?rite)?|"
                         r"[A-Z]\w+ (prefers|likes|loves|hates|dislikes|enjoys))\b",  # "Priya prefers tea", too
                         re.I)
_QUESTION = re.compile(r"^\s*(who|what|when|where|why|how|which|do|does|did|is|are|can|could|would|will|should)\b", re.I)
_COMMAND = re.compile(r"^\s*(please\b|tell me|show me|give me|find|list|remind me|book|send|schedule)\b", re.I)
_STATEMENT = re.compile(r"\b(i|i'm|my|we|our|he|she|they|it|is|are|was|were|have|has|had|will|am)\b", re.I)


def classify(content: str) -> EventClass:
    text = content.strip()
    if _GREETING.match(text):
        return "greeting"
    if _CONFIRM.match(text):
        return "confirmation"
    told = _TOLD.match(text) is not None
    if text.endswith("?") and not re.search(r"[.!]\s", text) and not told:
        return "question"  # "What do I like?" asks; it states no preference
    if _CORRECTION.search(text) or _CONTRAST.search(text):
        return "correction"
    if _PREFERENCE.search(text):
        return "explicit_preference"
    if _QUESTION.match(text) and "." not in text and not told:
        return "question"
    if _COMMAND.match(text):
        return "command"
    if _STATEMENT.search(text) or len(text.split()) >= 4:
        return "statement"
    return "other"
