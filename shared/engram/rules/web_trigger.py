"""When a question needs the web (Komputa's trigger rules): it asks for current information (a
current-info keyword), or it is a question that sets itself in the present (a question pattern with a
temporal context). Pure: the words come from the heuristics."""

from __future__ import annotations

import re
from functools import lru_cache

_QUESTION = re.compile(r"^\s*(?:what|who|when|where|which|how|is|are|was|were|will|does|do|did|can|could|should)\b"
                       r"|\?\s*$", re.I)


@lru_cache(maxsize=64)
def _words(words: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile(r"\b(?:" + "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True)) + r")\b", re.I)


def needs_web_search(text: str, current_info_keywords: tuple[str, ...], temporal_words: tuple[str, ...]) -> bool:
    """True for "latest news about X", "weather in Porto", or "who is the CEO of Acme right now?"."""
    if current_info_keywords and _words(current_info_keywords).search(text):
        return True
    return bool(_QUESTION.search(text)) and bool(temporal_words) and bool(_words(temporal_words).search(text))
