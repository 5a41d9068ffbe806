"""Mention detection: a parser's named entities (with their types) where one is given, proper-noun spans by
rule, known aliases, pronouns, definite descriptions; never a date or a number."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from engram.model.entities import Mention
from engram.rules.names import ENTITY_TYPES, Span, acts_as_person, guess_entity_type, parsed_entity_type
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
    "last", "next", "tonight", "morning", "evening", "afternoon", "weekend", "dr", "mr", "mrs", "ms", "prof",
    "omg", "lmao", "rofl", "ugh", "idk", "tbh", "imo", "fyi", "asap", "wtf", "brb", "ttyl", "yay", "hmm", "meh",
    "yeah", "yep", "nope", "aww", "ooh", "xoxo", "bye", "goodbye", "glad", "wanna", "gonna", "gotta", "nah",
    "welcome", "cheers", "fri", "tues", "tue", "weds", "thur", "thurs", "sept", "woohoo", "hooray", "whoa", "woah",
    "always", "even", "never", "maybe", "perhaps", "hopefully", "definitely", "absolutely", "totally", "honestly",
    "seriously", "literally", "basically", "anyway", "anyways", "still", "just", "really", "indeed", "exactly",
})
_TITLE_BEFORE = re.compile(r"\b(?:Dr|Mr|Mrs|Ms|Mx|Prof)\.?\s+$")
# A span ending so is no name of its own: "Last Friday I", "Dana I'm" (the speaker's "I" follows a name).
_NOT_NAME_ENDS = frozenset({"i", "i'm", "i've", "i'd", "i'll"})
_SENTENCE_START = re.compile(r"(?:^|[.!?:;\n])[\s\"'(\[*-]*$")
_CAP_SPAN = re.compile(r"\b([A-Z][\w'-]*(?:\s+(?:of\s+|de\s+|the\s+)?[A-Z][\w'-]*)*)")
_WORD = re.compile(r"\b[\w']+\b")
_DESCRIPTION = re.compile(r"\b(?:my|our|the)\s+(?:" + "|".join(RELATION_NOUNS) + r")\b", re.I)
# "it" that points at nothing: the weather, the time, a verdict ("it's raining", "it is late", "it was fine").
_EXPLETIVE_IT = re.compile(
    r"\bit(?:'s|\s+is|\s+was|\s+will\s+be|\s+seems|\s+looks)\s+(?:so\s+|very\s+|a\s+)?(?:raining|snowing|sunny|"
    r"cloudy|windy|cold|hot|warm|late|early|time|ok|okay|fine|true|possible|likely|important|hard|easy|nice|good|"
    r"great|bad|weird|funny|clear|obvious)\b", re.I)


def detect_mentions(event_id: str, text: str, known_aliases: Iterable[str] = (),
                    named: Sequence[Span] | None = None) -> list[Mention]:
    """Mentions in one text, left to right, without overlaps (longer spans win). With a parser's `named`
    spans, a named entity is a name with its type, a date or number span is nothing, and a capitalised
    sentence start the parser did not read as a name may resolve to a known entity but never creates one."""
    names = [m for span in named or () if span.label in ENTITY_TYPES for m in _named(event_id, text, span)]
    dates = [(s.start, s.end) for s in named or () if s.label not in ENTITY_TYPES]
    found: list[Mention] = []
    for start, span_text in _capitalised(text):
        end = start + len(span_text)
        if any(start < e <= end for _s, e in dates):
            continue  # a capitalised date ("Christmas Eve"); a name before a date's words stays ("Zentri this morning")
        inside = [m for m in names if start <= m.start and m.end <= end]
        if inside and len(span_text.split()) <= 3 and [(m.start, m.end) for m in inside] != [(start, end)]:
            # The parser cut a name ("Jamal" GPE, "Esposito" PERSON): the whole capitalised run is the name.
            names = [m for m in names if m not in inside]
            found.append(Mention(text=span_text[:-2] if span_text.endswith("'s") else span_text, kind="name",
                                 event_id=event_id, start=start, end=end,
                                 entity_type=_run_type(text[:start], span_text, inside)))
            continue
        if any(start < m.end and m.start < end for m in names):
            continue
        opening = named is not None and _SENTENCE_START.search(text[:start]) is not None
        # A sentence start that goes on to live or work somewhere is someone ("Rune Gathii resides in Galway").
        person = opening and acts_as_person(text[end:])
        found.append(Mention(text=span_text[:-2] if span_text.endswith("'s") else span_text, kind="name",
                             event_id=event_id, start=start, end=end, may_create=not opening or person,
                             entity_type="person" if person else None))
    found += names
    # A description comes before a known alias of the same span: "my boss", once learned as an alias, is
    # still a description (resolved by alias, never created as a name).
    for m in _DESCRIPTION.finditer(text):
        found.append(Mention(text=m.group(0), kind="description", event_id=event_id, start=m.start(), end=m.end()))
    lowered = text.lower()
    for alias in known_aliases:
        for m in re.finditer(rf"(?<!\w){re.escape(alias.lower())}(?!\w)", lowered):
            if not any(m.start() < e and s < m.end() for s, e in dates):  # "June" the month is no one
                found.append(Mention(text=text[m.start():m.end()], kind="name", event_id=event_id,
                                     start=m.start(), end=m.end()))
    expletive = {m.start() for m in _EXPLETIVE_IT.finditer(text)}
    for m in _WORD.finditer(text):
        word = m.group(0).split("'")[0]  # "she's" -> "she"
        if word.lower() in PRONOUNS and m.start() not in expletive:
            found.append(Mention(text=word, kind="pronoun", event_id=event_id, start=m.start(),
                                 end=m.start() + len(word)))
    return _without_overlaps(found)


def _capitalised(text: str) -> list[tuple[int, str]]:
    """Capitalised word runs by rule, greetings, weekdays and stopwords at either end dropped ("Hi Dana" ->
    "Dana"; "My Boss" -> "Boss"; "Last Friday I" and "It's" are no names)."""
    spans = []
    for m in _CAP_SPAN.finditer(text):
        words = list(re.finditer(r"\S+", m.group(1)))
        while words and words[0].group(0).lower().strip("'").split("'")[0] in _NOT_NAMES | STOPWORDS:
            words = words[1:]
        while words and words[-1].group(0).lower() in _NOT_NAME_ENDS:
            words = words[:-1]
        if words:
            spans.append((m.start(1) + words[0].start(), " ".join(w.group(0) for w in words)))
    return spans


def _run_type(before: str, run: str, pieces: Sequence[Mention]) -> str:
    """A name the parser cut in pieces is a person if a piece is; else what its words say (a company's
    kind, "in" a place); else its last piece's place or organization; else a person."""
    types = [m.entity_type for m in pieces]
    guessed = guess_entity_type(before, run)
    if "person" in types or guessed != "person":
        return "person" if "person" in types else guessed
    return types[-1] if types[-1] in ("place", "organization") else "person"


