"""Mention detection: names, known aliases, relation descriptions and pronouns, left to right."""

from __future__ import annotations

import itertools

from hypothesis import given
from hypothesis import strategies as st

from engram.rules.mentions import alias_phrases, detect_mentions


def found(text: str, known: tuple[str, ...] = ()) -> list[tuple[str, str]]:
    return [(m.text, m.kind) for m in detect_mentions("evt_01", text, known)]


def test_capitalised_names_are_mentions_with_their_offsets() -> None:
    (dana, priya) = detect_mentions("evt_01", "Hi Dana, how is Priya?")
    assert (dana.text, dana.kind, dana.start, dana.end, dana.event_id) == ("Dana", "name", 3, 7, "evt_01")
    assert "Hi Dana, how is Priya?"[priya.start:priya.end] == "Priya"


def test_multiword_names_stay_whole() -> None:
    assert found("I met Priya Sharma in New York.") == [("Priya Sharma", "name"), ("New York", "name")]
    assert found("Bank of America is hiring") == [("Bank of America", "name")]


def test_greetings_weekdays_and_sentence_starts_are_not_names() -> None:
    assert found("Hi Dana") == [("Dana", "name")]
    assert found("I went to Lisbon on Monday.") == [("Lisbon", "name")]
    assert found("The Beatles") == [("Beatles", "name")]
    assert found("Thanks, see you Tomorrow") == []


def test_a_possessive_names_the_owner() -> None:
    assert found("Priya's dog is cute") == [("Priya", "name")]
    assert found("Chris's car and James's bike") == [("Chris", "name"), ("James", "name")]


def test_known_aliases_are_found_whatever_their_case() -> None:
    assert found("I talked to dana yesterday", ("Dana",)) == [("dana", "name")]
    assert found("call jfk about it", ("jfk",))[0] == ("jfk", "name")


def test_an_alias_inside_another_word_is_not_a_mention() -> None:
    assert found("the panda slept", ("anda",)) == []


def test_relation_descriptions_and_pronouns_are_mentions() -> None:
    assert found("My boss said he would call.") == [("My boss", "description"), ("he", "pronoun")]
    assert found("our team ships it") == [("our team", "description"), ("it", "pronoun")]


def test_overlapping_mentions_keep_the_longer_span() -> None:
    assert found("I met Priya Sharma", ("Priya",)) == [("Priya Sharma", "name")]


@given(st.text(max_size=200))
def test_mentions_are_ordered_and_never_overlap(text: str) -> None:
    mentions = detect_mentions("e", text)
    for a, b in itertools.pairwise(mentions):
        assert a.end <= b.start
    assert all(0 <= m.start < m.end <= len(text) for m in mentions)


def test_it_about_the_weather_or_the_time_is_no_mention() -> None:
    assert found("It's raining and it is late.") == []
    assert found("That's fine, she's here and they're off.") == [("she", "pronoun"), ("they", "pronoun")]
    assert found("It is growing fast.") == [("It", "pronoun")]


def test_possessive_pronouns_are_mentions_too() -> None:
    assert found("his car and their office and its roof") == [("his", "pronoun"), ("their", "pronoun"),
                                                               ("its", "pronoun")]


def test_a_description_learned_as_an_alias_stays_a_description() -> None:
    assert found("I told my boss.", ("my boss",)) == [("my boss", "description")]


def test_the_word_runs_looked_up_as_aliases_skip_stopword_edges_and_short_words() -> None:
    assert alias_phrases("I applied to acme robotics in May", 3, 100) == [
        "applied", "applied to acme", "acme", "acme robotics", "robotics", "robotics in may", "may"]
    assert "to acme" not in alias_phrases("I applied to acme", 4, 100)  # a run never starts or ends on a stopword
    assert len(alias_phrases("one two three four five six", 4, 5)) == 5


def parsed(text: str, spans: list[tuple[str, str]], known: tuple[str, ...] = ()) -> list[tuple[str, str | None, bool]]:
    """Mentions with a parser's spans (phrase, label), as (text, entity type, may create)."""
    from engram.ports.language import NamedSpan

    named = [NamedSpan(p, text.index(p), text.index(p) + len(p), label) for p, label in spans]
    return [(m.text, m.entity_type, m.may_create) for m in detect_mentions("evt_01", text, known, named)
            if m.kind == "name"]


