"""How an event and a question are read: only statements, corrections and preferences are extracted;
a question's reading decides how much each search brain counts."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engram.retrieval.classify import WEIGHTS, classify_query
from engram.rules.classify import EXTRACTABLE, classify


@pytest.mark.parametrize(("content", "kind"), [
    ("Hi!", "greeting"),
    ("Good morning.", "greeting"),
    ("Thanks!", "greeting"),
    ("ok", "confirmation"),
    ("Sounds good.", "confirmation"),
    ("Yes!", "confirmation"),
    ("Actually, I live in Porto now.", "correction"),
    ("I no longer work at Acme.", "correction"),
    ("I was wrong, the meeting is on Tuesday.", "correction"),
    ("I prefer tea.", "explicit_preference"),
    ("I really love hiking.", "explicit_preference"),
    ("My favourite colour is green.", "explicit_preference"),
    ("I hate mornings", "explicit_preference"),
    ("Where do I live?", "question"),
    ("what is my name", "question"),
    ("Hey, how are you?", "question"),
    ("Please book a table for two.", "command"),
    ("Tell me a joke", "command"),
    ("remind me tomorrow", "command"),
    ("I live in Lisbon.", "statement"),
    ("Dana is my boss.", "statement"),
    ("The meeting moved to the big room upstairs", "statement"),
    ("Lisbon", "other"),
    ("hmm", "other"),
])
def test_events_are_classified_by_their_wording(content: str, kind: str) -> None:
    assert classify(content) == kind


def test_only_statements_corrections_and_preferences_are_extractable() -> None:
    assert {"statement", "correction", "explicit_preference"} == EXTRACTABLE
    assert classify("Hi!") not in EXTRACTABLE
    assert classify("Where do I live?") not in EXTRACTABLE
    assert classify("I live in Lisbon.") in EXTRACTABLE


def test_a_turn_that_asks_and_states_is_extracted() -> None:
    # A question mark inside a longer turn does not hide the statement after it.
    assert classify("What? I live in Lisbon. Remember that.") == "statement"


def test_a_correction_wins_over_a_preference() -> None:
    assert classify("Actually, I prefer coffee.") == "correction"


def test_classification_ignores_case_and_surrounding_space() -> None:
    assert classify("   HELLO!  ") == "greeting"
    assert classify("ACTUALLY I LIVE IN PORTO") == "correction"


@given(st.text(max_size=200))
def test_every_text_gets_one_known_class(content: str) -> None:
    assert classify(content) in {"statement", "correction", "explicit_preference", "question", "command",
                                 "confirmation", "greeting", "other"}


# ---------------------------------------------------------------- questions
@pytest.mark.parametrize(("question", "kind"), [
    ("When did Dana move to Lisbon?", "temporal"),
    ("What did we talk about last week?", "temporal"),
    ("How long has she worked there", "temporal"),
    ("Why does Dana like Lisbon?", "exploratory"),
    ("Tell me about the trip", "exploratory"),
    ("what do you know about hiking", "exploratory"),
    ("Who is Priya?", "entity"),
    ("Where does Dana live?", "entity"),
    ("what does she like", "factual"),
    ("favourite colour", "factual"),
])
def test_questions_are_read_as_temporal_exploratory_entity_or_factual(question: str, kind: str) -> None:
    assert classify_query(question) == kind


def test_a_capital_at_the_start_of_a_question_is_not_a_name() -> None:
    assert classify_query("Where is the station") == "factual"


def test_entity_questions_weight_the_graph_most_and_exploratory_ones_meaning() -> None:
    assert max(WEIGHTS["entity"], key=WEIGHTS["entity"].__getitem__) == "graph"
    assert max(WEIGHTS["exploratory"], key=WEIGHTS["exploratory"].__getitem__) == "semantic"
    assert all(set(w) == {"keyword", "semantic", "graph"} for w in WEIGHTS.values())
