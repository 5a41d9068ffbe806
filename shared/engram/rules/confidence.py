"""A fact's confidence (pure): where it starts, how restatements reinforce it with diminishing returns
under the cap, and how it decays passively when read (never by a background job)."""

from __future__ import annotations

from datetime import datetime

from engram.model.memories import ConfidenceExplanation, ConfidenceFactors, FactSource
from engram.rules.relevance import recency


def stored_confidence(factors: ConfidenceFactors, cap: float) -> float:
    """base x source weight + reinforcement, never above the cap."""
    return round(min(cap, factors.base * factors.source_weight + factors.reinforcement), 4)


def initial_factors(base: float, source: FactSource, source_weights: dict[str, float], cap: float) -> ConfidenceFactors:
    return ConfidenceFactors(base=min(cap, max(0.0, base)), source=source,
                             source_weight=source_weights.get(source, 1.0))


def reinforced(factors: ConfidenceFactors, cap: float, gain: float) -> ConfidenceFactors:
    """One more restatement closes `gain` of the gap to the cap: each adds less than the one before, and the
    confidence approaches the cap without passing it."""
    now = stored_confidence(factors, cap)
    step = max(0.0, cap - now) * gain
    return factors.model_copy(update={"reinforcement": round(min(1.0, factors.reinforcement + step), 4)})


def confirmed(factors: ConfidenceFactors, cap: float, boost: float) -> ConfidenceFactors:
    """A consolidation's summary confirmed the fact: `boost` more, never above the cap."""
    room = max(0.0, cap - stored_confidence(factors, cap))
    return factors.model_copy(update={"reinforcement": round(min(1.0, factors.reinforcement + min(boost, room)), 4)})


def explain(factors: ConfidenceFactors | None, stored: float, last_validated_at: datetime | None, now: datetime,
            half_life_days: float, cap: float) -> ConfidenceExplanation:
    """The factors and the effective confidence as of `now`: stored confidence times the passive decay since
    the fact was last validated (a restatement, a user's choice), in whole days, capped."""
    f = factors or ConfidenceFactors(base=min(1.0, stored))
    decay = recency(last_validated_at, now, half_life_days, whole_days=True) if last_validated_at is not None else 1.0
    return ConfidenceExplanation(base=f.base, reinforcement=f.reinforcement, source=f.source,
                                 source_weight=f.source_weight, recency=round(decay, 4), stored=stored,
                                 effective=round(min(cap, max(0.0, stored * decay)), 4))


def answer_confidence(*, from_fact: bool, coverage: float, agreeing: int = 0, disagreeing: int = 0,
                      open_conflict: bool = False, recency: float = 1.0, stale: bool = False,
                      typed: bool = True) -> float:
    """How sure an answer is, from what it rests on: a stored fact starts higher than a span read from retrieved
    text (which never reaches "high"); `coverage` (0-1) is how much of the question the evidence matched;
    each other source that agrees adds a little, any that disagrees or an open conflict takes much away (an
    unsettled answer stays below "high"); `recency` (0-1) is the passive decay of the evidence; `stale`: the
    question asks what holds now and the value is one known to have ended (never "high"); `typed`: the fact is a
    relation read by a known pattern (lives_in, works_at...), not a verb's free reading, whose value is no surer
    than the text it was read from (never "high")."""
    coverage = min(1.0, max(0.0, coverage))
    score = 0.55 + 0.35 * coverage if from_fact else 0.15 + 0.35 * coverage
    score += 0.05 * min(agreeing, 2)
    if disagreeing:
        score *= 0.75
    if open_conflict:
        score = min(score * 0.7, 0.6)
    if stale:
        score = min(score, 0.6)
    score *= 0.8 + 0.2 * min(1.0, max(0.0, recency))
    return round(min(0.95 if from_fact and typed else 0.6, max(0.05, score)), 2)
