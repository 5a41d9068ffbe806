"""Which retrieved turns the offline answerer reads, in which order, for a question answered from text.

A turn is read when it holds enough of the question's topical terms (its statements, not its questions); the
turns are read best first, by that cover plus half the retrieval's own score (which reads meaning, not only
words: the turn the retrieval ranks first often says the answer in other words than the question's). The first span of the wanted type
the reader finds answers (several spans from several turns when several values are asked for; a list asked by a
plural kind, "what activities", also from the retrieval's best turns its person said on fewer of its words)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

from engram.adapters.offline.asked import Found
from engram.adapters.offline.spans import known_as, speaks_for
from engram.model.queries import ContextItem
from engram.rules.confidence import answer_confidence
from engram.rules.text import content_terms
from engram.rules.utterance import SENTENCE_END, SPEAKER

if TYPE_CHECKING:
    from spacy.tokens import Doc

    from engram.adapters.offline.asked import Reading


class SpanReader(Protocol):
    """Reads a turn for the value asked (engram.adapters.offline.answers.read_span): `replied` is the question
    of the turn it replies to, whose words count for its first sentences."""

    def __call__(self, reading: Reading, doc: Doc, said_at: datetime | None, own: bool = True,
                 replied: str = "") -> str | None: ...


MIN_COVERAGE = 0.45  # share of the question's topical terms a turn must hold to be read for an answer
_READ = 6  # turns read at most
_CLOSE = 0.75  # a further turn is read for a value while it covers this share of the best turn's cover
_MORE_READ, _MORE_COVER = 10, 0.2  # the retrieval's best turns read for more values, and the cover they need
_MOST = 3  # values read at most for a question that asks for several
_REPLIED_WEIGHT = 0.75  # the question a turn replies to says what it is about, less surely than its own words
_SCORE_WEIGHT = 0.5  # the retrieval's score (0-1: its meaning, not only its words) next to the words' cover
# A "when" question is answered by when its turn was said: the person's own turn the retrieval ranks high answers
# it on fewer of the question's words ("When did Dana go?" and "Dana: Just back from Lisbon!").
_DATE_COVERAGE, _STRONG = 0.2, 0.5


def ranked_turns(reading: Reading, items: Sequence[ContextItem], replies: bool = True
                 ) -> list[tuple[float, ContextItem]]:
    """The items that can answer from their text, with their cover of the question, best first (cover and
    retrieval score): turns, facts without a predicate, and episodes or summaries that report the people asked
    about by name. `replies`: a turn's cover counts the question it replies to (`pair_cover`)."""
    ranked = []
    for n, item in enumerate(items):
        if item.kind == "event" or (item.kind == "semantic" and not item.predicate) or (
                item.kind in ("episodic", "summary") and attributed(item.text, reading.names)):
            cover = pair_cover(reading, item) if replies else reading.covered(statements(item.text))
            if cover >= MIN_COVERAGE or (reading.expects == "date" and cover >= _DATE_COVERAGE
                                         and item.score >= _STRONG and speaks_for(item.text, reading.names)):
                ranked.append((cover + _SCORE_WEIGHT * item.score, -n, cover, item))
    ranked.sort(key=lambda r: r[:2], reverse=True)
    return [(cover, item) for _, _, cover, item in ranked]


