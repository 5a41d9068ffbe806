"""Signal rules (Intelligence Engine), pure: when a conversation's new turns are read for signals,
how a sentence maps to one of the seven signal types, and the key that deduplicates a signal.

When: always on the first message of a conversation; on a trigger phrase; once at least
`signal_min_turns` turns and `signal_min_chars` characters have passed since the last extraction;
forced after `signal_force_after_turns` turns without one; otherwise the turns wait for a later one.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Literal

from engram.model.events import StoredEvent
from engram.model.heuristics import Heuristics
from engram.model.signals import SignalCursor, SignalType
from engram.rules.classify import classify

TriggerReason = Literal["first_message", "trigger_phrase", "turns_and_chars", "forced"]


# ---------------------------------------------------------------- when
def has_trigger_phrase(text: str, phrases: Sequence[str]) -> bool:
    """A trigger phrase at the start of a word ("reported" counts for "report", "airport" does not)."""
    return bool(phrases) and _phrase_pattern(tuple(phrases)).search(_plain(text)) is not None


def trigger_reason(*, first_message: bool, text: str, turns_since: int, chars_since: int,
                   h: Heuristics) -> TriggerReason | None:
    """Why this turn starts an extraction, or None when it waits. `turns_since` and `chars_since`
    count the turns since the last extraction, this one included."""
    if first_message:
        return "first_message"
    if has_trigger_phrase(text, h.signals.signal_trigger_phrases):
        return "trigger_phrase"
    if turns_since >= h.signals.signal_min_turns and chars_since >= h.signals.signal_min_chars:
        return "turns_and_chars"
    if turns_since >= h.signals.signal_force_after_turns:
        return "forced"
    return None


@dataclass(frozen=True)
class SignalWindow:
    """Turns read for signals together: the ones waiting since the last extraction and the trigger."""

    event_ids: tuple[str, ...]
    reason: TriggerReason


@dataclass(frozen=True)
class SignalPlan:
    """What one batch does in one conversation. `revisit` holds events at or before the watermark that
    were not waiting: a re-run of a window already read, or a message that arrived after later ones.
    Reading them again is harmless (the dedup key stores nothing twice) and skipping them would lose
    a late message's signals. `cursor` is None when the batch moved nothing."""

    conversation_id: str
    windows: tuple[SignalWindow, ...]
    revisit: tuple[str, ...]
    cursor: SignalCursor | None


def plan_signals(world_id: str, conversation_id: str, cursor: SignalCursor | None,
                 events: Sequence[StoredEvent], h: Heuristics) -> SignalPlan:
    """Walk a conversation's new events in time order, counting turns since the last extraction,
    and cut a window wherever the trigger rule fires. Only `signal_roles` messages count as turns."""
    mark = (cursor.last_occurred_at, cursor.last_event_id) if cursor else None
    waiting = set(cursor.pending_event_ids) if cursor else set()
    pending = list(cursor.pending_event_ids) if cursor else []
    chars = cursor.chars_since if cursor else 0
    first = cursor is None
    last = mark
    windows: list[SignalWindow] = []
    revisit: list[str] = []
    seen: set[str] = set()
    turns = sorted((e for e in events if e.role in h.signals.signal_roles and e.conversation_id == conversation_id),
                   key=lambda e: (e.occurred_at, e.event_id))
    for event in turns:
        if event.event_id in seen:
            continue
        seen.add(event.event_id)
        position = (event.occurred_at, event.event_id)
        if mark is not None and position <= mark:
            if event.event_id not in waiting:
                revisit.append(event.event_id)
            continue
        pending.append(event.event_id)
        chars += len(event.content)
        reason = trigger_reason(first_message=first, text=event.content, turns_since=len(pending),
                                chars_since=chars, h=h)
        first = False
        if reason is not None:
            windows.append(SignalWindow(tuple(pending), reason))
            pending, chars = [], 0
        last = position
    next_cursor = SignalCursor(
        world_id=world_id, conversation_id=conversation_id, last_event_id=last[1], last_occurred_at=last[0],
        pending_event_ids=tuple(pending), chars_since=chars, version=cursor.version if cursor else 0,
    ) if last is not None and last != mark else None
    return SignalPlan(conversation_id, tuple(windows), tuple(revisit), next_cursor)


# ---------------------------------------------------------------- what
@dataclass(frozen=True)
class SignalCandidate:
    signal_type: SignalType
    content: str
    confidence: float
    position: int = 0  # the sentence's place in its message


_DECISION = re.compile(
    r"\b(should we|shall we|we should|let's(?! (assume|say|suppose|imagine|see))|let us(?! (assume|say|suppose))|"
    r"(we|i)( have|'ve)? decided|(we|i)'ll go with|(we|i) will go with|(we're|we are|i'm|i am) going with|"
    r"the decision is|we agreed to|we'?re going to go with)\b", re.I)
