"""What the offline answerer reads of a question (the kind of value it wants, its terms and names) and what an
answer rests on: shared by the modules that choose the turns and read the values."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from engram.model.queries import ContextItem
from engram.rules.text import content_terms

Expect = Literal["person", "place", "date", "number", "duration", "thing"]


@dataclass(frozen=True)
class Reading:
    """What a question asks: the kind of value, its topical terms (stemmed, names left out), the names it says,
    whether it wants several values ("what books") and whether it insists on the present ("now")."""

    expects: Expect
    terms: frozenset[str]
    names: frozenset[str]
    several: bool = False
    now: bool = False
    relation: frozenset[str] = frozenset()  # the question's own verbs ("realize"): the terms that weigh double
    explains: bool = False  # "why" or "how" a thing: answered by a sentence's own words, not one phrase
    wh: str = ""  # the question word ("why", "how", "what"...)
    verbs: frozenset[str] = frozenset()  # the question's verbs' lemmas, light ones too ("give"): what leads to the answer
    kind: frozenset[str] = frozenset()  # the kind of thing asked for ("which superhero", "favorite movie")
    listing: bool = False  # asks for a list by a plural kind ("what activities", "which cities", "the names of")
    measure: str = ""  # the word after a "how" that asks a measure ("many", "often", "long")
    counted: frozenset[str] = frozenset()  # what a "how many" counts, stemmed ("tournaments", "times")

    def covered(self, text: str) -> float:
        """The share of the question's terms a text holds, its verbs counted twice."""
        said = content_terms(text)
        total = len(self.terms) + len(self.relation)
        return (len(self.terms & said) + len(self.relation & said)) / total if total else 0.0


@dataclass(frozen=True)
class Found:
    """An answer's value and what it rests on."""

    content: str
    items: tuple[ContextItem, ...]
    confidence: float
