"""The offline statement patterns: the facts people commonly state, as triples, with no model."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engram.adapters.offline.statements import SELF, Statement, statements


def triples(text: str) -> list[tuple[str, str, str]]:
    return [(s.subject, s.predicate, s.object) for s in statements(text)]


@pytest.mark.parametrize(("text", "expected"), [
    ("My name is Dana.", (SELF, "name", "Dana")),
    ("I live in Lisbon.", (SELF, "lives_in", "Lisbon")),
    ("I'm living in Berlin", (SELF, "lives_in", "Berlin")),
    ("I moved to Porto.", (SELF, "lives_in", "Porto")),
    ("I work as a nurse.", (SELF, "works_as", "nurse")),
    ("I work for Globex.", (SELF, "works_at", "Globex")),
    ("I'm a vegetarian.", (SELF, "is_a", "vegetarian")),
    ("I am an early riser", (SELF, "is_a", "early riser")),
    ("I really prefer window seats.", (SELF, "prefers", "window seats")),
    ("I adore jazz!", (SELF, "loves", "jazz")),
    ("I enjoy long walks.", (SELF, "likes", "long walks")),
    ("I can't stand crowds.", (SELF, "dislikes", "crowds")),
    ("I always take the train.", (SELF, "always", "take the train")),
    ("I never eat meat.", (SELF, "never", "eat meat")),
    ("My favorite color is green.", (SELF, "favorite_color", "green")),
    ("My favourite band is Queens of the Stone Age.", (SELF, "favorite_band", "Queens of the Stone Age")),
    ("I have a dog named Rex.", (SELF, "has_dog", "Rex")),
    ("I have a cat called Miso.", (SELF, "has_cat", "Miso")),
    ("Priya is my boss.", ("Priya", "boss_of", SELF)),
    ("Sam is my best friend.", ("Sam", "best_friend_of", SELF)),
    ("My sister is called Ana.", ("Ana", "sister_of", SELF)),
    ("My boss is Priya.", ("Priya", "boss_of", SELF)),
    ("Dana prefers tea.", ("Dana", "prefers", "tea")),
    ("Tom is Priya's brother.", ("Tom", "brother_of", "Priya")),
])
def test_each_pattern_states_its_fact(text: str, expected: tuple[str, str, str]) -> None:
    assert triples(text) == [expected]


def test_working_somewhere_as_something_states_both_facts() -> None:
    assert triples("I work at Acme Corp as an engineer.") == [(SELF, "works_at", "Acme Corp"), (SELF, "works_as", "engineer")]


def test_places_people_and_pets_are_entities_and_values_are_not() -> None:
    by_predicate = {s.predicate: s for s in statements(
        "I live in Lisbon. I work as a nurse. I have a dog named Rex. Priya is my boss. I like jazz.")}
    assert {p for p, s in by_predicate.items() if s.object_is_entity} == {"lives_in", "has_dog", "boss_of"}
    assert {p for p, s in by_predicate.items() if not s.object_is_entity} == {"works_as", "likes"}


def test_second_hand_facts_are_less_certain_than_first_hand_ones() -> None:
    (own,) = statements("I prefer tea.")
    (reported,) = statements("Dana prefers tea.")
    assert reported.confidence < own.confidence
    assert all(0.0 < s.confidence <= 1.0 for s in statements("My name is Dana. I like jazz. Tom is Priya's brother."))


def test_every_sentence_and_every_clause_is_read() -> None:
    assert triples("I live in Lisbon and I work at Acme. My name is Dana!") == [
        (SELF, "lives_in", "Lisbon"), (SELF, "works_at", "Acme"), (SELF, "name", "Dana")]
    assert triples("I love hiking and I hate crowds.") == [(SELF, "loves", "hiking"), (SELF, "dislikes", "crowds")]


def test_trailing_time_words_and_quotes_are_not_part_of_the_object() -> None:
    assert triples("I live in Lisbon now.") == [(SELF, "lives_in", "Lisbon")]
    assert triples("I work at Acme these days") == [(SELF, "works_at", "Acme")]
    assert triples('I like "Dune" too.') == [(SELF, "likes", "Dune")]


def test_a_clause_ends_the_object() -> None:
    assert triples("I like jazz, but not rock.") == [(SELF, "likes", "jazz")]


@pytest.mark.parametrize("text", [
    "Do I live in Lisbon?", "Where do you think I work as a nurse?", "I don't live in Paris.",
    "I do not like cats.", "I no longer work at Acme.", "Dana doesn't prefer tea.",
])
def test_questions_and_negations_state_nothing(text: str) -> None:
    assert statements(text) == []


def test_only_the_question_in_a_turn_is_skipped() -> None:
    assert triples("Where do I live? I live in Lisbon.") == [(SELF, "lives_in", "Lisbon")]


def test_a_fact_stated_twice_is_returned_once() -> None:
    assert triples("I love hiking. I LOVE HIKING.") == [(SELF, "loves", "hiking")]


@pytest.mark.parametrize("text", ["She prefers tea.", "He prefers coffee.", "They prefer the bus."])
def test_pronouns_are_not_subjects(text: str) -> None:
    assert statements(text) == []


def test_a_word_that_is_no_relation_is_not_one() -> None:
    assert statements("Sam is my favorite person.") == []


def test_small_talk_states_nothing() -> None:
    assert statements("Hi! How are you? Thanks, that sounds great.") == []
    assert statements("") == []


@given(st.text(max_size=300))
def test_any_text_yields_well_formed_statements(text: str) -> None:
    for s in statements(text):
        assert isinstance(s, Statement)
        assert s.subject and s.predicate and s.object
        assert s.predicate == s.predicate.lower() and " " not in s.predicate
        assert 0.0 < s.confidence <= 1.0