@dataclass(frozen=True)
class _Part:
    """A piece of a parser's span (a `Span`)."""

    text: str
    start: int
    end: int
    label: str


def _named(event_id: str, text: str, span: Span) -> list[Mention]:
    """A parser's named span as a name: without a leading "the", a possessive or a closing period
    ("the Louvre" -> "Louvre", "Acme Inc." -> "Acme Inc"); lowercase ones resolve but never create."""
    start, end = span.start, span.end
    if (comma := text.find(", ", start, end)) > start:  # "Tessellate Labs, Ilse" run together: two names
        return [*_named(event_id, text, _Part(text[start:comma], start, comma, span.label)),
                *_named(event_id, text, _Part(text[comma + 2:end], comma + 2, end, span.label))]
    if text[start:end].lower().startswith("the ") and end - start > 4:
        start += 4
    if span.label == "PERSON" and (title := _TITLE_BEFORE.search(text[:start])) is not None:
        start = title.start()  # "Dr. Patel" is who was named, not "Patel"
    for tail in ("'s", "’s", "."):
        if text[start:end].endswith(tail) and end - start > len(tail) + 1:
            end -= len(tail)
    while (word := re.match(r"[\w']+[\s,]+", text[start:end])) and word.group(0).rstrip(", ").lower() in _NOT_NAMES:
        start += word.end()  # "Bye Caroline" -> "Caroline"
    words = text[start:end].split()
    if not words or all(w.lower() in _NOT_NAMES | STOPWORDS for w in words):
        return []
    return [Mention(text=text[start:end], kind="name", event_id=event_id, start=start, end=end,
                    entity_type=parsed_entity_type(span.label, text[:start], text[start:end], text[end:]), may_create=any(c.isupper() for c in text[start:end]))]


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