def from_text(reading: Reading, items: Sequence[ContextItem], read_span: SpanReader) -> Found | None:
    """A span of the wanted type from the turns covering the question best (several turns' spans when several
    values are asked for); None when no turn covers enough or holds one. Only statements count; an episode or
    summary (mixing speakers) answers for someone named only where it reports them by name, and a turn only
    where it is about them: said by them (an alias the entity items carry counts), or naming them."""
    from engram.adapters.spacy_engine import shared_engine

    if not reading.terms:
        return None
    ranked = ranked_turns(reading, items)[:_READ]
    spans: list[tuple[str, float, ContextItem]] = []
    known = replace(reading, names=known_as(reading.names, items))
    for cover, item in ranked:
        if spans and cover < spans[0][1] * _CLOSE:
            break
        span = read_span(known, shared_engine().doc(SPEAKER.sub("", item.text)), item.occurred_at,
                         speaks_for(item.text, known.names), replied_question(item))
        if span and all(span.lower() != s.lower() for s, _, _ in spans):
            spans.append((span, cover, item))
            if not reading.several or len(spans) == _MOST:
                break
    if not spans:
        return None
    if reading.listing:
        spans += more_values(known, items, spans, read_span)
    values = [s for s, _, _ in spans]
    agreeing = sum(1 for _, i in ranked if i is not spans[0][2] and values[0].lower() in i.text.lower())
    confidence = answer_confidence(from_fact=False, coverage=spans[0][1], agreeing=agreeing)
    return Found(", ".join(values), tuple(i for _, _, i in spans), confidence)


def more_values(reading: Reading, items: Sequence[ContextItem], spans: list[tuple[str, float, ContextItem]],
                read_span: SpanReader) -> list[tuple[str, float, ContextItem]]:
    """Further values of a question that asks for several ("What activities does Dana do?"), from the turns the
    retrieval ranks first that the person asked about said and that hold some of the question's words: a list is
    told over many turns, most of them in other words than the question's."""
    from engram.adapters.spacy_engine import shared_engine

    read = {i.id for _, _, i in spans}
    more: list[tuple[str, float, ContextItem]] = []
    for item in sorted((i for i in items if i.kind == "event"), key=lambda i: -i.score)[:_MORE_READ]:
        cover = pair_cover(reading, item)
        if item.id in read or cover < _MORE_COVER or not said_by(item.text, reading.names):
            continue
        span = read_span(reading, shared_engine().doc(SPEAKER.sub("", item.text)), item.occurred_at, True,
                         replied_question(item))
        if span and all(span.lower() != s.lower() for s, _, _ in [*spans, *more]):
            more.append((span, cover, item))
    return more


def said_by(text: str, names: frozenset[str]) -> bool:
    """Whether a turn names its speaker ("Dana: ...") and that speaker is one the question names (or the start
    of one: "Mel" for Melanie)."""
    said = SPEAKER.match(text)
    if said is None:
        return False
    return any((w.startswith(n) and len(n) >= 3) or (n.startswith(w) and len(w) >= 3)
               for w in content_terms(said.group(0).rstrip(": ")) for n in names)


def attributed(text: str, names: frozenset[str]) -> bool:
    """Whether a text that mixes speakers (an episode, a summary) can answer for the people the question names:
    it must report them by name in the third person ("Vera said ..."), not only address them."""
    if not names:
        return True
    return bool(re.search(r"\b(?:" + "|".join(map(re.escape, names)) + r")\w*\s+(?:said|says|told|mentioned|"
                          r"is|was|has|had|lives|works)\b", text, re.I))


def pair_cover(reading: Reading, item: ContextItem) -> float:
    """A turn's cover of the question, its statements' own and, at a discount, that of the question it replies
    to ("How long have you been married?" covers "How long has Mel been married?" for "5 years already!")."""
    own = reading.covered(statements(item.text))
    replied = replied_question(item)
    if not replied:
        return own
    return own + _REPLIED_WEIGHT * max(0.0, reading.covered(f"{statements(item.text)} {replied}") - own)


def replied_question(item: ContextItem) -> str:
    """The question a turn answers: the end of the turn it replies to when that asks one ("Melanie: How long have
    you been married?" before "5 years already!"), without its speaker; else nothing. A reply to news (no
    question) comments on the other's story: its words are not the reply's."""
    replied = SPEAKER.sub("", item.replying_to or "")
    return " ".join(p for p in SENTENCE_END.split(replied) if p.rstrip().endswith("?"))


def statements(text: str) -> str:
    """The text without its questions."""
    return " ".join(p for p in SENTENCE_END.split(text) if not p.rstrip().endswith("?"))
