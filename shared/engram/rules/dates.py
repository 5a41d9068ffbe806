"""Dates a query names, as time windows: "on 1 May, 2022", "May 3, 2023", "in July 2022", "early November
2022", "in June", "in 2023", "the week before August 3, 2023", and relative ones read against now
("yesterday", "last week", "this month"). A date in a question is a filter on when, not a word to match:
the text rarely spells it, so the window scores time and the words are taken out of the keyword query."""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

_MONTHS = {m.lower(): i for i, m in enumerate(calendar.month_name) if m} | \
          {m.lower(): i for i, m in enumerate(calendar.month_abbr) if m and m.lower() != "may"}
_MONTH = r"(?P<month>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>(?:19|20)\d\d)"
_PART = r"(?:(?P<part>beginning|start|early|mid|middle|end|late)(?:\s+of)?\s+)?"
_PART_REQUIRED = r"(?P<part>beginning|start|early|mid|middle|end|late)(?:\s+of)?\s+"
_LEAD = r"(?:(?P<lead>(?:(?:the\s+)?(?:a|one|two|three|\d+)\s+)?(?:days?|weeks?|weekend|months?)\s+)?" \
        r"(?P<relation>before|after|since|until|by)\s+)?"
_PATTERNS = [
    re.compile(rf"\b{_LEAD}(?:on\s+)?{_DAY}\s+{_MONTH},?\s+{_YEAR}\b", re.I),  # 1 May, 2022
    re.compile(rf"\b{_LEAD}(?:on\s+)?{_MONTH}\s+{_DAY},?\s+{_YEAR}\b", re.I),  # May 1, 2022
    re.compile(rf"\b{_LEAD}(?:in\s+)?{_PART}{_MONTH},?\s+(?:of\s+)?{_YEAR}\b", re.I),  # early May 2022
    # A month alone needs its preposition or part ("in June", "early June"): "you may go" names no month.
    re.compile(rf"\b{_LEAD}(?:in|during)\s+(?:the\s+)?{_PART}{_MONTH}\b(?!\s+\d)", re.I),
    re.compile(rf"\b{_LEAD}{_PART_REQUIRED}{_MONTH}\b(?!\s+\d)", re.I),
    re.compile(rf"\b{_LEAD}(?:in\s+)?{_YEAR}\b", re.I),  # in 2023
]
# Every absolute pattern holds a month or a year as a whole word: one cheap search before the six patterns (the
# lookahead on the first letters lets the engine skip most positions before it tries the alternatives).
_ABSOLUTE = re.compile(r"(?=[12adfjmnos])(?<!\w)(?:(?:19|20)\d\d|" + "|".join(sorted(_MONTHS, key=len, reverse=True))
                       + r")\b", re.I)
_RELATIVE = re.compile(r"(?=[aflty])\b(?P<rel>yesterday|today|tonight|last\s+(?:week|weekend|month|year|night)|"
                       r"this\s+(?:week|weekend|month|year)|(?:a\s+)?few\s+days\s+ago)\b", re.I)
_COUNT = {"a": 1, "one": 1, "two": 2, "three": 3}


@dataclass(frozen=True)
class TimeWindow:
    """[start, end) in UTC; `any_year` when the query named a month but no year (every year's month)."""

    start: datetime
    end: datetime
    text: str
    any_year: bool = False

    def distance_days(self, when: datetime, after_days: float = 0.0) -> float:
        """0 inside the window (stretched `after_days` past its end: what happened is often told later), else
        days to its nearest edge; for `any_year`, the window in `when`'s year."""
        start, end = self.start, self.end
        if self.any_year:
            start, end = _shift_year(start, when.year), _shift_year(end, when.year + (end.year - self.start.year))
        end = end + timedelta(days=after_days)
        if start <= when < end:
            return 0.0
        edge = start if when < start else end
        return abs((when - edge).total_seconds()) / 86_400


def time_windows(text: str, now: datetime) -> list[TimeWindow]:
    """The windows the text names, left to right, without overlaps."""
    found: list[tuple[int, int, TimeWindow]] = []
    for pattern in _PATTERNS if _ABSOLUTE.search(text) else ():
        for m in pattern.finditer(text):
            if any(m.start() < e and s < m.end() for s, e, _w in found):
                continue
            window = _window(m.groupdict(), m.group(0).strip(), now)
            if window is not None:
                found.append((m.start(), m.end(), window))
    for m in _RELATIVE.finditer(text):
        if not any(m.start() < e and s < m.end() for s, e, _w in found):
            found.append((m.start(), m.end(), _relative(m.group("rel").lower(), m.group(0), now)))
    return [w for _s, _e, w in sorted(found, key=lambda f: f[0])]


