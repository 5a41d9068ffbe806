"""Why something was done, when the sentence says the reason first: "I'm passionate about dance and fashion, so
combining them lets me share my love" gives its reason before its "so" (what follows is the effect, which the
question restates)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from engram.rules.text import content_terms, stem

if TYPE_CHECKING:
    from spacy.tokens import Span

_SO = frozenset({"so", "therefore", "thus"})
_OPENERS = frozenset({"besides", "plus", "also", "anyway", "well", "yeah", "yes", "oh", "honestly", "and", "but"})


def before_so(sent: Span, said: frozenset[str]) -> str | None:
    """The reason a sentence gives before its "so", when what follows the "so" says the question's words (the
    effect asked about); None when the sentence has no such "so" or nothing new before it."""
    mark = next((t for t in sent if t.lower_ in _SO and t.dep_ in ("cc", "mark", "advmod") and t.i > sent.start), None)
    if mark is None or not any(stem(t.lower_) in said or stem(t.lemma_.lower()) in said for t in sent[mark.i - sent.start:]):
        return None
    words = [t for t in sent[: mark.i - sent.start] if not t.is_punct]
    while words and (words[0].lower_ in _OPENERS or (words[0].pos_ == "PRON" and words[0].dep_ == "pobj")):
        words = words[1:]
    text = "".join(t.text_with_ws for t in words).strip(" ,")
    return text if content_terms(text) - said else None
