"""The memory lifecycle's pure rules: how sure a fact is and stays, which side of a conflict wins, and when
a statement's relative date says it became true."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engram.adapters.offline.statements import SELF, statements
from engram.model.memories import ConfidenceFactors
from engram.rules import grounding
from engram.rules.confidence import explain, initial_factors, reinforced, stored_confidence
from engram.rules.conflicts import Side, decide
from engram.rules.grounding import date_mentions, ground, without_dates

CAP, GAIN = 0.95, 0.3
WEIGHTS = {"user": 1.0, "reported": 0.9, "domain": 1.0}
T0 = datetime(2026, 3, 4, 15, 30, tzinfo=UTC)  # a Wednesday afternoon


# ---------------------------------------------------------------- confidence
def test_a_first_hand_fact_starts_at_its_extracted_confidence_and_a_reported_one_lower() -> None:
    own = initial_factors(0.9, "user", WEIGHTS, CAP)
    reported = initial_factors(0.9, "reported", WEIGHTS, CAP)
    assert stored_confidence(own, CAP) == pytest.approx(0.9)
    assert stored_confidence(reported, CAP) == pytest.approx(0.81)


def test_each_restatement_adds_less_than_the_one_before() -> None:
    factors, levels = initial_factors(0.6, "user", WEIGHTS, CAP), []
    for _ in range(5):
        factors = reinforced(factors, CAP, GAIN)
        levels.append(stored_confidence(factors, CAP))
    gains = [b - a for a, b in zip([0.6, *levels], levels, strict=False)]
    assert all(later < earlier for earlier, later in itertools.pairwise(gains))
    assert levels[0] == pytest.approx(0.6 + 0.35 * 0.3)


@given(st.floats(0.0, 1.0), st.sampled_from(["user", "reported", "domain"]), st.integers(0, 200))
def test_confidence_never_goes_above_the_cap_however_often_a_fact_is_restated(base: float, source: str,
                                                                              times: int) -> None:
    factors = initial_factors(base, source, WEIGHTS, CAP)  # type: ignore[arg-type]
    for _ in range(times):
        factors = reinforced(factors, CAP, GAIN)
    assert 0.0 <= stored_confidence(factors, CAP) <= CAP


def test_effective_confidence_decays_by_half_every_half_life_since_the_last_validation() -> None:
    factors = ConfidenceFactors(base=0.8)
    fresh = explain(factors, 0.8, T0, T0, 180.0, CAP)
    later = explain(factors, 0.8, T0, T0 + timedelta(days=180), 180.0, CAP)
    assert (fresh.effective, fresh.recency) == (0.8, 1.0)
    assert later.recency == pytest.approx(0.5) and later.effective == pytest.approx(0.4)
    assert later.stored == 0.8  # decay is applied when read, never written back


def test_a_fact_stored_without_factors_is_explained_by_its_confidence_alone() -> None:
    why = explain(None, 0.7, T0, T0, 180.0, CAP)
    assert (why.base, why.reinforcement, why.source, why.effective) == (0.7, 0.0, "user", 0.7)


# ---------------------------------------------------------------- conflict strategies
def side(confidence: float = 0.9, source: str = "user", days: float = 0, correction: bool = False) -> Side:
    return Side(confidence, source, T0 + timedelta(days=days), correction)  # type: ignore[arg-type]


def settle(old: Side, new: Side) -> tuple[str, str | None]:
    d = decide(old, new, confidence_gap=0.30, recency_gap_days=60)
    return d.strategy, d.winner


def test_the_domain_database_wins_whatever_the_other_side_says() -> None:
    assert settle(side(0.5, "domain"), side(0.95, days=400, correction=True)) == ("trust_db", "old")
    assert settle(side(0.95, days=400), side(0.5, "domain")) == ("trust_db", "new")


def test_a_correction_is_the_users_answer_given_before_being_asked() -> None:
    assert settle(side(0.95), side(0.9, correction=True)) == ("correction", "new")


def test_a_confidence_gap_above_0_30_trusts_the_surer_side() -> None:
    assert settle(side(0.9), side(0.54)) == ("confidence_gap", "old")
    assert settle(side(0.5), side(0.85)) == ("confidence_gap", "new")
    assert settle(side(0.9), side(0.6, days=1))[0] != "confidence_gap"  # exactly 0.30 is no gap


def test_an_age_gap_above_60_days_trusts_the_more_recent_side() -> None:
    assert settle(side(0.9), side(0.85, days=61)) == ("trust_recent", "new")
    assert settle(side(0.9, days=90), side(0.85, days=0)) == ("trust_recent", "old")
    assert settle(side(0.9), side(0.9, days=60))[0] == "ask_user"


def test_otherwise_the_user_is_asked_and_no_side_wins() -> None:
    assert settle(side(0.9), side(0.8, days=3)) == ("ask_user", None)


# ---------------------------------------------------------------- relative dates, read from when they were said
@pytest.mark.parametrize(("text", "expected"), [
    ("next Friday", datetime(2026, 3, 6, tzinfo=UTC)),
    ("last Friday", datetime(2026, 2, 27, tzinfo=UTC)),
    ("next Wednesday", datetime(2026, 3, 11, tzinfo=UTC)),
    ("on Wednesday", datetime(2026, 3, 4, tzinfo=UTC)),
    ("yesterday", datetime(2026, 3, 3, tzinfo=UTC)),
    ("tomorrow", datetime(2026, 3, 5, tzinfo=UTC)),
    ("last year", datetime(2025, 1, 1, tzinfo=UTC)),
    ("next year", datetime(2027, 1, 1, tzinfo=UTC)),
    ("last month", datetime(2026, 2, 1, tzinfo=UTC)),
    ("next week", datetime(2026, 3, 9, tzinfo=UTC)),
    ("two weeks ago", datetime(2026, 2, 18, tzinfo=UTC)),
    ("3 days ago", datetime(2026, 3, 1, tzinfo=UTC)),
    ("in 2 weeks", datetime(2026, 3, 18, tzinfo=UTC)),
    ("last spring", datetime(2025, 3, 1, tzinfo=UTC)),
    ("last winter", datetime(2025, 12, 1, tzinfo=UTC)),
    ("in 2019", datetime(2019, 1, 1, tzinfo=UTC)),
    ("on 3 May 2022", datetime(2022, 5, 3, tzinfo=UTC)),
])
def test_a_relative_date_is_read_from_the_moment_it_was_said(text: str, expected: datetime) -> None:
    assert ground(text, T0) == expected


def test_the_same_words_said_on_another_day_mean_another_day() -> None:
    assert ground("next Friday", T0 + timedelta(days=7)) == datetime(2026, 3, 13, tzinfo=UTC)
    assert ground("last year", datetime(2023, 6, 1, tzinfo=UTC)) == datetime(2022, 1, 1, tzinfo=UTC)


def test_a_text_without_a_date_names_none() -> None:
    assert ground("I live in Lisbon", T0) is None and ground(None, T0) is None
    assert date_mentions("My name is May.", T0) == []


@pytest.mark.parametrize(("text", "expected"), [
    # Upper case, a date closing the text, and text beyond ASCII (told by the pattern, not by the word set).
    ("NEXT FRIDAY", datetime(2026, 3, 6, tzinfo=UTC)),
    ("We met Dec. 24, 2019", datetime(2019, 12, 24, tzinfo=UTC)),
    ("Zoë flew to Málaga 3 days ago", datetime(2026, 3, 1, tzinfo=UTC)),
    ("Zoë opened her café in 2019", datetime(2019, 1, 1, tzinfo=UTC)),
])
def test_a_date_is_found_in_any_case_and_any_script(text: str, expected: datetime) -> None:
    assert ground(text, T0) == expected


def test_words_that_hold_a_date_word_name_no_date() -> None:
    assert date_mentions("Her birthday was a Mondays-only thing, #20230", T0) == []


_PICKED = [f"{which} {day}" for which in ("next", "last", "this", "on") for day in ("Monday", "saturday")] + \
    [f"{which} {period}" for which in ("next", "last", "this")
     for period in ("week", "weekend", "month", "year", "spring", "summer", "autumn", "fall", "winter")]
_COUNTED = [f"{n} {unit} {way}" for n in ("two", "3", "a few", "a couple of") for unit in ("days", "week", "years")
            for way in ("ago", "from now")] + [f"in {n} {unit}" for n in ("2", "ten") for unit in ("day", "months")]
_DATED = [*_PICKED, *_COUNTED, "today", "tonight", "this morning", "this evening", "yesterday", "tomorrow",
          "last night", "few days ago", "on 3 May 2022", "May 3, 2022", "Dec. 24, 2019", "early May 2022",
          "in June", "late June", "in 2019", "the week before August 3, 2023", "two days after 1 May, 2022"]


@pytest.mark.parametrize("phrase", _DATED)
def test_the_word_test_before_the_patterns_lets_every_date_expression_through(
        phrase: str, monkeypatch: pytest.MonkeyPatch) -> None:
    texts = [f"We went {phrase}, it was fun.", f"{phrase.upper()}!", f"({phrase})"]
    found = [date_mentions(text, T0) for text in texts]
    monkeypatch.setattr(grounding, "_may_name_a_date", lambda _text: True)
    assert found == [date_mentions(text, T0) for text in texts] and all(found)


@pytest.mark.parametrize("text", ["the weekend trip to the lake", "a year of work", "days like these",
                                  "in the summer", "every week", "the best night of my life"])
def test_a_date_word_without_what_makes_it_a_date_skips_the_patterns(text: str) -> None:
    assert not grounding._may_name_a_date(text) and date_mentions(text, T0) == []


def test_the_date_is_taken_out_of_the_statement_and_kept_as_when() -> None:
    assert without_dates("Next Friday I start at Globex.") == ("I start at Globex.", "Next Friday")
    [s] = statements("I moved to Porto last year.")
    assert (s.subject, s.predicate, s.object, s.when) == (SELF, "lives_in", "Porto", "last year")


def test_a_hedged_statement_is_believed_less() -> None:
    [sure] = statements("I work at Acme.")
    [hedged] = statements("I think I work at Initech.")
    assert hedged.confidence < sure.confidence - 0.3
