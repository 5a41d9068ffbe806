"""Mention detection by rules: proper-noun spans, known aliases, pronouns, definite descriptions."""

from __future__ import annotations

import re
from collections.abc import Iterable

from engram.model.entities import Mention
from engram.rules.text import STOPWORDS

PRONOUNS = frozenset({"he", "she", "him", "her", "they", "them", "it"})
PERSON_PRONOUNS = frozenset({"he", "she", "him", "her"})
RELATION_NOUNS = ("boss", "manager", "wife", "husband", "partner", "friend", "sister", "brother", "mother",
                  "father", "mom", "dad", "son", "daughter", "colleague", "client", "customer", "doctor",
                  "teacher", "neighbor", "neighbour", "team", "company", "landlord", "girlfriend", "boyfriend")
_NOT_NAMES = frozenset({
    "i", "i'm", "i've", "i'd", "i'll", "hi", "hello", "hey", "thanks", "thank", "yes", "no", "ok", "okay", "sure",
    "please", "remember", "nice", "great", "good", "well", "oh", "wow", "sorry", "also", "actually", "btw",
    "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "january", "february",
    "march", "april", "may", "june", "july", "august", "september", "october", "november", "december",
    "today", "tomorrow", "yesterday", "lol", "haha", "cool", "awesome", "congrats", "congratulations",
})
_CAP_SPAN = re.compile(r"\b([A-Z][\w'-]*(?:\s+(?:of\s+|de\s+|the\s+)?[A-Z][\w'-]*)*)")
_WORD = re.compile(r"\b[\w']+\b")
_DESCRIPTION = re.compile(r"\b(?:my|our|the)\s+(?:" + "|".join(RELATION_NOUNS) + r")\b", re.I)


def detect_mentions(event_id: str, text: str, known_aliases: Iterable[str] = ()) -> list[Mention]:
    """Mentions in one text, left to right, without overlaps (longer spans win)."""
    found: list[Mention] = []
    for m in _CAP_SPAN.finditer(text):
        words = m.group(1).split()
        while words and words[0].lower().strip("'") in _NOT_NAMES | STOPWORDS:
            words = words[1:]  # "Hi Dana" -> "Dana"; "My Boss" -> "Boss"
        if not words:
            continue
        span = " ".join(words)
        start = m.start(1) + m.group(1).index(words[0])
        # A possessive is the name without "'s" (rstrip would eat the name's own s: "Chris's").
        found.append(Mention(text=span[:-2] if span.endswith("'s") else span, kind="name",
                             event_id=event_id, start=start, end=start + len(span)))
    lowered = text.lower()
    for alias in known_aliases:
        for m in re.finditer(rf"(?<!\w){re.escape(alias.lower())}(?!\w)", lowered):
            found.append(Mention(text=text[m.start():m.end()], kind="name", event_id=event_id,
                                 start=m.start(), end=m.end()))
    for m in _DESCRIPTION.finditer(text):
        found.append(Mention(text=m.group(0), kind="description", event_id=event_id, start=m.start(), end=m.end()))
    for m in _WORD.finditer(text):
        if m.group(0).lower() in PRONOUNS:
            found.append(Mention(text=m.group(0), kind="pronoun", event_id=event_id, start=m.start(), end=m.end()))
    return _without_overlaps(found)


def _without_overlaps(mentions: list[Mention]) -> list[Mention]:
    kept: list[Mention] = []
    for m in sorted(mentions, key=lambda m: (m.start, -(m.end - m.start))):
        if kept and m.start < kept[-1].end:
            continue
        kept.append(m)
    return kept