def test_a_parsers_names_come_with_their_types_and_its_dates_and_numbers_are_no_one() -> None:
    text = "Big news: I started at Acme Corp last Friday with three people from Minho Foods in Leeds."
    assert parsed(text, [("Acme Corp", "ORG"), ("last Friday", "DATE"), ("three", "CARDINAL"),
                         ("Minho Foods", "ORG"), ("Leeds", "GPE")]) == [
        ("Big", None, False), ("Acme Corp", "organization", True), ("Minho Foods", "organization", True), ("Leeds", "place", True)]


def test_a_capitalised_sentence_start_the_parser_did_not_name_never_creates() -> None:
    assert parsed("Big news: Pretty wild, it went well.", []) == [("Big", None, False), ("Pretty", None, False)]
    assert parsed("Maya moved. Then Priya's dog ran.", []) == [("Maya", None, False), ("Priya", None, True)]
    assert parsed("Last Friday I had lunch with Maya.", [("Last Friday", "DATE"), ("Maya", "PERSON")]) == [
        ("Maya", "person", True)]


def test_date_phrases_and_the_speakers_i_are_no_names_even_by_rule() -> None:
    assert found("Last Friday I had lunch.") == []
    assert found("Next Tuesday I'm meeting Dana.") == [("Dana", "name")]


def test_a_parsers_span_loses_its_article_possessive_and_closing_period() -> None:
    assert parsed("We went to the Louvre.", [("the Louvre", "FAC")]) == [("Louvre", "place", True)]
    assert parsed("I said it to Acme Inc.", [("Acme Inc.", "ORG")]) == [("Acme Inc", "organization", True)]
    assert parsed("My friends call me D.", [("D.", "NORP")]) == [("D.", "thing", True)]
    assert parsed("I see Dr. Patel on Tuesday.", [("Patel", "PERSON"), ("Tuesday", "DATE")]) == [
        ("Dr. Patel", "person", True)]
    assert found("I see Dr. Patel today.") == [("Patel", "name")]  # by rule, a title alone is no one


def test_chat_interjections_are_no_one_even_when_the_parser_names_them() -> None:
    assert parsed("OMG, LOL that's hilarious", [("OMG", "ORG"), ("LOL", "ORG")]) == []
    assert parsed("Glad you came! Bye Caroline", [("Glad", "PERSON"), ("Bye Caroline", "PERSON")]) == [
        ("Caroline", "person", True)]
    assert parsed("I went there last Fri.", [("last Fri", "DATE")]) == []
    assert found("Last Fri I went.") == []


def test_a_known_alias_inside_a_date_is_no_mention() -> None:
    assert parsed("See you in june, June.", [("june", "DATE")], ("june",)) == [("See", None, False),
                                                                               ("June", None, True)]


def test_a_name_the_parser_cut_in_pieces_is_the_whole_capitalised_run() -> None:
    assert parsed("I had lunch with Jamal Esposito today.", [("Jamal", "GPE"), ("Esposito", "PERSON"),
                                                              ("today", "DATE")]) == [("Jamal Esposito", "person", True)]
    assert parsed("We met the team from Vanara Media.", [("Vanara", "GPE")]) == [("Vanara Media", "organization", True)]
    assert parsed("I had lunch with Lara Richter.", [("Lara", "PRODUCT")]) == [("Lara Richter", "person", True)]


def test_a_name_the_parser_glued_to_a_time_stays_a_name_and_a_capitalised_date_is_none() -> None:
    assert parsed("I spoke with Zentri this morning.", [("Zentri this morning", "TIME")]) == [("Zentri", None, True)]
    assert parsed("We met on Christmas Eve.", [("Christmas Eve", "DATE")]) == []


def test_a_sentence_start_that_lives_or_works_somewhere_is_someone() -> None:
    assert parsed("Corentin Vally resides in Utrecht.", [("Utrecht", "GPE")]) == [
        ("Corentin Vally", "person", True), ("Utrecht", "place", True)]
    assert parsed("Wenonah is a pharmacist at Orchid Health.", [("Orchid Health", "ORG")]) == [
        ("Wenonah", "person", True), ("Orchid Health", "organization", True)]


def test_a_parsers_span_run_across_a_comma_is_two_names() -> None:
    assert parsed("Greer left Copperline Bank, Hollis stayed.", [("Copperline Bank, Hollis", "FAC")]) == [
        ("Greer", None, False), ("Copperline Bank", "place", True), ("Hollis", "place", True)]
