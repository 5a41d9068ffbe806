"""The question's evidence (pure): how likely a candidate is relevant judging only by what does not depend on
the other candidates, so the figure means the same in a world of twenty turns as in one of a million.

The ranker's probability (`ranker.Model.probability`) reads ranks and scores standardized within the pool:
it was calibrated on LoCoMo's pools of hundreds of candidates with one to three relevant, and says little in a
world of twenty turns. The evidence reads four absolute columns instead (`COLUMNS`): the cosine to the question,
the share of the question's content words the text contains, the share of the question's entities it names, and
whether the keyword brain found it. A logistic fit on LoCoMo's candidates (`engram bench train-ranker`, shipped
in `ranker.json` beside the trees) maps them to a probability. Search uses the question's best evidence as its
floor (`search_min_evidence`): below it, nothing the world holds is about the question, whatever the ranking.
The cosine is the embedder's: the fit is MiniLM's (the local default).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from engram.model.search import IndexDocument
from engram.retrieval.fusion import Key

COLUMNS = ("similarity", "cover", "entities", "keyword")
_ENDINGS = ("", "s", "es")  # what may follow a word's stem in the text


@dataclass(frozen=True)
class Evidence:
    """The logistic map from the evidence columns to a probability of relevance: one weight per column."""

    weights: tuple[float, ...]
    bias: float

    @classmethod
    def read(cls, document: Mapping[str, Any] | None) -> Evidence | None:
        """The map as `ranker.json` keeps it (`{"columns": [...], "weights": [...], "bias": b}`); None if absent."""
        if not document:
            return None
        if tuple(document["columns"]) != COLUMNS:
            raise ValueError(f"evidence columns {document['columns']!r}, expected {COLUMNS!r}")
        return cls(tuple(float(w) for w in document["weights"]), float(document["bias"]))

    def document(self) -> dict[str, Any]:
        """The map as `ranker.json` keeps it."""
        return {"columns": list(COLUMNS), "weights": [round(w, 6) for w in self.weights],
                "bias": round(self.bias, 6)}

    def probability(self, columns: Mapping[str, Sequence[float]]) -> np.ndarray:
        """The probability of relevance of every candidate, from its evidence columns."""
        x = np.asarray([columns[c] for c in COLUMNS], dtype=np.float64).T
        z = x @ np.asarray(self.weights) + self.bias if len(x) else np.zeros(0)
        return np.asarray(1.0 / (1.0 + np.exp(-z)))


def cover(terms: Sequence[str], text: str) -> float:
    """The share of the question's content words (`keyword_terms`) that the text contains as words, a plural or
    third person "-s" aside ("cats" and "cat", "sleeps" and "sleep" are the same word)."""
    if not terms:
        return 0.0
    low = text.lower()
    return sum(1 for t in terms if _has_word(low, t)) / len(terms)


def _has_word(text: str, word: str) -> bool:
    # A substring search first (most texts lack most words), then whole words only: "cat" is not in "concat".
    stem = word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word
    at = text.find(stem)
    while at >= 0:
        end = at + len(stem)
        while end < len(text) and text[end].isalnum():
            end += 1
        if (at == 0 or not text[at - 1].isalnum()) and text[at + len(stem):end] in _ENDINGS:
            return True
        at = text.find(stem, at + 1)
    return False


def columns(keys: Sequence[Key], rankings: Mapping[str, list[Key]], similarity: Mapping[Key, float],
            docs: Mapping[Key, IndexDocument], terms: Sequence[str], entities: Sequence[str]) -> dict[str, list[float]]:
    """The evidence columns (`COLUMNS`) of every key, each independent of the other candidates."""
    found = set(rankings.get("keyword", ()))
    wanted = set(entities)
    return {"similarity": [similarity.get(k, 0.0) for k in keys],
            "cover": [cover(terms, docs[k].text) for k in keys],
            "entities": [len(wanted.intersection(docs[k].entity_ids)) / len(wanted) if wanted else 0.0
                         for k in keys],
            "keyword": [1.0 if k in found else 0.0 for k in keys]}


def best(evidence: Evidence | None, keys: Sequence[Key], rankings: Mapping[str, list[Key]],
         similarity: Mapping[Key, float], docs: Mapping[Key, IndexDocument], terms: Sequence[str],
         entities: Sequence[str]) -> float:
    """The best candidate's evidence: 0 without candidates, 1 without a fitted map (no floor to hold)."""
    if not keys:
        return 0.0
    if evidence is None:
        return 1.0
    return float(evidence.probability(columns(keys, rankings, similarity, docs, terms, entities)).max())
