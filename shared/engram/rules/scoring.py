"""Importance of an event (Komputa rules): a base by content type, a keyword boost, a cap."""

from __future__ import annotations

import re
from functools import lru_cache

from engram.model.heuristics import Heuristics


@lru_cache(maxsize=64)
def _keywords_pattern(keywords: tuple[str, ...]) -> re.Pattern[str]:
    # A keyword counts at the start of a word ("preferred" counts, "Delhi lives" is not "i live").
    return re.compile("|".join(rf"(?<![a-z0-9]){re.escape(k)}" for k in keywords), re.I)


def importance(content: str, content_type: str, h: Heuristics) -> float:
    """Base score for the content type, + the boost when a keyword occurs (case-insensitive), capped."""
    score = h.ingest.base_importance.get(content_type, h.ingest.base_importance["default"])
    if h.ingest.importance_keywords and _keywords_pattern(tuple(h.ingest.importance_keywords)).search(content):
        score += h.ingest.importance_keyword_boost
    return round(max(0.0, min(h.ingest.importance_cap, score)), 4)
