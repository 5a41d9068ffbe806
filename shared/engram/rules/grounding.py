"""Dates in a statement, grounded against when it was said (the event's `occurred_at`, never the time it is
processed): "next Friday", "last year", "two weeks ago", "in 2019", "on 3 May 2022". A fact's valid_from is
the start of the day, week, month, season or year the expression names.

Readings: "next Friday" is the first Friday after the day it was said, "last Friday" the last one before it,
"this Friday" or "on Friday" the coming one (that day included); "last week/month/year" starts the period
before the one it was said in; "last summer" is the latest summer already over (northern seasons)."""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from engram.rules.dates import time_windows

_WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
_SEASONS = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12}
_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
            "eight": 8, "nine": 9, "ten": 10, "a couple of": 2, "a few": 3}
_NUMBER = r"(?P<n>\d{1,3}|a couple of|a few|an?|one|two|three|four|five|six|seven|eight|nine|ten)"
_UNIT = r"(?P<unit>days?|weeks?|months?|years?)"
# The lookahead holds every alternative's first character: the engine skips most positions before trying them.
_RELATIVE = re.compile(
    r"(?=[0-9aefilnosty])\b(?:(?P<day>today|tonight|this morning|this afternoon|this evening|yesterday|tomorrow)"
    rf"|(?P<which>next|last|this|on)\s+(?P<weekday>{'|'.join(_WEEKDAYS)})"
    r"|(?P<pwhich>next|last|this)\s+(?P<period>week|weekend|month|year|spring|summer|autumn|fall|winter)"
    rf"|{_NUMBER}\s+{_UNIT}\s+(?P<dir>ago|from now)"
    rf"|in\s+(?P<n2>\d{{1,3}}|a couple of|a few|an?|one|two|three|four|five|six|seven|eight|nine|ten)\s+"
    r"(?P<unit2>days?|weeks?|months?|years?))\b", re.I)

# The words a date expression here or in `dates.time_windows` needs, whole (between word boundaries): a word that may
# name a date alone (a day or part of one, a weekday, a month, a year), a period with the word that picks it ("last
# week", "this summer", "last night"), or a unit with what counts it from now ("two weeks ago", "in 3 days"). A text
# without them is dateless without the patterns (most are, and many hold "weekend" or "year" alone). ASCII text is
# told by its words in sets; any other by a pattern over the single words, which folds case as the patterns do.
_NAMED = {"today", "tonight", "morning", "afternoon", "evening", "yesterday", "tomorrow", *_WEEKDAYS,
          *(m.lower() for m in (*calendar.month_name, *calendar.month_abbr) if m)}
_ALONE = frozenset(_NAMED | {str(y) for y in range(1900, 2100)})
_PERIODS = frozenset({"week", "weekend", "month", "year", "night", *_SEASONS})
_PICKS = frozenset({"next", "last", "this"})
_UNITS = frozenset({"day", "days", "week", "weeks", "month", "months", "year", "years"})
_COUNTS = frozenset({"ago", "now", "in"})
_ANY = _ALONE | _PERIODS | _UNITS
_WORD = re.compile(r"\w+")
_TRIGGER = re.compile(rf"\b(?:(?:19|20)\d\d|{'|'.join(sorted(_NAMED | _PERIODS | _UNITS, key=len, reverse=True))})\b",
                      re.I)


def _may_name_a_date(text: str) -> bool:
    if not text.isascii():
        return _TRIGGER.search(text) is not None
    words = _WORD.findall(text.lower())
    if _ANY.isdisjoint(words):  # most texts: one pass over the words
        return False
    return not (_ALONE.isdisjoint(words) and (_PERIODS.isdisjoint(words) or _PICKS.isdisjoint(words))
                and (_UNITS.isdisjoint(words) or _COUNTS.isdisjoint(words)))


@dataclass(frozen=True)
class DateMention:
    text: str
    start: int
    end: int
    when: datetime  # the start of what the expression names, in UTC


