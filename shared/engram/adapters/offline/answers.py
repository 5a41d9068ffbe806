"""The offline model's answers: the value a question asks for, not the sentences around it.

A question is read for what it wants (who: a person, where: a place, when: a date, how many: a number, what:
the thing) by the language engine. A stored fact about what it asks answers first: its current value, then
the values it replaced, oldest last. Lacking one, the retrieved turns that cover the question best are read
for a span of the wanted type (a date grounded against when it was said). Lacking that: "I don't know".
The confidence comes from what the answer rests on (engram.rules.confidence)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from engram.adapters.offline.asked import Expect, Found, Reading
from engram.adapters.offline.choosing import from_text
from engram.adapters.offline.kinds import addressed, counts_other, tally, value_in
from engram.adapters.offline.leaning import leaning, lists
from engram.adapters.offline.lexicon import CANONICAL_NAMES, OWN_NOUNS, STANCES
from engram.adapters.offline.spans import (
    explains,
    own_story,
    ranked_sentences,
    refers_back,
)
from engram.adapters.offline.verdicts import asks_yes_no, verdict
from engram.adapters.offline.wording import explanation, kind_asked, thing_in
from engram.model.context import QueryContext
from engram.model.queries import Answer, ContextItem, Source, SourceKind
from engram.rules.confidence import answer_confidence
from engram.rules.grounding import date_mentions
from engram.rules.text import STOPWORDS, content_terms, stem

if TYPE_CHECKING:
    from spacy.tokens import Doc, Span

UNKNOWN = "I don't know: that is not mentioned in memory."
UNKNOWN_CONFIDENCE = 0.05
_LABELS: dict[Expect, frozenset[str]] = {
    "person": frozenset({"PERSON"}), "place": frozenset({"GPE", "LOC", "FAC", "ORG"}),
    "date": frozenset({"DATE", "TIME"}), "number": frozenset({"CARDINAL", "QUANTITY", "MONEY", "PERCENT"}),
    "duration": frozenset({"DATE", "TIME"}), "thing": frozenset()}
_PLACE_NOUNS = frozenset({"city", "country", "place", "town", "state", "company", "school", "university",
                          "office", "employer", "restaurant", "shop", "store", "venue", "location"})
_WHERE_PREDICATES = frozenset({"lives_in", "works_at", "comes_from", "born_in"})  # objects that answer "where"
# Relations read by a known pattern: only their facts may answer "high"; a fact named after any other verb ("get
# promoted", "paint") is a free reading of one sentence, a stance ("likes turtles") holds many values and says no
# reason, and a date is a valid time resolved from words.
_TYPED_PREDICATES = (CANONICAL_NAMES - STANCES) | frozenset(OWN_NOUNS.values()) | {"name", "spouse", "is_married_to"}
_DATE_NOUNS = frozenset({"year", "date", "day", "month", "time", "week"})
_ASKING = frozenset({"what", "which", "who", "whom", "whose", "where", "when", "how", "why"})
# Words that shape a question rather than say what it is about, light verbs among them ("did she go to...").
_NOT_TOPICAL = frozenset(content_terms(
    "likely kind type name long often old many much recently usually favorite favourite sort whose go goes went get "
    "gets got give gave make made take took come came happen happened"))
_NOW = frozenset({"now", "currently", "current", "today", "still", "presently"})
_DAY_WORDS = re.compile(r"\b(?:today|tonight|yesterday|tomorrow|this (?:morning|afternoon|evening)|monday|tuesday|"
                        r"wednesday|thursday|friday|saturday|sunday|days?)\b", re.I)
_WEEKDAY = re.compile(r"\b(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b", re.I)
_WEEK_WORDS = re.compile(r"\b(?P<unit>week|weekend)s?\b", re.I)
_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)"
_MONTH_DAY = re.compile(rf"\b{_MONTH}[a-z]*\.? \d\d?\b|\b\d\d?(?:st|nd|rd|th)? (?:of )?{_MONTH}", re.I)
_SEASON_WORDS = re.compile(r"\b(spring|summer|autumn|fall|winter)\b", re.I)
_MONTH_WORDS = re.compile(r"\b(?:months?|january|february|march|april|may|june|july|august|september|october|"
                          r"november|december)\b", re.I)


def read_question(question: str, doc: Doc) -> Reading:
    """The question's wanted value from its wh-word and the noun after it; its names from the entities the
    engine reads (PERSON, ORG, GPE...) and capitalised words past the first."""
    words = [t.lower_ for t in doc]
    lemmas = {t.lemma_.lower() for t in doc}
    first = next((i for i, w in enumerate(words) if w in _ASKING), None)
    wh = words[first] if first is not None else ""
    after = words[first + 1] if first is not None and first + 1 < len(words) else ""
    expects: Expect = "thing"
    if wh in ("who", "whom", "whose"):
        expects = "person"
    elif wh == "where" or (wh in ("what", "which") and after in _PLACE_NOUNS):
        expects = "place"
    elif wh == "when" or (wh in ("what", "which") and after in _DATE_NOUNS):
        expects = "date"
    elif wh == "how" and after in ("many", "much", "old"):
        expects = "number"
    elif wh == "how" and after in ("long", "often"):
        expects = "duration"
    names = {t for e in doc.ents if e.label_ not in _LABELS["date"] | _LABELS["number"] for t in content_terms(e.text)}
    names |= {stem(t.lower_) for t in doc[1:] if t.text[:1].isupper() and t.is_alpha and t.lower_ not in STOPWORDS
              and t.ent_type_ not in _LABELS["date"] | _LABELS["number"]}  # "in June 2022" names no one
    # A date the question gives ("in June 2022") is when the turn was said, rarely a word of it.
    dates = {t for e in doc.ents if e.label_ in _LABELS["date"] for t in content_terms(e.text)}
    terms = content_terms(question) - names - _NOT_TOPICAL - dates
    several = any(t.tag_ in ("NNS", "NNPS") and stem(t.lower_) not in names for t in doc)
    if expects == "date":  # "When did X meet her friends?" asks one time; "In which years ..." asks several
        several = any(t.tag_ == "NNS" and t.lemma_.lower() in _DATE_NOUNS | {"weekend", "time"} for t in doc)
    relation = {stem(t.lower_) for t in doc if t.pos_ == "VERB"} & terms
    return Reading(expects, frozenset(terms), frozenset(names), several, bool(lemmas & _NOW), frozenset(relation),
                   expects == "thing" and explains(question), wh,
                   frozenset(stem(t.lemma_.lower()) for t in doc if t.pos_ == "VERB"), kind_asked(doc) - names,
                   expects in ("thing", "place", "person") and lists(doc), after if wh == "how" else "",
                   _counted(doc, first) if wh == "how" and after in ("many", "much") else frozenset())


def _counted(doc: Doc, first: int | None) -> frozenset[str]:
    """What a "how many" question counts: the head noun after it ("How many video game tournaments" ->
    tournament), stemmed by its form and its lemma."""
    for token in doc[(first or 0) + 2:]:
        if token.pos_ in ("NOUN", "PROPN") and token.dep_ != "compound":
            return frozenset({stem(token.lower_), stem(token.lemma_.lower())})
        if token.pos_ not in ("NOUN", "PROPN", "ADJ"):
            break
    return frozenset()


def compose(context: QueryContext, question: str | None = None) -> Found | None:
    """The answer the context holds to its question (or to `question`): from a fact, else from a turn; None
    when no memory answers."""
    from engram.adapters.spacy_engine import shared_engine

    text = question or context.question
    doc = shared_engine().doc(text)
    reading = read_question(text, doc)
    if asks_yes_no(doc):
        return verdict(reading, doc, context.items)
    parts = [_value_for(r, context.items) for r in _each_verb(reading, doc)]
    found = [f for f in parts if f is not None]
    if len(parts) == 1 or not found:
        return found[0] if found else None
    # "Where does Nadia live and work?": each verb answered in turn, the least sure part (and any gap) the measure.
    items = {i.id: i for f in found for i in f.items}
    return Found("; ".join(f.content for f in found), tuple(items.values()),
                 round(min(f.confidence for f in found) * len(found) / len(parts), 2))


def _value_for(reading: Reading, items: Sequence[ContextItem]) -> Found | None:
    """A fact of a relation read by a known pattern answers first (it knows what changed and when); a fact that
    is a free reading of one sentence yields to the turns themselves, read with the question in view, and answers
    only when they do not (LoCoMo: F1 0.245 -> 0.260, the same abstentions)."""
    fact = from_facts(reading, items)
    if fact is not None and _typed(reading, fact.items[0]):
        return fact
    return from_text(reading, items, read_span) or fact or leaning(reading, items, read_span) or tally(reading, items)


def _each_verb(reading: Reading, doc: Doc) -> list[Reading]:
    """One reading per coordinated verb of the question ("live and work"), else the reading itself."""
    verbs = [t for t in doc if t.pos_ == "VERB" and stem(t.lower_) in reading.terms]
    joined = [v for v in verbs if v.dep_ == "conj" and v.head in verbs]
    if not joined:
        return [reading]
    group = {stem(v.lower_) for v in [*joined, *(v.head for v in joined)]}
    return [replace(reading, terms=reading.terms - (group - {verb}), relation=frozenset({verb}))
            for verb in sorted(group, key=lambda v: next(t.i for t in verbs if stem(t.lower_) == v))]


def answer(context: QueryContext, question: str | None = None) -> Answer:
    """The answer to the context's question, or "I don't know" with low confidence."""
    found = compose(context, question)
    if found is None:
        return unknown()
    share = round(1.0 / len(found.items), 3)
    return Answer(content=found.content, confidence=found.confidence, sources=[
        Source(kind=source_kind(i), id=i.id, excerpt=i.text[:200], score=round(i.score, 3), contribution=share)
        for i in found.items])


