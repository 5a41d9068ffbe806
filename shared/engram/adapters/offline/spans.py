"""Which sentence of a retrieved turn answers a question, and which of its words are the answer.

People answer in the sentence next to the one that repeats the question's words as often as in that sentence
itself ("I joined a church. I wanted to feel closer to my faith."): a sentence is scored by the question's
terms it holds, or, at a discount, those a neighbouring sentence holds, plus a little for what it says that the
question does not (a sentence only restating the question answers nothing). A "why" or "how" question is
answered by the sentence's own words less the question's and the function words (pronouns, auxiliaries,
determiners, interjections) and its dates: its reason or manner, short."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from engram.model.queries import ContextItem
from engram.rules.text import content_terms, stem

if TYPE_CHECKING:
    from spacy.tokens import Span, Token

_FOLLOW = 0.5  # weight of a neighbour's cover: an answer often comes next to the sentence naming its topic
_NEW = 0.2  # weight of what a sentence says beyond the question
_NEW_TERMS = 4  # new terms past which a sentence is not more of an answer
_FUNCTION = frozenset({"PRON", "INTJ", "AUX", "CCONJ", "DET", "PUNCT", "SPACE"})
_EXPLAINING = frozenset({"why", "how"})
_WHEN = frozenset({"DATE", "TIME"})
_SPOKEN_BY = re.compile(r"^(user|assistant|system|[A-Z][\w.'-]*(?: [A-Z][\w.'-]*){0,2})\s*:\s+", re.I)
_ALIASES = re.compile(r"\balso called ([^.]+)")
_SELF = frozenset({"i", "me", "my", "mine", "myself", "we", "us", "our", "ours"})
_YOU = frozenset({"you", "your", "yours", "yourself", "y'all"})
_OTHERS = frozenset({"he", "she", "they"})  # as a subject: someone else
_BACK = frozenset({"he", "she", "they", "him", "her", "his", "their", "them"})  # refer to someone said before


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


def ranked_sentences(asked: Asked, sents: list[Span], replied: str = "") -> list[Span]:
    """The statements (not questions) best first, ties to the earlier; those neither holding the question's
    terms nor next to a sentence that does are left out. `replied`: the question the turn answers, read as a
    neighbour of its first two sentences ("How long have you been married?" - "5 years already!"; a reply often
    opens with thanks: "Thanks, Mel! It was Matt Patterson")."""
    covers = [asked.covered(s.text) for s in sents]
    lead = asked.covered(replied) if replied else 0.0
    scored = []
    for n, sent in enumerate(sents):
        beside = max(covers[max(0, n - 1):n] + covers[n + 1:n + 2] + ([lead] if n <= 1 else []), default=0.0)
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


def known_as(names: frozenset[str], items: Sequence[ContextItem]) -> frozenset[str]:
    """The question's names with the other names of the entities they name: an entity item's name and the
    aliases its record lists ("Dana Whitfield ... also called Dee": a question about Dee is about Dana)."""
    known = set(names)
    for item in items:
        if item.kind == "entity" and item.name:
            said = [item.name, *(a.strip() for m in _ALIASES.findall(item.text) for a in m.split(","))]
            group = {t for n in said if all(w[:1].isupper() for w in n.split()) for t in content_terms(n)}  # names, not "Caroline's mom"
            if group & names:
                known |= group
    return frozenset(known)


def speaks_for(text: str, names: frozenset[str]) -> bool:
    """Whether a turn's "I" can be one the question names: its speaker ("Dana: ...") is named, or it says no
    speaker, or only the asking user's role ("user: ..."); an assistant or another person speaks for themself."""
    said = _SPOKEN_BY.match(text)
    if not names or said is None or said.group(1).lower() == "user":
        return True
    # A name or its start ("Mel" for Melanie), as people shorten one another's names.
    return any(w.startswith(n) and len(n) >= 3 for w in content_terms(said.group(1)) for n in names)


def refers_back(sent: Span, names: frozenset[str]) -> bool:
    """Whether the sentence's subject (or its owner) is a pronoun for someone the previous sentence of the same
    turn names: "My sister Maya lives in Leeds. She works at Acme." is about Maya twice."""
    if sent.start == 0:
        return False
    previous = sent.doc[sent.start - 1].sent
    if not any(stem(t.lower_) in names for t in previous):
        return False
    return any(t.lower_ in _BACK and (t.dep_ in ("nsubj", "nsubjpass") or (t.dep_ == "poss" and t.head.dep_ in (
        "nsubj", "nsubjpass"))) for t in sent)


def own_story(sent: Span, names: frozenset[str]) -> bool:
    """Whether a sentence tells its speaker's own story: said in the first person; else not about the listener
    ("you", "your") or someone else ("she", "Jon"), in a turn that has not turned to the listener before it
    ("That's awesome, Mel! Family moments like that are so special" is about Mel's family, not the speaker's)."""
    if any(t.lower_ in _SELF for t in sent):
        return True
    if any(t.lower_ in _YOU or (t.dep_ in ("nsubj", "nsubjpass") and (t.lower_ in _OTHERS or t.pos_ == "PROPN"))
           for t in sent):
        return False
    return not any(t.lower_ in _YOU or _called(t, names) for t in sent.doc[:sent.end])


def _called(token: Token, names: frozenset[str]) -> bool:
    """Whether a word is someone else's name said to them in reply ("Thanks, Mel!", "That's awesome, Jon!"), not
    in a greeting ("Hey Jon!": the news that follows can still be the speaker's own)."""
    doc = token.doc
    before = doc[token.i - 1].lower_ if token.i else "hey"
    after = doc[token.i + 1].text if token.i + 1 < len(doc) else "."
    return (token.pos_ == "PROPN" and stem(token.lower_) not in names and after in (",", "!", ".", "?")
            and before in (",", "thanks", "wow", "oh", "yes", "yeah", "congrats"))
