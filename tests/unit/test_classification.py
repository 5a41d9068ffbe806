"""How an event and a question are read: only statements, corrections and preferences are extracted;
a question's reading decides how much each search brain counts."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engram.model.heuristics import Heuristics
from engram.retrieval.classify import QUERY_CLASSES, classify_query
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
    ("Dana", "exact_name"),
    ("Acme Robotics", "exact_name"),
    ('"Dana Lee"', "exact_name"),
    ("Who is Dana's boss?", "relationship"),
    ("How is Priya related to Acme Robotics?", "relationship"),
    ("What do Dana and Sam have in common?", "relationship"),
    ("Which companies has Dana worked for?", "type"),
    ("List all the places Dana visited", "type"),
    ("When did Dana move to Lisbon?", "temporal"),
    ("What did we talk about last week?", "temporal"),
    ("How long has she worked there", "temporal"),
    ("Why does Dana like Lisbon?", "semantic"),
    ("Where does Dana live?", "semantic"),
    ("what does she like", "semantic"),
    ("favourite colour", "semantic"),
])
def test_a_world_reading_conversational_questions_reads_a_name_a_relationship_a_type_a_time_or_a_meaning(
        question: str, kind: str) -> None:
    # L-gent's rules are the default (tests/unit/test_rules_002_lgent.py); this is the per-world alternative.
    assert classify_query(question, "conversational") == kind


@pytest.mark.parametrize("rules", ["lgent", "conversational"])
def test_a_capital_at_the_start_of_a_question_does_not_make_it_a_name(rules: str) -> None:
    assert classify_query("Where is the station", rules) == "semantic"  # type: ignore[arg-type]


def test_the_rules_weights_lean_each_intent_on_its_brain() -> None:
    # The rule's three brains as it weighs them; engram's expansion brain (multi-hop turns) weighs apart.
    weights = {intent: {b: w for b, w in by_brain.items() if b != "expansion"}
               for intent, by_brain in Heuristics().retrieval.fusion_weights.items()}
    assert weights["exact_name"] == {"keyword": 0.8, "semantic": 0.1, "graph": 0.1}
    assert weights["relationship"] == {"keyword": 0.1, "semantic": 0.2, "graph": 0.7}
    assert weights["type"] == {"keyword": 0.2, "semantic": 0.2, "graph": 0.6}
    assert weights["semantic"] == {"keyword": 0.2, "semantic": 0.6, "graph": 0.2}
    assert set(weights) == set(QUERY_CLASSES)
    assert all(set(w) == {"keyword", "semantic", "graph"} for w in weights.values())
    assert all(w.get("expansion", 0) > 0 for w in Heuristics().retrieval.fusion_weights.values())


@given(st.text(max_size=200))
def test_every_query_gets_one_known_intent(query: str) -> None:
    assert classify_query(query) in QUERY_CLASSES
    assert classify_query(query, "conversational") in QUERY_CLASSES


@pytest.mark.parametrize("content", [
    "Sorry, I mixed those up: Idris lives in Turku.", "My mistake, Greer works at Vantora.",
    "Scratch that, the party is on Friday.", "Oona works at Emberline, not at Vantora.",
    "Piet lives in Parma, not Rennes.", "I misspoke earlier, Kofi is a nurse."])
def test_a_correction_without_actually_is_a_correction(content: str) -> None:
    assert classify(content) == "correction"


@pytest.mark.parametrize(("content", "kind"), [
    ("Did I tell you that Solveig Kaur lives in Bremen?", "statement"),
    ("Have I mentioned to you that Rune moved to Odense?", "statement"),
    ("Did I tell you?", "question"),
    ("It is not Monday, is it?", "question"),
    ("I was tired, not really hungry.", "statement"),
])
def test_telling_news_as_a_question_is_a_statement(content: str, kind: str) -> None:
    assert classify(content) == kind