def unknown() -> Answer:
    return Answer(content=UNKNOWN, confidence=UNKNOWN_CONFIDENCE, sources=[])


# ---------------------------------------------------------------- from facts
def from_facts(reading: Reading, items: Sequence[ContextItem]) -> Found | None:
    """The fact group (whom it is about, one predicate) that best matches the question, as its current value
    first and the values it replaced after it; None when no fact's predicate meets the question's words. A
    "..._of" fact ("Sarah boss_of Dana") is about its object and answers with its subject."""
    groups: dict[tuple[str, str], list[ContextItem]] = {}
    for item in items:
        if item.kind == "semantic" and item.predicate and item.object:
            groups.setdefault((_holder(item).lower(), item.predicate), []).append(item)
    best: tuple[float, list[ContextItem]] | None = None
    for (holder, predicate), facts in groups.items():
        if reading.names and not content_terms(holder) & reading.names:
            continue  # the question names someone else
        said = content_terms(predicate.replace("_", " "))
        matched = reading.terms & said
        if not matched or not _fits(reading, _value(facts[0]), predicate):
            continue
        if reading.expects != "date" and all(content_terms(_value(f)) <= reading.terms | reading.names
                                             for f in facts):
            continue  # the question already says the value: it asks something else about it
        cover = len(reading.terms & (said | {t for f in facts for t in content_terms(_value(f))}))
        score = cover / max(1, len(reading.terms))
        if best is None or score > best[0]:
            best = (score, facts)
    if best is None:
        return None
    coverage, facts = best
    current = sorted([f for f in facts if _current(f)], key=_since, reverse=True)
    history = sorted([f for f in facts if not _current(f)], key=_since, reverse=True)
    ended = not current
    if ended:  # only closed values: the latest of them is the latest known
        current, history = history[:1], history[1:]
    head = current[0]
    values = list(dict.fromkeys(_value(f) for f in current))
    if reading.expects == "date":
        content = _day(head.valid_from) if head.valid_from else ", ".join(values)
    elif history:
        since = f"since {_day(head.valid_from)}; " if head.valid_from else ""
        content = f"{values[0]} ({since}before: {', '.join(dict.fromkeys(_value(f) for f in history))})"
    else:
        content = ", ".join(values) if reading.several else values[0]
    # The turns that state the current value too: they agree, and are cited after the facts.
    agreeing = [i for i in items if i.kind in ("event", "episodic") and content_terms(values[0])
                and content_terms(values[0]) <= content_terms(i.text)][:2]
    confidence = answer_confidence(from_fact=True, coverage=coverage, agreeing=len(agreeing),
                                   disagreeing=len(values) - 1 if not reading.several else 0,
                                   open_conflict=len(values) > 1 and not reading.several,
                                   stale=ended and reading.now,
                                   typed=_typed(reading, head))
    return Found(content, tuple(current + history + agreeing), confidence)


