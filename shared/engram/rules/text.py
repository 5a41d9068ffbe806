"""Small text rules shared by the offline model and retrieval: content terms and a light stemmer."""

from __future__ import annotations

import re

_WORD = re.compile(r"[a-z0-9][a-z0-9'-]*")
STOPWORDS = frozenset(
    """
    a about above after again against all am an and any are as at be because been before being below
    between both but by can could did do does doing down during each few for from further had has have
    having he her here hers herself him himself his how i if in into is it its itself just me more most
    my myself no nor not now of off on once only or other our ours ourselves out over own same she
    should so some such than that the their theirs them themselves then there these they this those
    through to too under until up very was we were what when where which while who whom why will with
    would you your yours yourself yourselves tell know does did do ever anything something someone much
    many also us let
    """.split()
)


def stem(word: str) -> str:
    """A light suffix stripper: enough to match live/lives/lived/living and hike/hiking, not a full
    Porter stemmer. A final silent "e" goes too, so the bare verb meets its inflections."""
    word = word[:-2] if word.endswith("'s") else word  # a possessive stems as its noun: "dana's" meets "dana"
    for suffix in ("ies", "ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            base = word[: -len(suffix)]
            return base + "y" if suffix == "ies" else base
    return word[:-1] if word.endswith("e") and len(word) >= 4 else word


def content_terms(text: str) -> set[str]:
    """The stemmed, lowercased words of a text that carry meaning (stopwords removed)."""
    return {stem(w.strip("'-")) for w in _WORD.findall(text.lower()) if w not in STOPWORDS and len(w) > 1}
