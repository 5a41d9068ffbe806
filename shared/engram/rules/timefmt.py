"""Relative time as people read it: just now, N minutes ago, N hours ago, N days ago, then "Dec 15"."""

from __future__ import annotations

from datetime import datetime


def relative_time(when: datetime, now: datetime) -> str:
    seconds = (now - when).total_seconds()
    if seconds < 60:
        return "just now"
    if seconds < 3600:
        n = int(seconds // 60)
        return f"{n} minute{'s' if n != 1 else ''} ago"
    if seconds < 86_400:
        n = int(seconds // 3600)
        return f"{n} hour{'s' if n != 1 else ''} ago"
    if seconds < 7 * 86_400:
        n = int(seconds // 86_400)
        return f"{n} day{'s' if n != 1 else ''} ago"
    return f"{when:%b} {when.day}"