def _typed(reading: Reading, fact: ContextItem) -> bool:
    """The fact answers as a relation read by a known pattern, not as a free reading of a sentence."""
    return fact.predicate in _TYPED_PREDICATES and reading.expects != "date" and not reading.explains


def _inverse(fact: ContextItem) -> bool:
    return (fact.predicate or "").endswith("_of")


def _holder(fact: ContextItem) -> str:
    """Whom the fact is about."""
    return (fact.object if _inverse(fact) else fact.subject) or ""


def _value(fact: ContextItem) -> str:
    """What the fact says of whom it is about."""
    return (fact.subject if _inverse(fact) else fact.object) or ""


def _fits(reading: Reading, value: str, predicate: str | None = None) -> bool:
    """Whether a fact's value can be what the question wants: a date comes from its valid time; a place the
    predicate says (lives_in, works_at: "Valencia" alone reads as a person to the small model); else a person,
    place or number must read as one to the language engine (an object the engine cannot type passes for a thing)."""
    if reading.expects in ("date", "thing") or (reading.expects == "place" and predicate in _WHERE_PREDICATES):
        return True
    from engram.adapters.spacy_engine import shared_engine

    labels = {e.label_ for e in shared_engine().doc(value).ents}
    return bool(labels & _LABELS[reading.expects]) or (reading.expects == "place" and not labels
                                                         and value[:1].isupper())


