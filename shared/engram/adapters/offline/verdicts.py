"""Yes-or-no questions ("Did Dana ...?", "Is Vera ...?", "Would Jon ...?"): answered from the retrieved turn
that covers the question best and is about whom it names, "Yes" when that turn says it, "No" when it says it
negated; a question that only supposes ("would", "might", "likely") gets "Likely yes" or "Likely no". A turn
about someone else answers nothing: a question that swaps the person stays "I don't know"."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from engram.adapters.offline.asked import Found
from engram.adapters.offline.choosing import ranked_turns, statements
from engram.model.queries import ContextItem
from engram.rules.confidence import answer_confidence
from engram.rules.text import content_terms
from engram.rules.utterance import SPEAKER

if TYPE_CHECKING:
    from spacy.tokens import Doc

    from engram.adapters.offline.asked import Reading

_AUXILIARIES = frozenset({"is", "are", "was", "were", "am", "did", "does", "do", "has", "have", "had", "can",
                          "could", "would", "will", "should", "might", "may"})
_SUPPOSING = frozenset({"would", "could", "might", "may", "likely", "probably", "considered"})
_STRONG, _SOME = 0.5, 0.2  # a retrieval score that reads the same meaning; a share of the question's words
_GUESS = 0.1  # the confidence of a supposition no turn states
_NEGATED = re.compile(r"\b(?:not|never|no longer|n't|nor)\b", re.I)


def asks_yes_no(doc: Doc) -> bool:
    """Whether a question is answered by yes or no: it opens with an auxiliary ("Did", "Is", "Would") and offers
    no alternatives ("... a beach or the mountains?" asks which)."""
    words = [t.lower_ for t in doc if not t.is_punct]
    return bool(words) and words[0] in _AUXILIARIES and "or" not in words


def verdict(reading: Reading, doc: Doc, items: Sequence[ContextItem]) -> Found | None:
    """"Yes", "No", "Likely yes" or "Likely no" from the best turn about whom the question names; None when no
    turn covers the question or the turns that do are about someone else."""
    # Yes or no is what a turn itself says: a question it replies to is no statement of it.
    for cover, item in [*ranked_turns(reading, items, replies=False)[:3], *_strong(reading, items)]:
        if not _about(item.text, reading.names):
            continue
        said = statements(SPEAKER.sub("", item.text))
        yes = not _NEGATED.search(said)
        supposing = bool({t.lower_ for t in doc} & _SUPPOSING)
        word = ("Likely " if supposing else "") + ("yes" if yes else "no")
        confidence = min(0.4, answer_confidence(from_fact=False, coverage=cover))  # a guess from one turn
        return Found(word[:1].upper() + word[1:], (item,), confidence)
    return _leaning(reading, doc, items)


def _leaning(reading: Reading, doc: Doc, items: Sequence[ContextItem]) -> Found | None:
    """"Likely yes" to a question that only supposes ("Would Dana enjoy a concert?") when no turn says it or its
    negation: what the retrieval finds about the person is read as leaning to it, and the confidence says it is
    a guess. None when the question asks what is, or the retrieval's best turn is weak or not about whom it
    names."""
    if not reading.names or not {t.lower_ for t in doc} & _SUPPOSING:
        return None
    best = max((i for i in items if i.kind == "event"), key=lambda i: i.score, default=None)
    if best is None or best.score < _STRONG or not _about(best.text, reading.names):
        return None
    return Found("Likely yes", (best,), _GUESS)


def _strong(reading: Reading, items: Sequence[ContextItem]) -> list[tuple[float, ContextItem]]:
    """Turns the retrieval ranks high that hold some of the question's words: a yes-or-no question is often
    answered in other words ("Would Dana enjoy a concert?" and "Dana: live music is my thing")."""
    return [(cover, i) for i in items if i.kind == "event" and i.score >= _STRONG
            and (cover := reading.covered(statements(i.text))) >= _SOME]


def _about(text: str, names: frozenset[str]) -> bool:
    """Whether every name the question says is the turn's speaker or said in it."""
    said = content_terms(text)  # the speaker's name included: "Dana: ..."
    return all(any(w.startswith(n) for w in said) for n in names)
