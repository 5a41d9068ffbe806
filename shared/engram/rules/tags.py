"""Tags of an event: every category whose keywords occur in the content (case-insensitive)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import lru_cache

_WORDS = re.compile(r"[\w']+")
_WORD_KEYWORD = re.compile(r"[\w' ]+")


@lru_cache(maxsize=256)
def _needles(keywords: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """A category's keywords as (" word or phrase " to find among the content's words, punctuation to find
    anywhere), lowercased."""
    lowered = [k.lower() for k in keywords if k.strip()]
    words = tuple(f" {' '.join(k.split())} " for k in lowered if _WORD_KEYWORD.fullmatch(k))
    marks = tuple(k for k in lowered if not _WORD_KEYWORD.fullmatch(k))
    return words, marks


def tags_for(content: str, categories: Mapping[str, Sequence[str]]) -> list[str]:
    """The categories, in their configured order, with at least one keyword in the content. Words and
    phrases match whole words ("hi" is not in "this"); punctuation keywords ("?") match anywhere."""
    lowered = content.lower()
    words = f" {' '.join(_WORDS.findall(lowered))} "  # a whole-word test is then one substring test
    tags = []
    for name, keywords in categories.items():
        phrases, marks = _needles(tuple(keywords))
        if any(p in words for p in phrases) or any(m in lowered for m in marks):
            tags.append(name)
    return tags
