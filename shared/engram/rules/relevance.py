"""Multi-signal relevance and fusion arithmetic (pure): RRF, recency decay, entity overlap."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from datetime import datetime


def rrf(rankings: Mapping[str, list[str]], weights: Mapping[str, float], k: int) -> dict[str, float]:
    """Weighted reciprocal rank fusion: sum over brains of weight / (k + rank), ranks from 1."""
    fused: dict[str, float] = {}
    for brain, ids in rankings.items():
        w = weights.get(brain, 1.0)
        for rank, doc in enumerate(ids, start=1):
            fused[doc] = fused.get(doc, 0.0) + w / (k + rank)
    return fused


def recency(occurred_at: datetime | None, now: datetime, half_life_days: float) -> float:
    """1.0 now, 0.5 after one half-life; unknown times count as old (0.0)."""
    if occurred_at is None:
        return 0.0
    age_days = max(0.0, (now - occurred_at).total_seconds() / 86_400)
    return math.pow(0.5, age_days / half_life_days)


def jaccard(a: Iterable[str], b: Iterable[str]) -> float:
    sa, sb = set(a), set(b)
    return len(sa & sb) / len(sa | sb) if sa and sb else 0.0
