"""Importance of an event (Komputa rules): a base by content type, a keyword boost, a cap."""

from __future__ import annotations

import re

from engram.config import Heuristics


def importance(content: str, content_type: str, h: Heuristics) -> float:
    """Base score for the content type, + the boost when a keyword occurs (case-insensitive), capped."""
    score = h.base_importance.get(content_type, h.base_importance["default"])
    # A keyword counts at the start of a word ("preferred" counts, "Delhi lives" is not "i live").
    if any(re.search(rf"(?<![a-z0-9]){re.escape(k)}", content, re.I) for k in h.importance_keywords):
        score += h.importance_keyword_boost
    return round(max(0.0, min(h.importance_cap, score)), 4)
