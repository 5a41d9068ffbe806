"""What ingest computes for each event: its importance, its tags, and how its time reads."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engram.model.events import CONTENT_TYPE_BY_ROLE
from engram.model.heuristics import DEFAULT_HEURISTICS, Heuristics, IngestHeuristics
from engram.rules.scoring import importance
from engram.rules.tags import tags_for
from engram.rules.timefmt import relative_time

H = DEFAULT_HEURISTICS
CONTENT_TYPES = list(H.ingest.base_importance)


# ---------------------------------------------------------------- importance
@pytest.mark.parametrize(("content_type", "base"), [
    ("userpreference", 0.9), ("factuallearning", 0.8), ("contextualfact", 0.7), ("default", 0.5),
    ("userinput", 0.4), ("assistantresponse", 0.3),
])
def test_each_content_type_has_its_base_importance(content_type: str, base: float) -> None:
    assert importance("The train leaves at noon.", content_type, H) == base


def test_roles_map_to_the_content_types_that_score_them() -> None:
    assert importance("ok", CONTENT_TYPE_BY_ROLE["user"], H) == 0.4
    assert importance("ok", CONTENT_TYPE_BY_ROLE["assistant"], H) == 0.3
    assert importance("ok", CONTENT_TYPE_BY_ROLE["system"], H) == 0.5


def test_an_unknown_content_type_scores_as_default() -> None:
    assert importance("hello", "something_new", H) == 0.5


@pytest.mark.parametrize("content", [
    "Please remember my birthday.", "I prefer aisle seats.", "I always walk to work.", "I never drink coffee.",
    "My name is Dana.", "I am a nurse.", "I live in Lisbon.", "I work at Acme.",
])
def test_each_keyword_adds_the_boost(content: str) -> None:
    assert importance(content, "userinput", H) == 0.6


@pytest.mark.parametrize("content", ["REMEMBER THIS", "My Name Is Dana", "i LIVE nearby", "Always."])
def test_keywords_count_whatever_their_case(content: str) -> None:
    assert importance(content, "userinput", H) == 0.6


def test_several_keywords_add_one_boost() -> None:
    assert importance("Remember: my name is Dana, I live in Lisbon and I always prefer tea.", "userinput", H) == 0.6


def test_inflected_keywords_still_count() -> None:
    assert importance("I preferred the window seat and remembered my passport.", "userinput", H) == 0.6


def test_a_keyword_inside_another_word_counts_unless_the_world_asks_for_word_starts() -> None:
    # "Delhi lives" holds the letters of "i live", "Hawaii amid" those of "i am": the content contains them.
    assert importance("My friend from Delhi lives nearby.", "userinput", H) == 0.6
    assert importance("We flew to Hawaii amid the storm.", "userinput", H) == 0.6
    word_starts = H.with_overrides({"importance_keyword_match": "word_start"})
    assert importance("My friend from Delhi lives nearby.", "userinput", word_starts) == 0.4
    assert importance("We flew to Hawaii amid the storm.", "userinput", word_starts) == 0.4


def test_the_score_is_capped_at_one() -> None:
    assert importance("I always prefer tea.", "userpreference", H) == 1.0
    assert importance("I live in Lisbon.", "factuallearning", H) == 1.0


def test_a_world_can_tune_bases_keywords_boost_and_cap() -> None:
    tuned = H.with_overrides({"importance_keywords": ("deadline",), "importance_keyword_boost": 0.3,
                              "importance_cap": 0.65})
    assert importance("The deadline is Friday.", "userinput", tuned) == 0.65
    assert importance("I always prefer tea.", "userinput", tuned) == 0.4


def test_a_world_overriding_one_base_score_keeps_the_others_and_the_default() -> None:
    tuned = H.with_overrides({"base_importance": {"userinput": 0.6}})
    assert importance("ok", "userinput", tuned) == 0.6
    assert importance("ok", "assistantresponse", tuned) == 0.3
    assert importance("ok", "no-such-type", tuned) == 0.5


@given(content=st.text(max_size=200), content_type=st.sampled_from([*CONTENT_TYPES, "unknown"]))
def test_importance_is_always_between_zero_and_one(content: str, content_type: str) -> None:
    assert 0.0 <= importance(content, content_type, H) <= 1.0


@given(content=st.text(max_size=80),
       base=st.floats(min_value=-2.0, max_value=3.0, allow_nan=False),
       boost=st.floats(min_value=0.0, max_value=2.0, allow_nan=False),
       cap=st.floats(min_value=0.0, max_value=1.0, allow_nan=False))
def test_importance_stays_within_bounds_whatever_a_world_configures(content: str, base: float, boost: float,
                                                                    cap: float) -> None:
    tuned = Heuristics(ingest=IngestHeuristics(base_importance={"default": base}, importance_keyword_boost=boost,
                                               importance_cap=cap))
    score = importance(content + " remember", "userinput", tuned)
    assert 0.0 <= score <= 1.0
    assert score <= cap + 0.00005  # the cap, to the four decimals scores are rounded to


@given(st.text(max_size=120))
def test_a_keyword_never_lowers_the_score(content: str) -> None:
    assert importance(content + " I always do.", "userinput", H) >= importance(content, "userinput", H)


# ---------------------------------------------------------------- tags
CATEGORIES = H.ingest.tag_keywords


def test_there_are_seven_default_tag_categories() -> None:
    assert list(CATEGORIES) == ["weather", "greeting", "question", "preference", "personal", "time", "news"]


@pytest.mark.parametrize(("content", "tag"), [
    ("Will it rain in Porto?", "weather"),
    ("Good morning!", "greeting"),
    ("Where is the station", "question"),
    ("I like hiking.", "preference"),
    ("My name is Dana.", "personal"),
    ("What time is it?", "time"),
    ("Did you see the news about the election", "news"),
])
def test_each_category_is_found_by_its_keywords(content: str, tag: str) -> None:
    assert tag in tags_for(content, CATEGORIES)


def test_an_event_gets_every_category_it_matches_in_configured_order() -> None:
    assert tags_for("Hello! What's the weather tomorrow?", CATEGORIES) == ["weather", "greeting", "question"]


def test_tags_ignore_case() -> None:
    assert tags_for("BREAKING NEWS: RAIN EXPECTED", CATEGORIES) == ["weather", "news"]


def test_keywords_match_inside_words_unless_the_world_asks_for_whole_words() -> None:
    # "hi" is in "this", "rain" in "training": the Komputa rules' partial matching.
    assert tags_for("this training is fine", CATEGORIES) == ["weather", "greeting"]
    assert tags_for("this training is fine", CATEGORIES, "whole_word") == []


def test_punctuation_keywords_match_anywhere() -> None:
    assert tags_for("Lisbon?", CATEGORIES) == ["question"]


def test_an_event_with_no_keyword_has_no_tags() -> None:
    assert tags_for("Lisbon is lovely.", CATEGORIES) == []


def test_tag_categories_are_configurable() -> None:
    categories = {**CATEGORIES, "travel": ("flight", "hotel", "train")}
    assert tags_for("Booked the hotel and the flight.", categories) == ["travel"]
    assert tags_for("Booked the hotel.", {"travel": ("hotel",)}) == ["travel"]
    assert tags_for("Hello there", {}) == []


# ---------------------------------------------------------------- relative time
NOW = datetime(2026, 12, 20, 15, 0, tzinfo=UTC)


@pytest.mark.parametrize(("ago", "shown"), [
    (timedelta(0), "just now"),
    (timedelta(seconds=59), "just now"),
    (timedelta(seconds=60), "1 minutes ago"),
    (timedelta(minutes=2), "2 minutes ago"),
    (timedelta(minutes=59, seconds=59), "59 minutes ago"),
    (timedelta(hours=1), "1 hours ago"),
    (timedelta(hours=5, minutes=30), "5 hours ago"),
    (timedelta(hours=23, minutes=59), "23 hours ago"),
    (timedelta(days=1), "1 days ago"),
    (timedelta(days=3), "3 days ago"),
    (timedelta(days=6, hours=23), "6 days ago"),
    (timedelta(days=5, hours=15), "5 days ago"),
])
def test_recent_times_read_relative_to_now(ago: timedelta, shown: str) -> None:
    assert relative_time(NOW - ago, NOW) == shown


def test_a_week_or_more_ago_reads_as_month_and_day() -> None:
    assert relative_time(NOW - timedelta(days=7), NOW) == "Dec 13"
    assert relative_time(datetime(2026, 12, 5, 9, 30, tzinfo=UTC), NOW) == "Dec 5"
    assert relative_time(datetime(2025, 3, 15, tzinfo=UTC), NOW) == "Mar 15"


def test_a_time_in_the_future_reads_as_just_now() -> None:
    assert relative_time(NOW + timedelta(minutes=5), NOW) == "just now"


@given(st.timedeltas(min_value=timedelta(0), max_value=timedelta(days=3650)))
def test_every_past_time_has_a_reading(ago: timedelta) -> None:
    shown = relative_time(NOW - ago, NOW)
    assert shown == "just now" or shown.endswith(" ago") or shown[:3] in {
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"}
