"""Where the evidence is lost, by mechanism, out of fold (`engram bench train-ranker` reports it).

Each evidence turn of a question is either a candidate some brain found ("found"), a candidate only as a
neighbour read around the best events ("neighbour": no brain ranked it), in the pool only through a fact or
summary that cites it ("cited"), or in no candidate at all ("missing": no brain returned it); then where the
out-of-fold learned ranking puts it among the events it ranks: in the first 10, 11 to 20, or lower. A new candidate
source pays off only when "missing" is a large share; a ranking change, when "found" turns sit below the first 10.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np

from engram.bench.locomo import CATEGORIES

MECHANISMS = ("found", "neighbour", "cited", "missing")
PLACES = ("top 10", "11-20", "lower")


class Candidates(Protocol):
    """One question's recorded candidates (`bench.ranker.Question`)."""

    category: str
    evidence: tuple[str, ...]
    names: list[str]
    x: np.ndarray
    events: list[list[str]]


def mechanism(question: Candidates, event_id: str) -> str:
    """How the evidence turn `event_id` is in the question's pool (one of `MECHANISMS`)."""
    column = {n: j for j, n in enumerate(question.names)}
    brains = [column[n] for n in question.names if n.endswith(".found")]
    event = column.get("kind.event")
    cited = False
    for i, events in enumerate(question.events):
        if event_id not in events:
            continue
        if event is not None and question.x[i, event] > 0 and events == [event_id]:
            return "found" if any(question.x[i, j] > 0 for j in brains) else "neighbour"
        cited = True
    return "cited" if cited else "missing"


def place(ranked: Sequence[str], event_id: str) -> str:
    """Where the ranking puts the event (one of `PLACES`); `ranked` holds the first 20 events."""
    if event_id in ranked[:10]:
        return PLACES[0]
    return PLACES[1] if event_id in ranked else PLACES[2]


def losses(questions: Sequence[Candidates], ranked: Sequence[Sequence[str]]) -> dict[str, Any]:
    """By category: evidence turns by mechanism and place (`ranked`: each question's first 20 events, out of fold)."""
    out: dict[str, Any] = {}
    for q, events in zip(questions, ranked, strict=True):
        part = out.setdefault(q.category, {m: dict.fromkeys(PLACES, 0) for m in MECHANISMS})
        for e in q.evidence:
            part[mechanism(q, e)][place(events, e)] += 1
    return {c: out[c] for c in CATEGORIES.values() if c in out}


def table(report: dict[str, Any]) -> list[str]:
    """One line per category and mechanism: evidence turns, their share, and where the ranking put them."""
    lines = ["evidence turns by mechanism (out of fold): category, mechanism, turns, share; after the learned ranking: "
             + ", ".join(PLACES)]
    for category, part in report.items():
        total = sum(sum(row.values()) for row in part.values()) or 1
        for m, row in part.items():
            n = sum(row.values())
            lines.append(f"  {category:<12} {m:<10} {n:>5} {n / total:>6.1%}   "
                         + "  ".join(f"{row[p]:>5}" for p in PLACES))
    return lines
