"""Rules of the offline research: a question's clauses (its sub-questions) and how well a text covers one."""

from __future__ import annotations

import re

from engram.rules.text import content_terms

# A new clause starts at "?" or ";", or at a conjunction that opens a question of its own
# ("... and who is her boss"); "Tom and Jerry" stays one clause.
_CLAUSE_BREAK = re.compile(
    r"[?;]+|,?\s+(?:and|but|also|as well as|plus)\s+(?=(?:what|where|who|whom|whose|when|why|how|which|is|are|was|"
    r"were|do|does|did|has|have|had|can|could|should|would|will)\b)", re.I)
_MIN_TERMS = 1  # a clause with no content word ("and why?") joins no plan


def clauses(question: str) -> list[str]:
    """The question's clauses, each one sub-question, in order; at least the question itself."""
    parts = [" ".join(p.split()).strip(" ,.") for p in _CLAUSE_BREAK.split(question)]
    found = list(dict.fromkeys(p for p in parts if len(content_terms(p)) >= _MIN_TERMS))
    return found or [question.strip()]


def coverage(question: str, text: str) -> float:
    """The share of the question's content terms the text contains (0 when the question has none)."""
    wanted = content_terms(question)
    return len(wanted & content_terms(text)) / len(wanted) if wanted else 0.0
