"""The values some question kinds ask for that no named entity gives, read from a sentence's parse.

"Where" is answered by common-noun places as well as named ones ("camping in the mountains", "near my
hometown", "to explore a new city"); "who" by a relation or a group as well as a name ("my aunt", "a local
organization", "my mentors, family and friends"); "how many" by a number said of the counted noun ("7 people
attended"); "how often" by a frequency ("a few times a week", "once or twice a year"); "how long" by a verb's
for-phrase ("hold it for 30-60 seconds"). When no turn covering the question says one, it is read from the asked
person's own turns (`tally`): a stated number, frequency or length; for a count, the highest ordinal of the
counted thing ("my fourth tournament"), else the distinct days the person told of it. A count is an aggregate
over retrieved evidence that may be incomplete: its confidence stays low."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import date
from typing import TYPE_CHECKING

from engram.adapters.offline.asked import Found
from engram.adapters.offline.choosing import said_by, statements
from engram.adapters.offline.spans import known_as
from engram.model.queries import ContextItem
from engram.rules.text import content_terms, stem
from engram.rules.utterance import SPEAKER

if TYPE_CHECKING:
    from spacy.tokens import Doc, Span, Token

    from engram.adapters.offline.asked import Reading

# Common nouns that name a place people go to or are at (a named place is an entity: GPE, LOC, FAC).
PLACE_NOUNS = frozenset((
    "beach mountain mountains forest woods park lake river sea ocean coast island city town village country "
    "countryside hometown home house apartment shelter gym church temple mosque school college university campus "
    "library museum gallery studio office hospital clinic restaurant cafe bar pub club store shop mall market "
    "farm garden backyard yard trail trails canyon desert valley hill hills cabin camp campsite campground "
    "stadium arena theater theatre cinema festival fair zoo aquarium hotel resort neighborhood neighbourhood "
    "downtown street road kitchen basement garage bedroom department center centre "
    "playground pool court field rink studio workshop conference convention retreat").split())
# Nouns that name a person by their relation to someone, or a group of people.
PEOPLE_NOUNS = frozenset((
    "mother mom mum mama father dad papa parent parents aunt auntie uncle cousin cousins sister sisters brother "
    "brothers sibling siblings grandma grandmother grandpa grandfather grandparents son sons daughter daughters "
    "kid kids child children husband wife spouse partner fiance fiancee girlfriend boyfriend friend friends "
    "buddy buddies pal pals family mentor mentors teacher teachers coach coaches teammate teammates colleague "
    "colleagues coworker coworkers boss neighbor neighbors neighbour neighbours classmate classmates roommate "
    "roommates therapist counselor doctor organization organisation group charity team club community "
    "church volunteers volunteer fans followers").split())
_NAMED_PLACES = frozenset({"GPE", "LOC", "FAC"})
_BARE = frozenset({"in", "at", "on", "to", "from", "into"})  # prepositions an answer leaves out ("in the mountains")
_PLACE_PREPS = _BARE | frozenset({"near", "around", "outside", "inside", "behind", "by", "across", "through",
                                  "under", "beside", "within", "onto", "over", "along"})
_CLAUSES = frozenset({"advcl", "ccomp", "conj", "relcl", "parataxis", "punct", "cc", "mark", "xcomp"})
_UNITS = frozenset({"second", "minute", "hour", "day", "week", "weekend", "month", "year"})
_MODIFIERS = frozenset({"amod", "compound", "nmod", "nummod"})
_NUMBER_WORDS = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
                 "sixteen seventeen eighteen nineteen twenty").split()
_ORDINALS = {w: n for n, w in enumerate(("zeroth first second third fourth fifth sixth seventh eighth ninth tenth "
                                         "eleventh twelfth").split())}
_UNIT = r"(?:day|night|morning|evening|week|weekend|month|year|season|summer|winter)"
_FREQUENCY = re.compile(
    r"\b(?:(?:at least|at most|about|around|roughly|nearly|almost)\s+)?"
    r"(?:(?:once|twice|thrice|(?:a few|a couple(?: of)?|several|many|one|two|three|four|five|six|seven|\d+)\s+times)"
    r"(?:\s+or\s+(?:once|twice|thrice|\w+\s+times))?\s+(?:a|an|per|every|each)\s+" + _UNIT
    + r"|(?:every|each)\s+(?:other\s+|single\s+)?" + _UNIT + r"|(?:daily|weekly|monthly|yearly|annually|nightly))\b",
    re.I)
_GREETING = frozenset({"hey", "hi", "hello", "thanks", "thank", "congrats", "wow", "oh", "yeah", "yes", "dear",
                       "sorry", "yo", "aw", "awesome", "great", "cool"})
_IMAGE = re.compile(r"\[image:[^\]]*\]?")
_LIGHT = frozenset(stem(w) for w in ("have", "be", "do", "get", "go", "make", "take", "come", "say", "tell"))
_TIMES = stem("times")
_GUESS, _COUNTED = 0.3, 0.25  # the confidence of a number or frequency read off the person's turns; of a count
_SOME = 0.3  # the share of the question's terms a turn of the person must hold for its number or frequency
_MANY = 2  # distinct days below which no count of occasions is said


def value_in(reading: Reading, sent: Span, replied: str = "") -> str | None:
    """The value of the question's kind that a sentence says without naming an entity: a place phrase, a
    relation or group, a number of the counted thing, a frequency; None when it says none. `replied`: the
    question the turn answers, whose words count as said ("How often do you take them to the park?")."""
    if reading.expects == "place":
        return place_in(reading, sent)
    if reading.expects == "person":  # a relation names no one: the turn must say all the question is about
        return relation_in(reading, sent) if _all_things(reading, f"{sent.doc.text} {replied}") else None
    if reading.measure == "often":
        return frequency_in(sent) if _all_things(reading, f"{sent.doc.text} {replied}") else None
    if reading.expects == "number":
        return number_in(reading, sent)
    if reading.measure == "long":
        return length_in(reading, sent)
    return None


def place_in(reading: Reading, sent: Span) -> str | None:
    """A place the sentence puts something at or in, nearest the question's words: the object of a preposition
    of place or of the question's own verb ("explore a new city") that is a place noun or a named place the
    question does not say; with its modifiers and conjuncts ("the beach, the mountains and the forest")."""
    said = reading.terms | reading.names
    found = []
    for token in sent:
        if token.pos_ not in ("NOUN", "PROPN") or _says(token, said) or token.dep_ == "conj":
            continue
        if not (token.lemma_.lower() in PLACE_NOUNS or token.lower_ in PLACE_NOUNS or token.ent_type_ in _NAMED_PLACES):
            continue
        head = token.head
        if token.dep_ == "pobj" and head.lower_ in _PLACE_PREPS:
            found.append((token, None if head.lower_ in _BARE else head))
        elif token.dep_ == "dobj" and _says(head, reading.verbs | reading.terms):
            found.append((token, None))
    if not found:
        return None
    token, prep = min(found, key=lambda f: _distance(reading, sent, f[0]))
    phrase = ", ".join(_words(t) for t in [token, *token.conjuncts])
    return f"{prep.lower_} {phrase}" if prep is not None else phrase


def relation_in(reading: Reading, sent: Span) -> str | None:
    """A person named by their relation or a group ("my aunt", "a local organization"), nearest the question's
    words, with its conjuncts ("my friends, family and mentors"); not one the question says."""
    said = reading.terms | reading.names
    found = [t for t in sent if t.pos_ == "NOUN" and t.dep_ != "conj" and t.lemma_.lower() in PEOPLE_NOUNS
             and not _says(t, said) and t.dep_ not in ("compound", "npadvmod") and _tied(reading, t)]
    if not found:
        return None
    token = min(found, key=lambda t: _distance(reading, sent, t))
    return ", ".join(_words(t) for t in [token, *token.conjuncts] if t.pos_ in ("NOUN", "PROPN"))


def frequency_in(sent: Span) -> str | None:
    """How often the sentence says something happens: "a few times a week", "once or twice a year"."""
    match = _FREQUENCY.search(sent.text)
    return match.group(0) if match else None


def number_in(reading: Reading, sent: Span) -> str | None:
    """A number the sentence says of the thing a "how many" question counts ("7 people", "two dogs")."""
    if not reading.counted or _TIMES in reading.counted:
        return None
    for token in sent:
        if token.dep_ == "nummod" and token.like_num and _says(token.head, reading.counted):
            # "How many weeks passed": "two weeks", as a length is said; "How many people": "7"
            return f"{token.text} {token.head.text}" if token.head.lemma_.lower() in _UNITS else token.text
    return None


def length_in(reading: Reading, sent: Span) -> str | None:
    """How long the sentence says one of the question's verbs lasted: a number of units it is done for ("I hold
    it for 30-60 seconds") or a time since ("since 2016")."""
    verbs = reading.verbs - _LIGHT
    for token in sent:
        prep = token.head
        if token.dep_ != "pobj" or prep.lower_ not in ("for", "since") or not _says(prep.head, verbs):
            continue
        if prep.lower_ == "since" and token.ent_type_ == "DATE":
            return f"since {token.text}"
        numbers = [c for c in token.children if c.dep_ in ("nummod", "amod", "quantmod") and (
            c.like_num or c.lower_ in ("few", "several", "couple"))]
        if token.lemma_.lower() in _UNITS and numbers:
            start = min(t.i for n in numbers for t in n.subtree)
            return sent.doc[start:token.i + 1].text
    return None


