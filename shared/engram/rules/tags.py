"""Tags of an event: every category whose keywords occur in the content (case-insensitive)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import lru_cache


def _alternative(keyword: str) -> str:
    # Words match whole words ("hi" is not in "this"); punctuation keywords ("?") match anywhere.
    if re.fullmatch(r"[\w' ]+", keyword):
        return rf"(?<![\w']){re.escape(keyword)}(?![\w'])"
    return re.escape(keyword)


@lru_cache(maxsize=256)
def _category_pattern(keywords: tuple[str, ...]) -> re.Pattern[str]:
    """One compiled alternation per category: a single scan of the content instead of one per keyword."""
    return re.compile("|".join(_alternative(k) for k in keywords), re.I)


def tags_for(content: str, categories: Mapping[str, Sequence[str]]) -> list[str]:
    """The categories, in their configured order, with at least one keyword in the content."""
    return [name for name, keywords in categories.items()
            if keywords and _category_pattern(tuple(keywords)).search(content)]
