"""A language engine that reads the names it was told: each listed phrase, wherever it occurs, with its label;
records the batches it was asked to read."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from engram.ports.language import NamedSpan


@dataclass
class ListedNames:
    labels: dict[str, str]  # phrase -> OntoNotes label ("Dana Whitfield": "PERSON", "last Friday": "DATE")
    batches: list[list[str]] = field(default_factory=list)

    @property
    def name(self) -> str:
        return "listed-names"

    def entities(self, texts: Sequence[str]) -> list[list[NamedSpan]]:
        self.batches.append(list(texts))
        return [sorted((NamedSpan(m.group(0), m.start(), m.end(), label) for phrase, label in self.labels.items()
                        for m in re.finditer(rf"(?<!\w){re.escape(phrase)}(?!\w)", text)), key=lambda s: s.start)
                for text in texts]
