"""Importance of an event (Komputa rules): a base by content type, a keyword boost, a cap."""

from __future__ import annotations

from engram.model.heuristics import Heuristics
from engram.rules.keywords import contains_keyword


def importance(content: str, content_type: str, h: Heuristics) -> float:
    """Base score for the content type, + the boost when the content contains a keyword (case-insensitive,
    anywhere unless the world says `importance_keyword_match` otherwise), capped."""
    score = h.ingest.base_importance.get(content_type, h.ingest.base_importance["default"])
    if contains_keyword(content, h.ingest.importance_keywords, h.ingest.importance_keyword_match):
        score += h.ingest.importance_keyword_boost
    return round(max(0.0, min(h.ingest.importance_cap, score)), 4)