_OPEN_QUESTION = re.compile(r"^(i wonder|i'?m not sure (if|whether)|not sure (if|whether)|"
                            r"i don'?t know (if|whether))\b", re.I)
_ASSUMPTION = re.compile(
    r"\b(i assume|we assume|assuming|assume that|presumably|probably|i think|i believe|i suppose|i guess|"
    r"i expect|my guess is|let'?s (assume|say|suppose)|suppose that|supposedly|most likely)\b", re.I)
_EVIDENCE = re.compile(
    r"\b(according to|the data (show|shows|suggest|suggests|says)|data shows|stud(y|ies)|report(s|ed)?|surveys?|"
    r"measured|measurements?|benchmarks?|evidence|statistics|experiments?|we observed|the logs show|"
    r"metrics show|research)\b", re.I)
_CONSTRAINT = re.compile(
    r"\b(must|mustn'?t|can'?t|cannot|can not|have to|has to|deadline|due (by|on)|no later than|at the latest|"
    r"budget|at most|no more than|not exceed|limited to|required|mandatory|not allowed|only allowed)\b", re.I)
_GOAL = re.compile(
    r"\b((i|we) (want|need|aim|plan|hope|intend) to|(i|we)'?d like to|the goal is|our goal|my goal|"
    r"the aim is|aiming to|the objective is|our objective|the target is|trying to)\b", re.I)
_ASSERTIVE = re.compile(
    r"\b(is|are|was|were|isn'?t|aren'?t|wasn'?t|weren'?t|has|have|had|will|won'?t|does|doesn'?t|"
    r"costs?|takes?|supports?|works?|uses?|runs?|means?)\b", re.I)
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
# The order settles a sentence that fits several: a decision asked as a question is a decision,
# a hedge makes a statement an assumption, a cited source makes it evidence.
_MARKED: tuple[tuple[SignalType, re.Pattern[str]], ...] = (
    ("Assumption", _ASSUMPTION), ("EvidenceMention", _EVIDENCE), ("Constraint", _CONSTRAINT), ("Goal", _GOAL),
)


def sentences(text: str) -> list[str]:
    """The text's sentences, whitespace collapsed, empty ones dropped."""
    return [s for s in (" ".join(part.split()) for part in _SENTENCE.split(_plain(text))) if s]


def classify_sentence(sentence: str, h: Heuristics) -> SignalCandidate | None:
    """The one signal a sentence carries, or None (greetings, acknowledgements, fragments)."""
    text = " ".join(_plain(sentence).split())[: h.signals.signal_max_chars]
    if not text or classify(text) in ("greeting", "confirmation"):
        return None
    if _DECISION.search(text):
        return SignalCandidate("DecisionIntent", text, h.signals.signal_marker_confidence)
    if text.endswith("?") or _OPEN_QUESTION.search(text):
        return SignalCandidate("Question", text, h.signals.signal_marker_confidence)
    for signal_type, pattern in _MARKED:
        if pattern.search(text):
            return SignalCandidate(signal_type, text, h.signals.signal_marker_confidence)
    if len(text.split()) >= h.signals.signal_claim_min_words and _ASSERTIVE.search(text):
        return SignalCandidate("Claim", text, h.signals.signal_claim_confidence)
    return None


def classify_signals(text: str, h: Heuristics) -> list[SignalCandidate]:
    """Every signal of a message, one per sentence at most, in order; a repeated one kept once."""
    found: dict[str, SignalCandidate] = {}
    for position, sentence in enumerate(sentences(text)):
        candidate = classify_sentence(sentence, h)
        if candidate is not None:
            found.setdefault(signal_key(candidate.signal_type, candidate.content,
                                        casefold=h.signals.signal_key_casefold),
                             replace(candidate, position=position))
    return list(found.values())


# ---------------------------------------------------------------- once
def signal_key(signal_type: str, text: str, *, casefold: bool = False) -> str:
    """SHA256(type + ":" + text.lower()) as 64 hex digits, the signal's identity within its conversation.
    With `casefold` (the world's `signal_key_casefold`) whitespace is collapsed and upper() then casefold()
    lowercases, so that every case variant meets ("STRASSE", "straße" and "Straße" agree)."""
    caseless = " ".join(text.split()).upper().casefold() if casefold else text.lower()
    return hashlib.sha256(f"{signal_type}:{caseless}".encode()).hexdigest()


def _plain(text: str) -> str:
    return text.replace("\u2019", "'").replace("\u2018", "'")


@lru_cache(maxsize=32)
def _phrase_pattern(phrases: tuple[str, ...]) -> re.Pattern[str]:
    alternatives = "|".join(re.escape(_plain(p).lower()) for p in sorted(phrases, key=len, reverse=True))
    return re.compile(rf"(?<![a-z0-9])(?:{alternatives})", re.I)
