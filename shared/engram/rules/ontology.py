"""The world's ontology for facts (pure): a free predicate an extractor wrote ("resides_in", "Lives in",
"home city") is recorded under the ontology's predicate it names, by its normalized name or a declared synonym;
a predicate the ontology has no word for stays as it was (free)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from engram.model.memories import OntologyPredicate


def normalized(predicate: str) -> str:
    """snake_case, lower case, camelCase split: "livesIn", "lives in" and "Lives_In" are one name."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", predicate)
    return re.sub(r"[^a-z0-9]+", "_", spaced.lower()).strip("_")


class PredicateMap:
    """Each name and synonym of the ontology's predicates, normalized, to the predicate it stands for. A synonym
    two predicates declare stays with the first by name (the ontology is read in order)."""

    def __init__(self, predicates: Sequence[OntologyPredicate]) -> None:
        self.names: dict[str, str] = {}
        for p in predicates:
            self.names.setdefault(normalized(p.concept), p.concept)
        for p in predicates:
            for synonym in p.synonyms:
                self.names.setdefault(normalized(synonym), p.concept)

    def __call__(self, predicate: str) -> str:
        """The ontology's predicate for `predicate`, else `predicate` itself."""
        return self.names.get(normalized(predicate), predicate)
