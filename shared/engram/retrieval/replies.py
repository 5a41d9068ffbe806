"""What a turn replies to: the turn before it in its conversation, said by someone else, its end only.

A reply often says its value without its topic ("How long have you been married?" - "5 years already!"): the
turn it answers, shown next to it, says what the value is of. The end of that turn is kept (a turn asks its
question last), up to a few words, so that every hit can carry it within the context's budget."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime

from engram.model.search import IndexDocument
from engram.rules.utterance import SENTENCE_END, SPEAKER

REPLIED_CHARS = 90  # the end of the turn replied to that a hit carries: about its last sentence
_ATTACHED = re.compile(r"\s*\[[^\]]*\]\s*$")  # "[image: a photo of ...]": what was shared, not what was said


def replied_end(text: str, limit: int = REPLIED_CHARS) -> str:
    """The end of a turn as a reply shows it: its speaker label, then its last sentences up to its last question
    that fit in `limit` characters (the last one cut at a word from its start, "…" marking the cut): "Melanie:
    What made you pick it?"."""
    said = SPEAKER.match(text)
    label, body = (said.group(0), text[said.end():]) if said else ("", text)
    sentences = SENTENCE_END.split(_ATTACHED.sub("", body).strip())
    asked = [n for n, s in enumerate(sentences) if s.endswith("?")]
    kept: list[str] = []
    for sentence in reversed(sentences[:asked[-1] + 1] if asked else sentences):  # up to the question it asks
        if kept and sum(len(s) + 1 for s in kept) + len(sentence) > limit:
            break
        kept.insert(0, sentence)
    end = " ".join(kept)
    if len(end) > limit:
        end = "…" + end[-limit:].split(" ", 1)[-1]
    return label + end


def previous_turns(event_ids: Sequence[str], adjacent: Mapping[str, Sequence[str]],
                   docs: Mapping[str, IndexDocument]) -> dict[str, IndexDocument]:
    """The turn each event replies to, from the turns around events the search read (`adjacent`: an event's
    nearest turns on either side, `docs`: their documents): the one just before it, when someone else said it.
    An event whose turn before was not read replies to none here."""
    before: dict[str, IndexDocument] = {}
    for event, near in adjacent.items():
        for other in near:
            if event in docs and other in docs:
                first, then = sorted((docs[event], docs[other]), key=_order)
                before.setdefault(then.doc_id, first)
    return {e: doc for e in event_ids if (doc := before.get(e)) is not None and e in docs
            and _said_by(doc) != _said_by(docs[e])}


def _order(doc: IndexDocument) -> tuple[datetime, str]:
    return doc.occurred_at or datetime.min.replace(tzinfo=UTC), doc.doc_id


def _said_by(doc: IndexDocument) -> str:
    said = SPEAKER.match(doc.text)
    return (doc.speaker or (said.group(0).rstrip(": ") if said else None) or doc.user_id or "").lower()
