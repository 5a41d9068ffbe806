"""Which sentence of a retrieved turn answers a question, and which of its words are the answer.

People answer in the sentence next to the one that repeats the question's words as often as in that sentence
itself ("I joined a church. I wanted to feel closer to my faith."): a sentence is scored by the question's
terms it holds, or, at a discount, those a neighbouring sentence holds, plus a little for what it says that the
question does not (a sentence only restating the question answers nothing). A "why" or "how" question is
answered by the sentence's own words less the question's and the function words (pronouns, auxiliaries,
determiners, interjections) and its dates: its reason or manner, short."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from engram.rules.text import content_terms, stem

if TYPE_CHECKING:
    from spacy.tokens import Span

_FOLLOW = 0.5  # weight of a neighbour's cover: an answer often comes next to the sentence naming its topic
_NEW = 0.2  # weight of what a sentence says beyond the question
_NEW_TERMS = 4  # new terms past which a sentence is not more of an answer
_FUNCTION = frozenset({"PRON", "INTJ", "AUX", "CCONJ", "DET", "PUNCT", "SPACE"})
_EXPLAINING = frozenset({"why", "how"})
_WHEN = frozenset({"DATE", "TIME"})


class Asked(Protocol):
    """What the picker reads of a question (engram.adapters.offline.answers.Reading)."""

    @property
    def terms(self) -> frozenset[str]: ...

    @property
    def names(self) -> frozenset[str]: ...

    def covered(self, text: str) -> float: ...


def sentence_score(asked: Asked, sent: Span, beside: float) -> float:
    """How well a sentence answers: the question's cover of it or (discounted) `beside`, the best cover of the
    sentences next to it, plus a little for the terms it adds."""
    new = len(content_terms(sent.text) - asked.terms - asked.names)
    return max(asked.covered(sent.text), _FOLLOW * beside) + _NEW * min(new, _NEW_TERMS) / _NEW_TERMS


def ranked_sentences(asked: Asked, sents: list[Span]) -> list[Span]:
    """The statements (not questions) best first, ties to the earlier; those neither holding the question's
    terms nor next to a sentence that does are left out."""
    covers = [asked.covered(s.text) for s in sents]
    scored = []
    for n, sent in enumerate(sents):
        beside = max(covers[max(0, n - 1):n] + covers[n + 1:n + 2], default=0.0)
        if sent.text.rstrip().endswith("?") or not (covers[n] or beside):
            continue
        scored.append((sentence_score(asked, sent, beside), -n, sent))
    return [s for *_, s in sorted(scored, key=lambda x: x[:2], reverse=True)]


def explains(question: str) -> bool:
    """Whether a question asks for a reason or a manner ("Why did...", "How does X feel...")."""
    first = question.strip().split(maxsplit=1)[:1]
    return bool(first) and first[0].lower() in _EXPLAINING


def residue(asked: Asked, sent: Span) -> str | None:
    """The sentence's words less the question's, the function words and the dates: "Yesterday I joined a church
    to feel closer to my faith" asked "Why did Maria join a church?" -> "to feel closer to faith"."""
    said = asked.terms | asked.names
    words = [t.text for t in sent if t.pos_ not in _FUNCTION and not t.is_punct and stem(t.lower_) not in said
             and t.ent_type_ not in _WHEN]  # a date says when, not why or how
    text = " ".join(words)
    return text if content_terms(text) else None  # "to in" says nothing
