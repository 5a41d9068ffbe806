"""Whether a text contains one of some keywords, case-insensitively, in the way a world chooses: anywhere (the
Komputa rules' partial matching: "hi" is in "this"), at the start of a word ("preferred" has "prefer"), or as
whole words. Punctuation at a keyword's edge ("?") needs no word boundary there."""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from engram.model.heuristics import KeywordMatch

_WORD_CHAR = re.compile(r"\w")


def _needle(keyword: str, match: KeywordMatch) -> str:
    body = re.escape(keyword)
    if match == "anywhere":
        return body
    start = r"(?<!\w)" if _WORD_CHAR.match(keyword[0]) else ""
    end = r"(?!\w)" if match == "whole_word" and _WORD_CHAR.match(keyword[-1]) else ""
    return start + body + end


@lru_cache(maxsize=256)
def _pattern(keywords: tuple[str, ...], match: KeywordMatch) -> re.Pattern[str] | None:
    needles = [_needle(k, match) for k in sorted({k.lower() for k in keywords if k}, key=len, reverse=True)]
    return re.compile("|".join(needles), re.I) if needles else None


def contains_keyword(text: str, keywords: Sequence[str], match: KeywordMatch = "anywhere") -> bool:
    """True when any of the keywords occurs in the text (case-insensitive), as `match` says."""
    pattern = _pattern(tuple(keywords), match)
    return pattern is not None and pattern.search(text) is not None
