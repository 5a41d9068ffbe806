"""The answer the retrieval's own best turns lean to when no turn holds enough of the question's words.

People answer in other words than the question's ("How does Dana unwind?" and "Dana: I'm carving out me-time
each day - running, reading"): the turns the retrieval ranks first, read for their meaning, often say the answer
with few of the question's words. Only the few best-ranked turns are read, and only those said by whom the
question names (a question that swaps the person finds the other person's turn first and stays "I don't know");
the answer is a guess and says so in its confidence."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from engram.adapters.offline.asked import Found
from engram.adapters.offline.choosing import more_values, said_by, statements
from engram.adapters.offline.spans import known_as
from engram.model.queries import ContextItem
from engram.rules.utterance import SPEAKER

if TYPE_CHECKING:
    from spacy.tokens import Doc

    from engram.adapters.offline.asked import Reading
    from engram.adapters.offline.choosing import SpanReader

_KIND_OF = frozenset({"kind", "kinds", "type", "types", "sort", "sorts", "of"})
_LISTED = 2  # values from as many turns that answer a list question the retrieval's best turns lean to
_TOP = 1  # the retrieval's best turns read: past its first, a turn of the person rarely answers what is asked
_GUESS = 0.2  # the confidence of an answer read from a turn that holds few of the question's words
_SOME = 0.3  # the share of the question's terms the turn must still hold
# A turn that asks back or speaks to the listener ("Wow, what made you pick it?") replies to the other's news: it
# tells nothing of its speaker's own.
_REPLYING = re.compile(r"\?|\byou(?:r|rs|rself)?\b", re.I)


def leaning(reading: Reading, items: Sequence[ContextItem], read_span: SpanReader) -> Found | None:
    """A span of the wanted type from the retrieval's best turns that the person the question names said; None
    when the question names no one, or the best turns are someone else's or hold no such span."""
    from engram.adapters.spacy_engine import shared_engine

    if not reading.names:
        return None
    known = replace(reading, names=known_as(reading.names, items))
    if reading.listing:
        values = more_values(known, items, [], read_span)
        if len(values) >= _LISTED:
            return Found(", ".join(v for v, _, _ in values), tuple(i for _, _, i in values), _GUESS)
    for item in sorted((i for i in items if i.kind == "event"), key=lambda i: -i.score)[:_TOP]:
        body = SPEAKER.sub("", item.text)
        if not said_by(item.text, known.names) or _REPLYING.search(body) or reading.covered(statements(body)) < _SOME:
            continue
        span = read_span(known, shared_engine().doc(body), item.occurred_at, True)
        if span:
            return Found(span, (item,), _GUESS)
    return None


def lists(question: Doc) -> bool:
    """Whether a question asks for a list: the kind right after its "what" or "which" is plural ("What
    activities ...", "Which cities ...", "What kind of books ..."), or it asks for "the names of" several."""
    words = [t for t in question if not t.is_punct]
    for n, word in enumerate(words[:-1]):
        if word.lower_ in ("what", "which"):
            after = [t for t in words[n + 1:n + 5] if t.lower_ not in _KIND_OF]
            head = next((t for t in after if t.pos_ in ("NOUN", "PROPN") and t.dep_ != "compound"), None)
            if head is not None and all(t.pos_ in ("ADJ", "NOUN", "PROPN") for t in after[:after.index(head)]):
                return head.tag_ in ("NNS", "NNPS")
            break
    return any(t.lower_ == "names" and any(c.lower_ == "of" for c in t.children) for t in question)
