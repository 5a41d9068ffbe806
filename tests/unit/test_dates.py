"""Dates in a query read as time windows: absolute days, months and years, parts of a month, spans before
or after a date, months of any year, and relative ones against now; the words leave the keyword query."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest

from engram.model.heuristics import Heuristics
from engram.model.search import IndexDocument
from engram.retrieval.fusion import in_time
from engram.rules.dates import time_windows, without_dates

NOW = datetime(2026, 6, 10, 12, 0, tzinfo=UTC)  # a Wednesday


def _span(text: str) -> list[tuple[date, date]]:
    return [(w.start.date(), w.end.date()) for w in time_windows(text, NOW)]


@pytest.mark.parametrize(("text", "span"), [
    ("What movie did Joanna watch on 1 May, 2022?", (date(2022, 5, 1), date(2022, 5, 2))),
    ("What painting did she show on October 13, 2023?", (date(2023, 10, 13), date(2023, 10, 14))),
    ("What did Joanna accomplish in January 2022?", (date(2022, 1, 1), date(2022, 2, 1))),
    ("Which tournament did Nate win in the beginning of November 2022?", (date(2022, 11, 1), date(2022, 11, 11))),
    ("What happened in late March 2024?", (date(2024, 3, 21), date(2024, 4, 1))),
    ("How often did she swim in 2023?", (date(2023, 1, 1), date(2024, 1, 1))),
    ("What did John do the week before August 3, 2023?", (date(2023, 7, 27), date(2023, 8, 3))),
    ("The puppy she got two weeks before August 11, 2023", (date(2023, 7, 28), date(2023, 8, 11))),
    ("What did I do yesterday?", (date(2026, 6, 9), date(2026, 6, 10))),
    ("What did we discuss last week?", (date(2026, 6, 1), date(2026, 6, 8))),
    ("Anything this month?", (date(2026, 6, 1), date(2026, 7, 1))),
    # Abbreviated, lower- or upper-case months and a year closing the text: the cheap test before the patterns.
    ("met on jan. 5, 2020", (date(2020, 1, 5), date(2020, 1, 6))),
    ("MOVED IN SEP 2021", (date(2021, 9, 1), date(2021, 10, 1))),
    ("since 2019", (date(2019, 1, 1), date(2020, 1, 31))),
])
def test_a_date_in_a_query_is_a_window_of_time(text: str, span: tuple[date, date]) -> None:
    assert _span(text) == [span]


def test_a_month_without_a_year_is_that_month_of_any_year() -> None:
    [window] = time_windows("When did Melanie go camping in June?", NOW)
    assert window.any_year
    assert window.distance_days(datetime(2023, 6, 15, tzinfo=UTC)) == 0.0
    assert window.distance_days(datetime(2023, 7, 3, tzinfo=UTC)) == pytest.approx(2.0)


@pytest.mark.parametrize("text", ["You may go now", "I march on", "What is 2 + 2?", "Remember the 1990s vibe"])
def test_words_that_only_look_like_dates_are_not_windows(text: str) -> None:
    assert time_windows(text, NOW) == []


def test_the_date_leaves_the_words_to_match() -> None:
    text = "What movie did Joanna watch on 1 May, 2022?"
    assert without_dates(text, time_windows(text, NOW)) == "What movie did Joanna watch ?"


def test_a_document_from_the_window_or_soon_after_is_in_time_and_one_far_away_is_not() -> None:
    h = Heuristics()
    windows = time_windows("What did Joanna do in May 2022?", NOW)

    def doc(when: datetime) -> IndexDocument:
        return IndexDocument(world_id="w", doc_id="d", kind="event", text="x", occurred_at=when)

    assert in_time(doc(datetime(2022, 5, 20, tzinfo=UTC)), windows, h) == 1.0
    assert in_time(doc(datetime(2022, 6, 10, tzinfo=UTC)), windows, h) == 1.0  # told within the slack
    later = in_time(doc(datetime(2022, 6, 15, tzinfo=UTC) + timedelta(days=10)), windows, h)
    assert 0.0 < later < 0.5
    assert in_time(doc(datetime(2023, 5, 20, tzinfo=UTC)), windows, h) < 0.001
    assert in_time(doc(datetime(2022, 5, 20, tzinfo=UTC)), [], h) == 0.0
