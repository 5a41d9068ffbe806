"""Mention detection by rules: proper-noun spans, known aliases, pronouns, definite descriptions."""

from __future__ import annotations

import re
from collections.abc import Iterable

from engram.model.entities import Mention
from engram.rules.text import STOPWORDS

PERSON_PRONOUNS = frozenset({"he", "she", "him", "her", "his"})
THING_PRONOUNS = frozenset({"it", "its"})
GROUP_PRONOUNS = frozenset({"they", "them", "their"})
PRONOUNS = PERSON_PRONOUNS | THING_PRONOUNS | GROUP_PRONOUNS
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
# "it" that points at nothing: the weather, the time, a verdict ("it's raining", "it is late", "it was fine").
_EXPLETIVE_IT = re.compile(
    r"\bit(?:'s|\s+is|\s+was|\s+will\s+be|\s+seems|\s+looks)\s+(?:so\s+|very\s+|a\s+)?(?:raining|snowing|sunny|"
    r"cloudy|windy|cold|hot|warm|late|early|time|ok|okay|fine|true|possible|likely|important|hard|easy|nice|good|"
    r"great|bad|weird|funny|clear|obvious)\b", re.I)


def detect_mentions(event_id: str, text: str, known_aliases: Iterable[str] = ()) -> list[Mention]:
    """Mentions in one text, left to right, without overlaps (longer spans win)."""
    found: list[Mention] = []
    for m in _CAP_SPAN.finditer(text):
        words = m.group(1).split()
        while words and words[0].lower().strip("'").split("'")[0] in _NOT_NAMES | STOPWORDS:
            words = words[1:]  # "Hi Dana" -> "Dana"; "My Boss" -> "Boss"; "It's" is no name
        if not words:
            continue
        span = " ".join(words)
        start = m.start(1) + m.group(1).index(words[0])
        # A possessive is the name without "'s" (rstrip would eat the name's own s: "Chris's").
        found.append(Mention(text=span[:-2] if span.endswith("'s") else span, kind="name",
                             event_id=event_id, start=start, end=start + len(span)))
    # A description comes before a known alias of the same span: "my boss", once learned as an alias, is
    # still a description (resolved by alias, never created as a name).
    for m in _DESCRIPTION.finditer(text):
        found.append(Mention(text=m.group(0), kind="description", event_id=event_id, start=m.start(), end=m.end()))
    lowered = text.lower()
    for alias in known_aliases:
        for m in re.finditer(rf"(?<!\w){re.escape(alias.lower())}(?!\w)", lowered):
            found.append(Mention(text=text[m.start():m.end()], kind="name", event_id=event_id,
                                 start=m.start(), end=m.end()))
    expletive = {m.start() for m in _EXPLETIVE_IT.finditer(text)}
    for m in _WORD.finditer(text):
        word = m.group(0).split("'")[0]  # "she's" -> "she"
        if word.lower() in PRONOUNS and m.start() not in expletive:
            found.append(Mention(text=word, kind="pronoun", event_id=event_id, start=m.start(),
                                 end=m.start() + len(word)))
    return _without_overlaps(found)


def alias_phrases(text: str, max_words: int, max_phrases: int) -> list[str]:
    """The lowercase word runs of a text (1 to `max_words` words) that could be a known alias of the world,
    for one lookup per event: runs that start or end with a stopword, and single short words, are skipped."""
    words = [w.lower() for w in _WORD.findall(text)]
    phrases: dict[str, None] = {}
    for i in range(len(words)):
        for n in range(1, max_words + 1):
            run = words[i:i + n]
            if len(run) < n or run[0] in STOPWORDS or run[-1] in STOPWORDS or (n == 1 and len(run[0]) < 3):
                continue
            phrases[" ".join(run)] = None
            if len(phrases) >= max_phrases:
                return list(phrases)
    return list(phrases)


def _without_overlaps(mentions: list[Mention]) -> list[Mention]:
    kept: list[Mention] = []
    for m in sorted(mentions, key=lambda m: (m.start, -(m.end - m.start))):
        if kept and m.start < kept[-1].end:
            continue
        kept.append(m)
    return kept
