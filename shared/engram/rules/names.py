"""Names as people say them: the key a company's name is matched on whatever its suffix ("Acme Corp",
"Acme Corporation", "ACME corp."), a person's first name, the short form of a known name ("Alice" of
"Alice Moreau"), and the nicknames a text states ("call me Dee", "Robert Lang, known as Bobby")."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

CORPORATE_SUFFIXES = frozenset({
    "corp", "corporation", "inc", "incorporated", "ltd", "limited", "llc", "llp", "co", "company", "gmbh", "plc",
    "ag", "sa", "srl", "bv", "nv", "pty", "oy", "ab", "as", "kk", "pte",
})
_TITLES = frozenset({"mr", "mrs", "ms", "miss", "mx", "dr", "prof", "professor", "sir", "dame", "lord", "lady",
                     "st", "saint", "uncle", "aunt", "auntie", "grandma", "grandpa", "captain", "judge"})
# OntoNotes labels to entity types; a label not here (DATE, TIME, CARDINAL, MONEY...) never makes an entity.
ENTITY_TYPES = {"PERSON": "person", "ORG": "organization", "GPE": "place", "LOC": "place", "FAC": "place",
                "NORP": "thing", "PRODUCT": "thing", "WORK_OF_ART": "thing", "EVENT": "thing", "LAW": "thing",
                "LANGUAGE": "thing"}


class Span(Protocol):
    """A parser's named span (the language port's `NamedSpan`): `text[start:end]` and its OntoNotes label."""

    @property
    def text(self) -> str: ...
    @property
    def start(self) -> int: ...
    @property
    def end(self) -> int: ...
    @property
    def label(self) -> str: ...


_ORG_WORDS = CORPORATE_SUFFIXES | {
    "labs", "robotics", "university", "school", "bank", "group", "systems", "technologies", "hospital", "college",
    "institute", "foods", "analytics", "partners", "holdings", "industries", "solutions", "consulting", "studios",
    "agency", "foundation", "airlines", "motors", "media", "pharmaceuticals", "software", "ventures", "capital"}
_PLACE_PREPOSITIONS = frozenset({"in", "at", "to", "from", "near", "visit", "visited", "visiting"})


def guess_entity_type(before: str, name: str) -> str:
    """person, organization or place from the name and the word before it: the rule where no parser read the
    name ("Minho Foods" is an organization whatever precedes it; "in Leeds" a place)."""
    if name.split()[-1].lower().rstrip(".") in _ORG_WORDS:
        return "organization"
    previous = before.split()[-1].lower() if before.split() else ""
    if previous in {"a", "an", "the"}:
        return "thing"  # "an Uber", "the Warriors": no one's name
    return "place" if previous in _PLACE_PREPOSITIONS else "person"


_MOTION = frozenset({"move", "moved", "moving", "moves", "went", "go", "going", "goes", "relocated", "relocating",
                     "flew", "fly", "flying", "travelled", "traveled", "travel", "drove", "trip", "back", "came",
                     "come", "coming", "emigrated", "headed", "heading", "returned", "visit", "visited"})


_PETS = re.compile(r"\b(?:dog|cat|puppy|kitten|pet|hamster|parrot|rabbit|bunny|horse|pony|bird|turtle|snake|"
                   r"goldfish|fish|guinea pig)s?\b[^.!?]*\b(?:called|named|is)\s+$", re.I)


# What only a person does, said right after a name ("Kalani works at", "Ilse now lives in", "Ana is a nurse at"):
# the verb's subject is a person whatever the small parser labelled the name.
_PERSON_AFTER = re.compile(
    r"^\s*(?:(?:now|also|still|just|already|actually|currently|recently|finally|really|has|had|'s|have|is|was)\s+)*(?:"
    r"lives|lived|living|been\s+living|works\s+(?:at|for|as)|worked\s+(?:at|for|as)|been\s+working|"
    r"(?:does|did)\s*(?:n't|not)\s+(?:work|live)|got\s+a\s+job|a\s+job\s+at|is\s+employed|"
    r"is\s+(?:a|an)\s+[a-z]+(?:\s+[a-z]+)?\s+at|resides)\b", re.I)
# A move said right after a name ("Ilse moved to Porto"): a person unless the parser read a company.
_MOVED_AFTER = re.compile(r"^\s*(?:(?:now|also|just|finally|recently|has|had)\s+)*(?:moved|relocated)\b", re.I)
_HOME_BEFORE = re.compile(r"\b(?:lives?|lived|living|resides?|moved|relocated|moving)\s+(?:in|to)\s+$", re.I)
_WORK_BEFORE = re.compile(r"\b(?:works?|worked|working|job|employed)\s+at\s+$", re.I)


def words_of_place(name: str) -> bool:
    """Whether a name says it is a place ("Heathrow Airport", "Central Park")."""
    return name.split()[-1].lower() in _PLACE_WORDS


_PLACE_WORDS = frozenset({"airport", "park", "station", "street", "road", "square", "beach", "museum", "harbour",
                          "harbor", "market", "mall", "centre", "center", "stadium"})


def acts_as_person(after: str) -> bool:
    """Whether the words right after a name say what only a person does ("works at", "now lives in", "is a nurse
    at"; not "moved": a meeting moves too): the name is someone's, even where no parser named it."""
    return _PERSON_AFTER.match(after) is not None


def parsed_entity_type(label: str, before: str, name: str, after: str = "") -> str:
    """The entity type of a parser's label, corrected where the small parser is known to slip: a bare name
    read as an organization after "in" ("head office in Bristol") or a move ("moved to York") is a place
    unless it sounds like a company; a name someone lives in is a place and one someone works at an
    organization; a name that lives, works or moves somewhere is a person ("Kalani works at ..."); a pet's
    name ("my dog is called Biscuit") is an animal."""
    if _PETS.search(before):
        return "animal"
    entity_type = ENTITY_TYPES[label]
    company = name.split()[-1].lower().rstrip(".") in _ORG_WORDS
    if entity_type != "person" and not company and (
            _PERSON_AFTER.match(after) or (entity_type != "organization" and _MOVED_AFTER.match(after))):
        return "person"
    if entity_type == "person" and _HOME_BEFORE.search(before):
        return "place"
    if entity_type in ("person", "place") and _WORK_BEFORE.search(before) and not words_of_place(name):
        return "organization"
    words = before.lower().split()[-2:]
    where = words[-1:] in (["in"], ["near"]) or (len(words) == 2 and words[1] == "to" and words[0] in _MOTION)
    if entity_type == "organization" and where and name.split()[-1].lower().rstrip(".") not in _ORG_WORDS:
        return "place"
    return entity_type


def name_key(name: str) -> str:
    """The form a name is matched on across its spellings: lowercased, spacing collapsed, a leading "the",
    trailing punctuation and corporate suffixes dropped ("The Acme Co., Ltd." -> "acme"). Never empty for a
    name that has a word: "Inc" alone stays "inc"."""
    words = [w.strip(".,;:!?") for w in name.lower().replace(",", " ").split()]
    words = [w for w in words if w]
    if len(words) > 1 and words[0] == "the":
        words = words[1:]
    while len(words) > 1 and words[-1].replace(".", "") in CORPORATE_SUFFIXES:
        words = words[:-1]
    return " ".join(words)


def has_corporate_suffix(name: str) -> bool:
    """Whether the name ends with a corporate suffix its key drops ("Acme Corp." yes, "Acme" no)."""
    return name_key(name) != " ".join(w.strip(".,;:!?") for w in name.lower().replace(",", " ").split() if w)


def brand(name: str) -> str:
    """A company's name as people shorten it: its key without the words that say what kind of company it is
    ("Northwind Labs" -> "northwind", "Acme Robotics Inc" -> "acme"); "Bank of America" stays whole."""
    words = name_key(name).split()
    while len(words) > 1 and words[-1] in _ORG_WORDS:
        words = words[:-1]
    return " ".join(words)


def first_name(name: str) -> str | None:
    """A person's first name when the name has one and more ("Dana Whitfield" -> "Dana"); None for a single
    word, a title ("Dr. Okafor"), an initial ("J. Smith") or a lowercase word."""
    words = name.split()
    if len(words) < 2:
        return None
    first = words[0]
    if first.lower().rstrip(".") in _TITLES or len(first.rstrip(".")) < 2 or not first[:1].isupper():
        return None
    return first if first.replace("-", "").replace("'", "").isalpha() else None


def is_short_form(short: str, full: str) -> bool:
    """Whether `short` is the same name said shorter: the first name, or some of the words in order
    starting with the first ("Alice" and "Alice Moreau", "Mary Lee" and "Mary Ann Lee"); case aside."""
    a, b = short.lower().split(), full.lower().split()
    if not a or len(a) >= len(b) or a[0] != b[0]:
        return False
    rest = iter(b[1:])
    return all(word in rest for word in a[1:])


@dataclass(frozen=True)
class StatedAlias:
    """A nickname a text states: `alias` (at `start:end`) names `subject`, None for the speaker."""

    alias: str
    start: int
    end: int
    subject: str | None = None
    subject_start: int = -1


# The words around a name in any case ("My name is", "CALL ME"); the name itself capitalised.
_NAME = r"([A-Z][\w'-]*\.?(?:\s+[A-Z][\w'-]*)*)"
_SPEAKER_NICKNAME = re.compile(
    r"\b(?i:call(?:s|ed)?\s+me|i\s+go\s+by|(?:i'm|i\s+am|i\s+was)\s+(?:also\s+)?(?:known|called)\s+as"
    r"|my\s+(?:nick)?name\s+is|my\s+(?:nick)?name's|name's)\s+" + _NAME)
_WHAT_THEY_CALL_ME = re.compile(_NAME + r"\s+(?i:is\s+what\s+(?:\w+\s+){0,4}call(?:s|ed)?\s+me)\b")
_INTRODUCTION = re.compile(r"\b(?i:i'm|i\s+am)\s+" + _NAME)
_THIRD_PERSON = re.compile(
    _NAME + r"(?:,\s*|\s+\(?)(?i:(?:also\s+|better\s+)?known\s+as|aka|a\.k\.a\.|nicknamed|also\s+called)\s+" + _NAME
    + r"|" + _NAME + r"\s+(?i:goes\s+by)\s+" + _NAME)
_NOT_NICKNAMES = frozenset({
    "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "tomorrow", "today", "tonight",
    "later", "back", "if", "when", "anytime", "asap", "ok", "okay", "please", "the", "a", "an", "not", "so",
})


def stated_aliases(text: str, persons: Sequence[Span] | None = None) -> list[StatedAlias]:
    """The nicknames and own names a text states: "call me Dee", "everyone calls me Dee", "I go by Dee",
    "my name is Dana Whitfield" (the speaker's); "Robert Lang, known as Bobby", "X goes by Y" (X's). "I'm X"
    counts only when a parser read X as a person (`persons`) or X is two capitalised words ("I'm Dana
    Whitfield", never "I'm British")."""
    found: list[StatedAlias] = []
    for pattern in (_SPEAKER_NICKNAME, _WHAT_THEY_CALL_ME):
        for m in pattern.finditer(text):
            found.extend(_alias(m.group(1), m.start(1)))
    person_spans = {(p.start, p.end) for p in persons or () if p.label == "PERSON"}
    for m in _INTRODUCTION.finditer(text):
        name = _clean(m.group(1))
        if (m.start(1), m.start(1) + len(name)) in person_spans or (persons is None and len(name.split()) > 1):
            found.extend(_alias(name, m.start(1)))
    for m in _THIRD_PERSON.finditer(text):
        subject, s_start, alias, a_start = ((m.group(1), m.start(1), m.group(2), m.start(2)) if m.group(1)
                                            else (m.group(3), m.start(3), m.group(4), m.start(4)))
        found.extend(_alias(alias, a_start, _clean(subject), s_start))
    return list({a.start: a for a in sorted(found, key=lambda a: -a.start)}.values())[::-1]


def _clean(name: str) -> str:
    """A name without a trailing period, unless it is an initial ("D.")."""
    name = name[:-2] if name.endswith("'s") else name
    return name[:-1] if name.endswith(".") and len(name.split()[-1]) > 2 else name


def _alias(name: str, start: int, subject: str | None = None, subject_start: int = -1) -> list[StatedAlias]:
    name = _clean(name).rstrip(".")
    words = name.split()
    while words and words[-1].lower() in _NOT_NICKNAMES:
        words = words[:-1]
    if not words or words[0].lower() in _NOT_NICKNAMES:
        return []
    alias = " ".join(words)
    return [StatedAlias(alias, start, start + len(alias), subject, subject_start)]
