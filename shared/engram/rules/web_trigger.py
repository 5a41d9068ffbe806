"""When a question needs the web (Komputa's trigger rules): the input contains a current-information
keyword, or a question pattern with a temporal context. Pure: the words come from the heuristics."""

from __future__ import annotations

from engram.model.heuristics import Heuristics
from engram.rules.keywords import contains_keyword


def needs_web_search(text: str, h: Heuristics) -> bool:
    """keyword OR (question pattern AND temporal context): "latest news about X", "what is on now?"."""
    c = h.context
    if contains_keyword(text, c.web_search_keywords, c.web_search_keyword_match):
        return True
    return (contains_keyword(text, c.web_search_question_patterns, c.web_search_keyword_match)
            and contains_keyword(text, c.web_search_temporal_words, c.web_search_keyword_match))
