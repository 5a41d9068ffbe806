"""Retrieval metrics over evidence labels: Recall@k and NDCG@k with binary relevance."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

CUTOFFS = (1, 5, 10, 20)
NDCG_AT = 10


def recall_at(ranked: Sequence[str], relevant: Iterable[str], k: int) -> float:
    """The share of the relevant ids found in the first k."""
    wanted = set(relevant)
    return len(wanted & set(ranked[:k])) / len(wanted) if wanted else 0.0


def ndcg_at(ranked: Sequence[str], relevant: Iterable[str], k: int) -> float:
    """Discounted gain of the relevant ids in the first k, over the best possible (binary relevance)."""
    wanted = set(relevant)
    if not wanted:
        return 0.0
    gain = sum(1.0 / math.log2(i + 2) for i, doc in enumerate(ranked[:k]) if doc in wanted)
    ideal = sum(1.0 / math.log2(i + 2) for i in range(min(k, len(wanted))))
    return gain / ideal


def recall_curve(ranked: Sequence[str], relevant: Iterable[str], depth: int) -> list[float]:
    """Recall@k for every k from 1 to `depth`: the points of a Recall@k curve."""
    wanted = set(relevant)
    return [recall_at(ranked, wanted, k) for k in range(1, depth + 1)]


def mean_curve(curves: Sequence[Sequence[float]], depth: int) -> list[float]:
    """The pointwise average of Recall@k curves (rounded to 4 places); zeros for none."""
    return [round(sum(c[i] for c in curves) / len(curves), 4) if curves else 0.0 for i in range(depth)]


def scores(ranked: Sequence[str], relevant: Iterable[str]) -> dict[str, float]:
    relevant = list(relevant)
    out = {f"recall@{k}": recall_at(ranked, relevant, k) for k in CUTOFFS}
    out[f"ndcg@{NDCG_AT}"] = ndcg_at(ranked, relevant, NDCG_AT)
    return out


def mean(rows: Sequence[dict[str, float]]) -> dict[str, float]:
    """The average of each measure over questions (rounded to 4 places); zeros for no questions."""
    keys = [f"recall@{k}" for k in CUTOFFS] + [f"ndcg@{NDCG_AT}"]
    return {key: round(sum(r[key] for r in rows) / len(rows), 4) if rows else 0.0 for key in keys}
