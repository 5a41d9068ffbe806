"""Offline statement patterns: the common first-person and third-person facts people state, as
(subject, predicate, object) triples. Used by the offline model so memory builds with no LLM."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from engram.rules.grounding import without_dates

SELF = "__speaker__"  # the subject "I"/"my": the speaking user


@dataclass(frozen=True)
class Statement:
    subject: str
    predicate: str
    object: str
    object_is_entity: bool
    confidence: float
    when: str | None = None  # the sentence's date expression ("last year"), grounded by the caller
    subject_type: str | None = None  # person, organization, place, date, thing; None: not read
    object_type: str | None = None
    negated: bool = False  # said not to hold ("I no longer live in Lisbon"): never a positive fact


_OBJ = r"(?P<obj>[^.,;!?]+?)"
_END = r"\s*(?:[.,;!?]|\band\b|\bbut\b|$)"
_NAME = r"(?P<subj>[A-Z][\w'-]+(?:\s+[A-Z][\w'-]+)*)"

# (pattern, predicate, subject is the speaker, object names an entity, confidence)
_FIRST_PERSON: list[tuple[re.Pattern[str], str, bool, float]] = [
    (re.compile(rf"\bmy name is\s+{_OBJ}{_END}", re.I), "name", True, 0.9),
    (re.compile(rf"\b(?:i live|i'm living|i am living)\s+in\s+{_OBJ}{_END}", re.I), "lives_in", True, 0.9),
    (re.compile(rf"\bi moved to\s+{_OBJ}{_END}", re.I), "lives_in", True, 0.85),
    (re.compile(rf"\bi(?:'m| am| will be|'ll be) moving to\s+{_OBJ}{_END}", re.I), "lives_in", True, 0.8),
    (re.compile(rf"\bi(?:'ll| will) move to\s+{_OBJ}{_END}", re.I), "lives_in", True, 0.8),
    (re.compile(rf"\bi (?:started|start|'m starting|am starting|will start|'ll start) (?:working )?at\s+{_OBJ}"
                rf"(?:\s+as\b|{_END})", re.I), "works_at", True, 0.85),
    (re.compile(rf"\bi work\s+as\s+(?:an?\s+)?{_OBJ}{_END}", re.I), "works_as", False, 0.9),
    (re.compile(rf"\bi work\s+(?:at|for)\s+{_OBJ}(?:\s+as\b|{_END})", re.I), "works_at", True, 0.9),
    (re.compile(rf"\bi work\s+(?:at|for)\s+[^.,;!?]+?\s+as\s+(?:an?\s+)?{_OBJ}{_END}", re.I), "works_as", False, 0.9),
    # "I'm a bit tired" says how, not what: a degree word is no noun.
    (re.compile(rf"\bi(?:'m| am)\s+an?\s+(?!(?:bit|little|lot|tad)\b){_OBJ}{_END}", re.I), "is_a", False, 0.8),
    (re.compile(rf"\bi (?:really )?prefer\s+{_OBJ}{_END}", re.I), "prefers", False, 0.9),
    (re.compile(rf"\bi (?:really )?(?:love|adore)\s+{_OBJ}{_END}", re.I), "loves", False, 0.9),
    (re.compile(rf"\bi (?:really )?(?:like|enjoy)\s+{_OBJ}{_END}", re.I), "likes", False, 0.85),
    (re.compile(rf"\bi (?:really )?(?:hate|dislike|can't stand)\s+{_OBJ}{_END}", re.I), "dislikes", False, 0.9),
    (re.compile(rf"\bi always\s+{_OBJ}{_END}", re.I), "always", False, 0.85),
    (re.compile(rf"\bi never\s+{_OBJ}{_END}", re.I), "never", False, 0.85),
]
_FAVORITE = re.compile(rf"\bmy fav(?:ou?rite)\s+(?P<what>[a-z ]+?)\s+is\s+{_OBJ}{_END}", re.I)
_HAVE_NAMED = re.compile(rf"\bi have an?\s+(?P<what>[a-z ]+?)\s+(?:named|called)\s+{_OBJ}{_END}", re.I)
_MY_REL = re.compile(rf"\b{_NAME}\s+is my\s+(?P<rel>[a-z ]+?){_END}")
_MY_REL_REVERSE = re.compile(rf"\b[Mm]y\s+(?P<rel>[a-z]+)\s+(?:is|'s)\s+(?:called\s+|named\s+)?{_NAME}{_END}")
_THIRD_PREFERS = re.compile(rf"\b{_NAME}\s+prefers\s+{_OBJ}{_END}")
_THIRD_REL = re.compile(rf"\b{_NAME}\s+is\s+(?P<owner>[A-Z][\w'-]+)'s\s+(?P<rel>[a-z ]+?){_END}")
_NEGATED = re.compile(r"\b(?:don't|do not|doesn't|does not|never did|no longer)\b", re.I)
_RELATION_WORDS = {"boss", "wife", "husband", "manager", "friend", "sister", "brother", "mother", "father",
                   "mom", "dad", "son", "daughter", "partner", "colleague", "cousin", "aunt", "uncle",
                   "girlfriend", "boyfriend", "neighbor", "neighbour", "teacher", "doctor", "client", "dog", "cat"}


# A hedged statement ("I think I live in...", "maybe", "probably") is believed less.
_HEDGE = re.compile(r"\b(?:i think|i guess|i believe|i suppose|maybe|perhaps|probably|might|not sure)\b", re.I)
HEDGE_FACTOR = 0.6

_TRAILING_TIME = re.compile(r"\s+(?:now|nowadays|these days|today|currently|at the moment|anymore|too|as well)$",
                            re.I)


def _clean(text: str) -> str:
    # Quotes last: "Dune" too -> Dune, not Dune".
    return _TRAILING_TIME.sub("", " ".join(text.split())).strip("\"'")


def _snake(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


def statements(text: str) -> list[Statement]:
    """Every fact the patterns find in one utterance; questions and negations yield nothing."""
    out: list[Statement] = []
    for sentence in re.split(r"(?<=[.!?])\s+|\n+", text):
        if not sentence.strip() or sentence.rstrip().endswith("?") or _NEGATED.search(sentence):
            continue
        # "I moved to Porto last year": the date says when, it is not part of the object.
        undated, when = without_dates(sentence)
        hedge = HEDGE_FACTOR if _HEDGE.search(sentence) else 1.0
        out.extend(replace(st, when=when, confidence=round(st.confidence * hedge, 3))
                   for st in _sentence_statements(undated))
    seen: set[tuple[str, str, str]] = set()
    unique = []
    for s in out:
        key = (s.subject, s.predicate, s.object.lower())
        if key not in seen and s.object:
            seen.add(key)
            unique.append(s)
    return unique


def _sentence_statements(sentence: str) -> list[Statement]:
    found: list[Statement] = []
    for pattern, predicate, is_entity, confidence in _FIRST_PERSON:
        for m in pattern.finditer(sentence):
            found.append(Statement(SELF, predicate, _clean(m.group("obj")), is_entity, confidence))
    for m in _FAVORITE.finditer(sentence):
        found.append(Statement(SELF, f"favorite_{_snake(m.group('what'))}", _clean(m.group("obj")), False, 0.9))
    for m in _HAVE_NAMED.finditer(sentence):
        found.append(Statement(SELF, f"has_{_snake(m.group('what'))}", _clean(m.group("obj")), True, 0.9))
    for m in _MY_REL.finditer(sentence):
        rel = _snake(m.group("rel"))
        if rel.split("_")[-1] in _RELATION_WORDS:
            found.append(Statement(_clean(m.group("subj")), f"{rel}_of", SELF, True, 0.9))
    for m in _MY_REL_REVERSE.finditer(sentence):
        if m.group("rel").lower() in _RELATION_WORDS:
            found.append(Statement(_clean(m.group("subj")), f"{_snake(m.group('rel'))}_of", SELF, True, 0.9))
    for m in _THIRD_PREFERS.finditer(sentence):
        if m.group("subj").lower() not in {"i", "he", "she", "they", "it"}:
            found.append(Statement(_clean(m.group("subj")), "prefers", _clean(m.group("obj")), False, 0.7))
    for m in _THIRD_REL.finditer(sentence):
        found.append(Statement(_clean(m.group("subj")), f"{_snake(m.group('rel'))}_of",
                               _clean(m.group("owner")), True, 0.7))
    return found
