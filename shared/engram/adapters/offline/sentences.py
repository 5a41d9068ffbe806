"""Which sentences and clauses of a turn assert anything: questions (but "Did I tell you that ..."), a label before
the news ("Update: ..."), parses the small model is known to get wrong, and how sure a clause is (hedged, future,
reported) or whether it is asserted at all (a condition, a wish, "would")."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from engram.adapters.offline.lexicon import BELIEF, CONDITIONS, ENDING, HEDGES, ONGOING, REPORT, UNREAL
from engram.adapters.offline.statements import HEDGE_FACTOR

if TYPE_CHECKING:
    from spacy.tokens import Span, Token

_WH = frozenset({"WP", "WRB", "WDT", "WP$"})


# A label the speaker puts before the news ("Update: I left Acme"): the small parser reads the label as the root.
_LABEL = re.compile(r"^\s*(?:(?:update|correction|fyi|news|note|edit|ps|p\.s\.|btw|big news|good news|bad news)\s*[:\-–—]"
                    r"|(?:big|good|great|bad|sad|exciting|some) news\s*[,!]|guess what\s*[,!:]|(?:my mistake|my bad|oops|whoops)\s*[,!]"
                    # a short preamble before a colon that says a correction follows ("Sorry, I mixed that up:")
                    r"|(?=[^:.!?]{0,50}:)[^:.!?]*\b(?:sorry|oops|wait|mixed|wrong|mistake|scratch that|correct)\b[^:.!?]*:"
                    r")\s*(?=\S)", re.I)


def unlabelled(text: str) -> str:
    """The utterance without a leading label ("Update: ", "Correction - ")."""
    return _LABEL.sub("", text, count=1)


def told(sent: Span) -> bool:
    """"Did I tell you that Priyanka lives in Cardiff?": a question about telling whose clause is a statement."""
    root = sent.root
    return (root.lemma_.lower() in ("tell", "mention") and any(c.dep_ == "nsubj" and c.lower_ == "i" for c in root.children)
            and any(c.dep_ == "ccomp" for c in root.children))


def misread(sent: Span) -> bool:
    """A parse the small model got wrong in a known way: "I" read as a name's conjunct ("Rui and I live"), or a
    clause hung on a noun ("My name is Noa and I live in Porto": "live" as a conjunct of "Noa")."""
    return any((t.lower_ == "i" and t.dep_ == "conj")
               or (t.pos_ == "VERB" and t.dep_ == "conj" and t.head.pos_ in ("NOUN", "PROPN")) for t in sent)


def is_question(sent: Span) -> bool:
    """A question: a question mark, a question word first, or an auxiliary before its subject."""
    if sent.text.rstrip().endswith("?"):
        return True
    words = [t for t in sent if not t.is_punct and t.dep_ != "intj" and t.pos_ != "INTJ"]
    if not words:
        return True
    first = words[0]
    if first.tag_ in _WH and first.dep_ != "mark":
        return True
    return first.pos_ == "AUX" and first.dep_ in ("aux", "ROOT", "auxpass") and any(
        t.dep_ in ("nsubj", "nsubjpass", "expl") and t.i > first.i and t.head == first.head for t in sent)


def assertion(verb: Token) -> float | None:
    """How sure an utterance is of a clause: 1 asserted, less when hedged or future, None when not asserted
    (a condition, a wish, "would", "used to", a clause inside a question)."""
    factor, t = 1.0, verb
    for _ in range(8):
        for child in t.children:
            low = child.lower_
            if child.dep_ == "mark" and low in CONDITIONS:
                return None
            if child.dep_ == "aux" and low in UNREAL:
                return None
            if (child.dep_ == "aux" and low in HEDGES) or (child.dep_ == "advmod" and low in HEDGES):
                factor = min(factor, HEDGE_FACTOR)
            if child.dep_ == "aux" and low in ("will", "'ll", "shall"):
                factor = min(factor, 0.9)
        dep, head = t.dep_, t.head
        if dep == "ROOT" or dep == "relcl":
            return factor
        if dep == "conj":
            t = head
        elif dep == "ccomp" and head.lemma_.lower() in BELIEF:
            factor, t = min(factor, HEDGE_FACTOR), head
        elif dep == "ccomp" and (head.lemma_.lower() in REPORT or t.i < head.i):
            t = head  # "she said ...", or a clause spliced before another: "My employer is Globex, I'm ..."
        elif dep in ("appos", "parataxis", "dep") and t.pos_ == "VERB" and any(
                c.dep_ in ("nsubj", "compound") and c.i < t.i for c in t.children):
            t = t.sent.root  # a clause spliced on after a comma: "X doesn't work at A, X works at B"
        elif dep == "xcomp" and head.lemma_.lower() in ONGOING | ENDING:
            t = head
        elif dep == "xcomp" and head.lemma_.lower() == "go" and head.tag_ == "VBG":
            factor, t = min(factor, 0.9), head  # "I'm going to move to Porto"
        elif (dep == "advcl" and not any(c.dep_ == "mark" for c in t.children)) or (dep == "advcl" and all(c.lower_ in ("because", "since", "as", "so") for c in t.children
                                    if c.dep_ == "mark")):
            t = head
        else:
            return None
    return factor
