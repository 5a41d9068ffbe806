"""Tags of an event: every category whose keywords occur in the content (case-insensitive)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from engram.model.heuristics import KeywordMatch
from engram.rules.keywords import contains_keyword


def tags_for(content: str, categories: Mapping[str, Sequence[str]], match: KeywordMatch = "anywhere") -> list[str]:
    """The categories, in their configured order, with at least one keyword in the content. By default a
    keyword counts anywhere ("hi" in "this", as the Komputa rules say); a world may ask for whole words."""
    return [name for name, keywords in categories.items() if contains_keyword(content, keywords, match)]