def date_mentions(text: str, said_at: datetime) -> list[DateMention]:
    """The date expressions of a text, left to right, each grounded against `said_at`."""
    found: list[DateMention] = []
    if not _may_name_a_date(text):
        return found
    for m in _RELATIVE.finditer(text):
        found.append(DateMention(m.group(0), m.start(), m.end(), _relative(m, _day(said_at))))
    for w in time_windows(text, said_at):  # absolute dates: "in 2019", "May 3, 2023", "in June"
        start = text.find(w.text)
        if start < 0 or any(start < d.end and d.start < start + len(w.text) for d in found):
            continue
        when = w.start.replace(year=said_at.year) if w.any_year else w.start
        found.append(DateMention(w.text, start, start + len(w.text), when))
    return sorted(found, key=lambda d: d.start)


def ground(expression: str | None, said_at: datetime) -> datetime | None:
    """When the first date expression of `expression` starts, read from `said_at`; None when it names none."""
    if not expression:
        return None
    mentions = date_mentions(expression, said_at)
    return mentions[0].when if mentions else None


def without_dates(text: str) -> tuple[str, str | None]:
    """The text with its date expressions taken out, and the first expression (what it says about when)."""
    mentions = date_mentions(text, datetime(2000, 1, 1, tzinfo=UTC))  # only the spans matter here
    for d in reversed(mentions):
        text = text[:d.start] + text[d.end:]
    return " ".join(text.split()), (mentions[0].text if mentions else None)


def _day(when: datetime) -> datetime:
    when = when.astimezone(UTC)
    return datetime(when.year, when.month, when.day, tzinfo=UTC)


def _count(word: str) -> int:
    return int(word) if word.isdigit() else _NUMBERS[word.lower()]


def _shift(day: datetime, n: int, unit: str) -> datetime:
    unit = unit.lower().rstrip("s")
    if unit == "day":
        return day + timedelta(days=n)
    if unit == "week":
        return day + timedelta(weeks=n)
    months = n * (12 if unit == "year" else 1)
    month_index = day.year * 12 + day.month - 1 + months
    year, month = divmod(month_index, 12)
    return datetime(year, month + 1, 1, tzinfo=UTC) if unit == "month" else datetime(year, 1, 1, tzinfo=UTC)


def _relative(m: re.Match[str], today: datetime) -> datetime:
    g = {k: (v.lower() if v else v) for k, v in m.groupdict().items()}
    if g["day"]:
        return today + timedelta(days={"yesterday": -1, "tomorrow": 1}.get(g["day"], 0))
    if g["weekday"]:
        target = _WEEKDAYS.index(g["weekday"])
        ahead = (target - today.weekday()) % 7
        if g["which"] == "next":
            return today + timedelta(days=ahead or 7)
        if g["which"] == "last":
            return today - timedelta(days=(today.weekday() - target) % 7 or 7)
        return today + timedelta(days=ahead)
    if g["period"]:
        return _period(g["pwhich"], g["period"], today)
    if g["n"]:
        n = _count(g["n"])
        return _shift(today, -n if g["dir"] == "ago" else n, g["unit"])
    return _shift(today, _count(g["n2"]), g["unit2"])


def _period(which: str, period: str, today: datetime) -> datetime:
    step = {"next": 1, "last": -1, "this": 0}[which]
    if period in ("week", "weekend"):
        monday = today - timedelta(days=today.weekday())
        start = monday + timedelta(weeks=step)
        return start + timedelta(days=5) if period == "weekend" else start
    if period == "month":
        return _shift(datetime(today.year, today.month, 1, tzinfo=UTC), step, "months")
    if period == "year":
        return datetime(today.year + step, 1, 1, tzinfo=UTC)
    month = _SEASONS[period]
    this_year = datetime(today.year - (month == 12 and today.month < 3), month, 1, tzinfo=UTC)  # winter spans years
    if which == "this":
        return this_year
    if which == "next":
        return this_year if this_year > today else datetime(this_year.year + 1, month, 1, tzinfo=UTC)
    over = _shift(this_year, 3, "months") <= today  # the season has ended
    return this_year if over else datetime(this_year.year - 1, month, 1, tzinfo=UTC)
