"""Relative time as the Komputa rules show it: just now, {X} minutes ago, {X} hours ago, {X} days ago, then
"Dec 15"."""

from __future__ import annotations

from datetime import datetime


def relative_time(when: datetime, now: datetime, *, singular: bool = False) -> str:
    """How long before `now` `when` was. The document reads "{X} minutes ago" even for one; `singular` reads
    "1 minute ago" (a world's `relative_time_singular`)."""
    seconds = (now - when).total_seconds()
    if seconds < 60:
        return "just now"
    if seconds < 3600:
        n, unit = int(seconds // 60), "minute"
    elif seconds < 86_400:
        n, unit = int(seconds // 3600), "hour"
    elif seconds < 7 * 86_400:
        n, unit = int(seconds // 86_400), "day"
    else:
        return f"{when:%b} {when.day}"
    return f"{n} {unit}{'' if singular and n == 1 else 's'} ago"
