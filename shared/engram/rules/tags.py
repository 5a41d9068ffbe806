"""Tags of an event: every category whose keywords occur in the content (case-insensitive)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import lru_cache


@lru_cache(maxsize=512)
def _pattern(keyword: str) -> re.Pattern[str]:
    # Words match whole words ("hi" is not in "this"); punctuation keywords ("?") match anywhere.
    if re.fullmatch(r"[\w' ]+", keyword):
        return re.compile(rf"(?<![\w']){re.escape(keyword)}(?![\w'])", re.I)
    return re.compile(re.escape(keyword))


def tags_for(content: str, categories: Mapping[str, Sequence[str]]) -> list[str]:
    """The categories, in their configured order, with at least one keyword in the content."""
    return [name for name, keywords in categories.items() if any(_pattern(k).search(content) for k in keywords)]
