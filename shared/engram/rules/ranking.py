"""Ranking several candidate entities for one name (pure): how sure the alias is, how lately and how often
the entity was mentioned, and where the alias came from, weighted by the heuristics."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from engram.model.heuristics import Heuristics
from engram.rules.relevance import recency


@dataclass(frozen=True)
class CandidateEvidence:
    entity_id: str
    match: float  # the alias's confidence, or trigram similarity times it
    source: str  # how the alias was learned: seed, user, created, domain, fuzzy, coreference...
    mentions: int = 0
    last_seen: datetime | None = None


def candidate_score(evidence: CandidateEvidence, now: datetime, h: Heuristics) -> float:
    """0.4 alias confidence + 0.2 recency + 0.2 usage + 0.2 source with the default weights; each signal in [0, 1]."""
    rank = h.resolve
    usage = evidence.mentions / (evidence.mentions + rank.rank_usage_half_count) if evidence.mentions > 0 else 0.0
    source = rank.rank_source_weights.get(evidence.source, min(rank.rank_source_weights.values(), default=0.0))
    return (rank.rank_weight_alias * evidence.match
            + rank.rank_weight_recency * recency(evidence.last_seen, now, rank.rank_recency_half_life_days)
            + rank.rank_weight_usage * usage
            + rank.rank_weight_source * source)


def rank_candidates(evidence: Sequence[CandidateEvidence], now: datetime, h: Heuristics) -> list[tuple[str, float]]:
    """(entity id, score) best first; an entity with several pieces of evidence counts its best one."""
    best: dict[str, float] = {}
    for e in evidence:
        best[e.entity_id] = max(best.get(e.entity_id, 0.0), candidate_score(e, now, h))
    return sorted(best.items(), key=lambda item: (-item[1], item[0]))


def clear_winner(ranked: Sequence[tuple[str, float]], margin: float) -> str | None:
    """The top candidate when it leads the next by at least `margin` (or stands alone), else None."""
    if not ranked:
        return None
    if len(ranked) == 1 or ranked[0][1] - ranked[1][1] >= margin:
        return ranked[0][0]
    return None