def _current(fact: ContextItem) -> bool:
    return fact.status in (None, "active") and fact.valid_to is None


def _since(fact: ContextItem) -> datetime:
    return fact.valid_from or fact.occurred_at or datetime.min.replace(tzinfo=UTC)


# ---------------------------------------------------------------- from retrieved text
def read_span(reading: Reading, doc: Doc, said_at: datetime | None, own: bool = True,
              replied: str = "") -> str | None:
    """The value a turn gives: in its statement covering the question best (not a question, not about the
    listener or someone else), an entity of the wanted type the question does not say (a date grounded against
    `said_at`), or for a "what" question the phrase the question's words lead to. `own`: the turn's speaker may
    be whom the question names (else only its sentences naming them, or a pronoun for them, speak of them).
    `replied`: the question the turn answers, whose words count for its first sentences."""
    said = [s for s in ranked_sentences(reading, list(doc.sents), replied)
            if not _to_listener(s) and _about(s, reading.names, own)]
    if not said:
        return None
    if reading.expects == "date":
        return next((d for s in said if (d := _date_in(s, said_at))), None) or (
            _day(said_at) if said_at else None)
    if reading.expects == "thing":
        read = explanation if reading.explains else thing_in
        return next((t for s in said if (t := read(reading, s))), None)
    if reading.measure == "often":  # a frequency, not a date or length
        return next((v for sent in said if (v := value_in(reading, sent, replied))), None)
    for sent in said:
        for ent in _closest(reading, sent, [e for e in sent.ents if e.label_ in _LABELS[reading.expects]]):
            if reading.expects == "duration" and not re.search(r"\d|\b(?:one|two|three|four|five|six|seven|eight|"
                                                               r"nine|ten|a few|several|years?|months?)\b", ent.text):
                continue
            if (reading.expects == "number" and counts_other(reading, ent)) or (
                    reading.expects == "person" and addressed(ent)):
                continue
            if not content_terms(ent.text) <= reading.terms | reading.names or not content_terms(ent.text):
                return ent.text
    # No entity of the kind: a common-noun place, a relation or group, a number of the counted thing, a frequency
    return next((v for sent in said if (v := value_in(reading, sent, replied))), None)


