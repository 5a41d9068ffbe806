"""How two contradicting facts are settled (pure), in the rules' order: trust the domain database; trust
the higher confidence when the gap exceeds 0.30; trust the more recent when the age gap exceeds 60 days;
otherwise ask the user. A correction ("actually, ...") is the user's answer given before being asked, so it
settles what would be asked (`correction_first`: before the two gaps, engram's former order).
Neither side is ever dropped: the loser is superseded and the conflict record says why."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from engram.model.memories import ConflictStrategy, FactSource


@dataclass(frozen=True)
class Side:
    """What the rules read of one side of a conflict."""

    confidence: float
    source: FactSource
    valid_at: datetime  # when it became true (its valid_from, else when it was stated)
    is_correction: bool = False


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
        return Decision("trust_domain_database", "old" if old_domain else "new",
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
        return Decision("recency_gap", "new" if new.valid_at > old.valid_at else "old",
                        f"{days:.0f} days apart: the more recent holds")
    if corrected:
        return Decision("correction", "new", "the user corrected the earlier statement")
    return Decision("ask_user", None, "no rule decides: the user is asked")