def addressed(name: Span) -> bool:
    """Whether a name is said to the listener ("Hey Maria, I started a class with a colleague", "Thanks, Jon!"):
    whom a turn speaks to, not whom it tells of."""
    doc = name.doc
    before = doc[name.start - 1] if name.start > 0 else None
    after = doc[name.end].text if name.end < len(doc) else "."
    return after in (",", "!", ".", "?") and before is not None and (before.text == "," or before.lower_ in _GREETING)


def counts_other(reading: Reading, number: Span) -> bool:
    """Whether a number counts something else than what a "how many" question counts ("two turtles" asked how
    many times)."""
    root = number.root
    return bool(reading.counted) and root.dep_ == "nummod" and not _says(root.head, reading.counted)


def tally(reading: Reading, items: Sequence[ContextItem]) -> Found | None:
    """A "how many", "how often" or "how long" answered from the asked person's own turns when no turn covering
    the question says it: their stated number, frequency or length on fewer of the question's words; for a count,
    the highest ordinal of the counted thing, else the distinct days they told of doing it (two and more); None
    otherwise."""
    from engram.adapters.spacy_engine import shared_engine

    if reading.measure not in ("many", "often", "long") or not reading.names:
        return None
    names = known_as(reading.names, items)
    own = [i for i in items if i.kind == "event" and said_by(i.text, names)]
    # what a shared photo shows ("a man and two children") is not what the person says they have or did
    docs = [(i, shared_engine().doc(_IMAGE.sub("", statements(SPEAKER.sub("", i.text))))) for i in own]
    stated = sorted(((reading.covered(d.text), i, v) for i, d in docs for s in d.sents if (v := value_in(reading, s))),
                    key=lambda r: -r[0])
    if stated and stated[0][0] >= _SOME:
        return Found(stated[0][2], (stated[0][1],), _GUESS)
    if reading.measure != "many" or not reading.counted:
        return None
    ordinals = [(n, i) for i, d in docs for t in d if (n := _ordinal(reading, t))]
    if ordinals:
        most, item = max(ordinals, key=lambda o: o[0])
        return Found(_number_word(most), (item,), _COUNTED)
    told: dict[date, ContextItem] = {}
    for item, doc in docs:
        if item.occurred_at is not None and _tells(reading, doc):
            told.setdefault(item.occurred_at.date(), item)
    if len(told) < _MANY:
        return None
    count = _number_word(len(told))
    return Found(("twice" if len(told) == 2 else f"{count} times") if _TIMES in reading.counted else count,
                 tuple(told.values()), _COUNTED)