def _about(sent: Span, names: frozenset[str], own: bool = True) -> bool:
    """Whether a sentence can speak for the people the question names: it names them or refers back to them,
    or its speaker (when `own`: one of them) speaks of themself, or at least no one else is its subject."""
    if not names or any(stem(t.lower_) in names for t in sent) or refers_back(sent, names):
        return True
    if not own:
        return False  # someone else's "I" or story: "I got my first dog in 2013" is no one else's birthday
    return own_story(sent, names)


def _to_listener(sent: Span) -> bool:
    """Whether a sentence is about the one spoken to ("you are...", "your necklace is..."): it says nothing of
    the speaker."""
    return any(t.dep_ in ("nsubj", "nsubjpass") and (t.lower_ == "you" or any(
        c.dep_ == "poss" and c.lower_ == "your" for c in t.children)) for t in sent)


def _closest(reading: Reading, sent: Span, spans: list[Span]) -> list[Span]:
    """Spans nearest first to the words of the sentence that the question says."""
    anchors = [t.i for t in sent if stem(t.lower_) in reading.terms] or [sent.start]
    return sorted(spans, key=lambda s: min(abs(s.start - a) for a in anchors))


def _date_in(sent: Span, said_at: datetime | None) -> str | None:
    """The first date the sentence says, grounded against when it was said and read as a date; else one with a
    year or a day of a month ("March 3": a yearly date, not the day it was said)."""
    if said_at is not None:
        for mention in date_mentions(sent.text, said_at):
            return say_when(mention.text, mention.when, said_at)
    for ent in sent.ents:
        if ent.label_ == "DATE" and (re.search(r"\d{4}", ent.text) or _MONTH_DAY.search(ent.text)):
            return ent.text
    return None


def say_when(expression: str, when: datetime, said_at: datetime) -> str:
    """A grounded date expression as a date: a day as "7 May 2023" ("Friday 5 May 2023" when said by its
    weekday), a week as "the week before 9 June 2023",
    a month as "May 2023", a season as "summer 2022", a year as "2022"."""
    weekday = _WEEKDAY.search(expression)
    if weekday and when.date() != said_at.date():  # the day said with its date: "last Friday" -> "Friday 2 ..."
        return f"{weekday.group(0).capitalize()} {_day(when)}"
    if _DAY_WORDS.search(expression):
        return _day(when)
    week = _WEEK_WORDS.search(expression)
    if week:
        side = "after" if when > said_at else "before"
        return f"the {week.group('unit').lower()} {side} {_day(said_at)}"
    season = _SEASON_WORDS.search(expression)
    if season:
        return f"{season.group(1).lower()} {when.year}"
    if _MONTH_WORDS.search(expression):
        return f"{when:%B} {when.year}"
    return str(when.year)


# ---------------------------------------------------------------- shared
def _day(when: datetime) -> str:
    return f"{when.day} {when:%B} {when.year}"


def source_kind(item: ContextItem) -> SourceKind:
    return "semantic" if item.kind == "relationship" else item.kind  # type: ignore[return-value]