def without_dates(text: str, windows: list[TimeWindow]) -> str:
    """The text with the windows' expressions taken out (what is left is matched as words)."""
    for w in windows:
        text = text.replace(w.text, " ")
    return " ".join(text.split())


def _window(g: dict[str, str | None], text: str, now: datetime) -> TimeWindow | None:
    month = _MONTHS.get((g.get("month") or "").lower().rstrip("."))
    year = int(g.get("year") or 0) or None
    if g.get("day") and month and year:
        day = int(g.get("day") or 0)
        if not 1 <= day <= calendar.monthrange(year, month)[1]:
            return None
        start = datetime(year, month, day, tzinfo=UTC)
        end = start + timedelta(days=1)
    elif month:
        start, end = _month(year or now.year, month, g.get("part"))
    elif year:
        start, end = datetime(year, 1, 1, tzinfo=UTC), datetime(year + 1, 1, 1, tzinfo=UTC)
    else:
        return None
    relation = (g.get("relation") or "").lower()
    if relation:
        span = _span(g.get("lead"))
        if relation in ("before", "until", "by"):
            start, end = start - span, (start if g.get("lead") else end)
        else:
            start, end = end if g.get("lead") else start, end + span
    return TimeWindow(start=start, end=end, text=text, any_year=month is not None and year is None)


def _span(lead: str | None) -> timedelta:
    """"two weeks" -> 14 days; a bare relation ("before May 2022") -> 30 days."""
    if not lead:
        return timedelta(days=30)
    words = lead.lower().split()
    n = _COUNT.get(words[0], int(words[0]) if words[0].isdigit() else 1) if len(words) > 1 and words[0] != "the" \
        else 1
    unit = words[-1]
    days = 7 if unit.startswith("week") and unit != "weekend" else 3 if unit == "weekend" else \
        30 if unit.startswith("month") else 1
    return timedelta(days=n * days)


def _month(year: int, month: int, part: str | None) -> tuple[datetime, datetime]:
    last = calendar.monthrange(year, month)[1]
    first = datetime(year, month, 1, tzinfo=UTC)
    after = first + timedelta(days=last)
    part = (part or "").lower()
    if part in ("beginning", "start", "early"):
        return first, first + timedelta(days=10)
    if part in ("mid", "middle"):
        return first + timedelta(days=10), first + timedelta(days=20)
    if part in ("end", "late"):
        return first + timedelta(days=20), after
    return first, after


def _relative(rel: str, text: str, now: datetime) -> TimeWindow:
    today = datetime.combine(now.date(), datetime.min.time(), tzinfo=UTC)
    words = rel.split()
    if rel in ("today", "tonight"):
        start, end = today, today + timedelta(days=1)
    elif rel == "yesterday":
        start, end = today - timedelta(days=1), today
    elif words[-1] == "ago":
        start, end = today - timedelta(days=5), today
    elif words[-1] in ("week", "weekend"):
        monday = today - timedelta(days=today.weekday())
        start = monday - timedelta(days=7) if words[0] == "last" else monday
        end = start + timedelta(days=7)
    elif words[-1] == "night":
        start, end = today - timedelta(days=1), today
    elif words[-1] == "month":
        first = date(today.year, today.month, 1)
        prev = date(first.year - (first.month == 1), 12 if first.month == 1 else first.month - 1, 1)
        s = prev if words[0] == "last" else first
        start = datetime(s.year, s.month, 1, tzinfo=UTC)
        end = datetime(s.year + (s.month == 12), 1 if s.month == 12 else s.month + 1, 1, tzinfo=UTC)
    else:  # year
        y = today.year - 1 if words[0] == "last" else today.year
        start, end = datetime(y, 1, 1, tzinfo=UTC), datetime(y + 1, 1, 1, tzinfo=UTC)
    return TimeWindow(start=start, end=end, text=text)


def _shift_year(when: datetime, year: int) -> datetime:
    try:
        return when.replace(year=year)
    except ValueError:  # 29 February
        return when.replace(year=year, day=28)
