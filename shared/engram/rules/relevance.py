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


def recency(occurred_at: datetime | None, now: datetime, half_life_days: float, *, whole_days: bool = False) -> float:
    """1.0 now, 0.5 after one half-life; unknown times count as old (0.0). `whole_days`: the age in whole days
    elapsed, as the ontology document's retrieval and decay count it (`(now - created_at).days`)."""
    if occurred_at is None:
        return 0.0
    elapsed = now - occurred_at
    age_days = float(max(0, elapsed.days)) if whole_days else max(0.0, elapsed.total_seconds() / 86_400)
    return math.pow(0.5, age_days / half_life_days)


def jaccard(a: Iterable[str], b: Iterable[str]) -> float:
    sa, sb = set(a), set(b)
    return len(sa & sb) / len(sa | sb) if sa and sb else 0.0


def effective_confidence(confidence: float, validated_at: datetime | None, now: datetime, half_life_days: float,
                         cap: float) -> float:
    """Stored confidence after passive decay over the whole days since it was last validated, capped at `cap`."""
    decayed = (confidence * recency(validated_at, now, half_life_days, whole_days=True) if validated_at is not None
               else confidence)
    return min(cap, max(0.0, decayed))


def standardized(values: Mapping[str, float]) -> dict[str, float]:
    """Each value as standard deviations from the mean (z-scores), so that brains with unlike scales can
    be added. All values equal: zeros."""
    if not values:
        return {}
    xs = list(values.values())
    mean = sum(xs) / len(xs)
    std = math.sqrt(sum((x - mean) ** 2 for x in xs) / len(xs))
    if std == 0.0:
        return dict.fromkeys(values, 0.0)
    return {doc: (x - mean) / std for doc, x in values.items()}


def propagate(scores: Mapping[str, float], neighbours: Mapping[str, Iterable[str]], groups: Mapping[str, str],
              neighbour_weight: float, group_weight: float) -> dict[str, float]:
    """Context propagation: each document gains `neighbour_weight` times its best neighbour's score (the
    turn before or after it) and `group_weight` times the best score in its group (its conversation), both
    measured above the median score (a typical candidate): only what stands out lifts its context."""
    if not scores:
        return {}
    ordered = sorted(scores.values())
    floor = ordered[len(ordered) // 2]
    best_in_group: dict[str, float] = {}
    for doc, group in groups.items():
        if (score := scores.get(doc)) is not None and score > best_in_group.get(group, floor):
            best_in_group[group] = score
    # A group's lift is the same for each of its documents; a group none of whose scores is above the floor lifts
    # nothing, nor does a missing neighbour or group.
    group_lift = {g: group_weight * (best - floor) for g, best in best_in_group.items()}
    out = {}
    for doc, score in scores.items():
        near = neighbours.get(doc)
        best_near = max((scores[n] for n in near if n in scores), default=floor) if near else floor
        lift = neighbour_weight * (best_near - floor) if best_near > floor else 0.0
        in_group = groups.get(doc)
        out[doc] = score + lift + (group_lift.get(in_group, 0.0) if in_group is not None else 0.0)
    return out