def _ordinal(reading: Reading, token: Token) -> int | None:
    """The rank an ordinal gives the counted thing ("my fourth video game tournament" -> 4), said with one of
    the question's verbs ("won"); None for any other word."""
    number = _ORDINALS.get(token.lower_)
    if number is None or token.dep_ != "amod" or not _says(token.head, reading.counted):
        return None
    verb = token.head.head
    return number if _says(verb, reading.verbs - _LIGHT) else None


def _tells(reading: Reading, doc: Doc) -> bool:
    """Whether a turn tells of doing what the question counts: its verb (by lemma, not a light one) with the
    counted thing, or with most of the question's other words ("taken his turtles on a walk": turtles and walk)."""
    verbs = reading.verbs - _LIGHT
    if verbs and not any(_says(t, verbs) for t in doc):
        return False
    if counted := reading.counted - {_TIMES}:
        return any(_says(t, counted) for t in doc)
    things = reading.terms - verbs - reading.relation - {_TIMES}
    held = {w for t in doc for w in (stem(t.lower_), stem(t.lemma_.lower())) if w in things}
    return len(held) * 2 > len(things)


def _tied(reading: Reading, token: Token) -> bool:
    """Whether a relation noun is an argument of what the question asks: what it belongs to or the verb it
    hangs on (through a preposition) is one of the question's words, or that verb's own phrases hold one ("My
    aunt believed in volunteering" asked who inspired her volunteering)."""
    head = token.head.head if token.head.dep_ in ("prep", "agent") else token.head
    if _says(head, reading.terms | (reading.verbs - _LIGHT)):
        return True
    if head.pos_ not in ("VERB", "AUX"):
        return False
    return any(_says(t, reading.terms) for c in head.children if c.dep_ not in _CLAUSES and c is not token
               and not (c.dep_ in ("prep", "agent") and token in c.children) for t in c.subtree)


def _all_things(reading: Reading, text: str) -> bool:
    """Whether a turn says every word of the question that is not one of its verbs ("the library" is not "the
    park" a frequency was said of)."""
    return reading.terms - reading.relation - reading.verbs <= content_terms(text)


def _says(token: Token, terms: frozenset[str]) -> bool:
    """Whether a word is one of the question's terms, by its form or its lemma ("won" says "win")."""
    return stem(token.lower_) in terms or stem(token.lemma_.lower()) in terms


def _distance(reading: Reading, sent: Span, token: Token) -> int:
    """Words between a token and the nearest of the sentence's words the question says."""
    anchors = [t.i for t in sent if _says(t, reading.terms)] or [sent.start]
    return min(abs(token.i - a) for a in anchors)


def _words(token: Token) -> str:
    """A noun with the modifiers right before it ("gorgeous forest", "local organization"), without
    determiners or possessives."""
    lefts = {t.i for t in token.lefts if t.dep_ in _MODIFIERS}
    start = token.i
    while start - 1 in lefts:
        start -= 1
    return token.doc[start:token.i + 1].text


def _number_word(count: int) -> str:
    return _NUMBER_WORDS[count] if count < len(_NUMBER_WORDS) else str(count)
