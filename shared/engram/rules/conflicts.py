"""How two contradicting facts are settled (pure), in the rules' order: trust the domain database (trust_db);
trust the higher confidence when the gap exceeds 0.30 (confidence_gap); trust the more recent when the age gap
exceeds 60 days (trust_recent); otherwise ask the user (ask_user). A correction ("actually, ...") is the user's answer given before being asked, so it
settles what would be asked (`correction_first`: before the two gaps, engram's former order); so does a stated
change ("moved", "now lives", "no longer"): the value changed, the new one holds from when it was said.
Before any of these, time: a value that became true before the current one did is older news, kept as history.
Neither side is ever dropped: the loser is superseded and the conflict record says why."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import lru_cache
from typing import Literal

from engram.model.memories import ConflictKind, ConflictStrategy, FactSource


@dataclass(frozen=True)
class Side:
    """What the rules read of one side of a conflict."""

    confidence: float
    source: FactSource
    valid_at: datetime  # when it became true (its valid_from, else when it was stated)
    is_correction: bool = False
    is_change: bool = False  # the statement says the value changed ("moved", "now", "no longer")
    said_at: datetime | None = None  # when it was first said (None: read as valid_at)


@dataclass(frozen=True)
class Decision:
    strategy: ConflictStrategy
    winner: Literal["old", "new"] | None  # None: left open for the user
    reason: str


def decide(old: Side, new: Side, *, confidence_gap: float, recency_gap_days: float,
           correction_first: bool = False) -> Decision:
    """The rule that settles `old` against `new`, the first that applies, and its winner (None: ask the user)."""
    old_domain, new_domain = old.source == "domain", new.source == "domain"
    if old_domain != new_domain:
        return Decision("trust_db", "old" if old_domain else "new",
                        "the world's domain database holds this value")
    corrected = new.is_correction and not old.is_correction
    if corrected and correction_first:
        return Decision("correction", "new", "the user corrected the earlier statement")
    gap = round(abs(new.confidence - old.confidence), 6)  # 0.9 - 0.6 is 0.30, not 0.30000000000000004
    if gap > confidence_gap:
        winner: Literal["old", "new"] = "new" if new.confidence > old.confidence else "old"
        return Decision("confidence_gap", winner, f"confidence {max(new.confidence, old.confidence):.2f} against "
                                                  f"{min(new.confidence, old.confidence):.2f} (gap {gap:.2f})")
    days = abs((new.valid_at - old.valid_at).total_seconds()) / 86_400
    if days > recency_gap_days:
        return Decision("trust_recent", "new" if new.valid_at > old.valid_at else "old",
                        f"{days:.0f} days apart: the more recent holds")
    if corrected:
        return Decision("correction", "new", "the user corrected the earlier statement")
    # Said strictly later: two values read from one statement at one time are no change of one into the other.
    if new.is_change and not old.is_change and (new.said_at or new.valid_at) > (old.said_at or old.valid_at):
        return Decision("change", "new", "the statement says the value changed: the new one holds from then")
    return Decision("ask_user", None, "no rule decides: the user is asked")


def conflict_kind(old: FactSource, new: FactSource, *, same_predicate: bool) -> ConflictKind:
    """Seed 004's conflict type: a value of one predicate against the domain database's (one side from it) is
    memory_vs_db, against another memory memory_vs_memory; facts of different predicates are semantic_conflict."""
    if not same_predicate:
        return "semantic_conflict"
    return "memory_vs_db" if (old == "domain") != (new == "domain") else "memory_vs_memory"


def older_news(current: Side, stated: Side, *, undated_slack_days: float = 0.0) -> Decision | None:
    """A value stated now that became true before the current one did is history, not a contradiction: the
    current value stays, the stated one held until it began. A current value known only from when it was said
    (no date of its own) may have held a while before: only a value older than that by more than
    `undated_slack_days` is older news ("I moved to Porto last month" after "I live in Cork" is a move).
    None when the stated value is not older."""
    undated = current.said_at is None or current.said_at == current.valid_at
    slack = timedelta(days=undated_slack_days if undated else 0.0)
    if stated.valid_at >= current.valid_at - slack or "domain" in (current.source, stated.source):
        return None  # the domain database's value is settled by its own rule
    return Decision("history", "old", f"it held from {stated.valid_at:%Y-%m-%d}, before the current value "
                                      f"(from {current.valid_at:%Y-%m-%d}): kept as history")


def states_change(text: str, phrases: Sequence[str]) -> bool:
    """Whether a statement says a value changed: one of the phrases as whole words, in any case."""
    return bool(phrases) and _phrases(tuple(phrases)).search(text) is not None


@lru_cache(maxsize=16)
def _phrases(phrases: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile(r"\b(?:" + "|".join(re.escape(p) for p in sorted(phrases, key=len, reverse=True)) + r")\b",
                      re.I)
