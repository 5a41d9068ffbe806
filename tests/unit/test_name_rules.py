"""Names as people say them: a company's key whatever its suffix, a person's first name, a name said shorter,
and the nicknames a text states."""

from __future__ import annotations

from engram.ports.language import NamedSpan
from engram.rules.names import (
    brand,
    first_name,
    guess_entity_type,
    has_corporate_suffix,
    is_short_form,
    name_key,
    parsed_entity_type,
    stated_aliases,
)


def said(text: str, persons: list[NamedSpan] | None = None) -> list[tuple[str, str | None]]:
    return [(a.alias, a.subject) for a in stated_aliases(text, persons)]


def test_a_company_is_one_key_whatever_its_suffix_case_and_punctuation() -> None:
    keys = {name_key(n) for n in ("Acme Corp", "Acme Corporation", "ACME corp", "Acme Corp.", "Acme, Inc.",
                                  "The Acme Co., Ltd.", "acme LLC", "Acme GmbH", "Acme plc", "Acme")}
    assert keys == {"acme"}
    assert name_key("Minho Foods") == "minho foods" and name_key("Inc") == "inc"
    assert has_corporate_suffix("Acme Corp.") and not has_corporate_suffix("Acme")
    assert not has_corporate_suffix("Dana Whitfield")


def test_a_persons_first_name_is_the_first_word_of_a_full_name_only() -> None:
    assert first_name("Dana Whitfield") == "Dana"
    assert first_name("Mary-Ann O'Neil") == "Mary-Ann"
    assert [first_name(n) for n in ("Dana", "Dr. Okafor", "J. Smith", "dana whitfield", "Mr Lang")] == [None] * 5


def test_a_name_said_shorter_is_the_same_name_and_another_name_is_not() -> None:
    assert is_short_form("Alice", "Alice Moreau") and is_short_form("alice", "Alice Moreau")
    assert is_short_form("Mary Lee", "Mary Ann Lee")
    assert not is_short_form("Moreau", "Alice Moreau")
    assert not is_short_form("Alice Moreau", "Alice")
    assert not is_short_form("Alice Moreau", "Alice Moreau")
    assert not is_short_form("Alicia", "Alice Moreau")


def test_the_speakers_nicknames_and_own_name_are_read_in_any_case() -> None:
    assert said("Hi! My name is Dana Whitfield, but everyone calls me Dee.") == [("Dana Whitfield", None),
                                                                              ("Dee", None)]
    assert said("I go by Dee at work.") == [("Dee", None)]
    assert said("my friends call me D.") == [("D", None)]
    assert said("Dee is what my sister calls me.") == [("Dee", None)]
    assert said("You can CALL ME Dee") == [("Dee", None)]


def test_call_me_back_or_on_monday_states_no_name() -> None:
    assert said("Call me back later.") == []
    assert said("call me Monday or Tomorrow") == []
    assert said("Please call me when you land.") == []


def test_an_introduction_counts_for_a_full_name_or_a_person_the_parser_read() -> None:
    assert said("I'm Dana Whitfield.") == [("Dana Whitfield", None)]
    assert said("I'm British.") == []
    assert said("I'm Dee, nice to meet you.", [NamedSpan("Dee", 4, 7, "PERSON")]) == [("Dee", None)]
    assert said("I'm British.", [NamedSpan("British", 4, 11, "NORP")]) == []


def test_someone_elses_nickname_names_the_name_before_it() -> None:
    assert said("My manager is Robert Lang, known as Bobby.") == [("Bobby", "Robert Lang")]
    assert said("Elizabeth (aka Liz) is here.") == [("Liz", "Elizabeth")]
    assert said("Jonathan goes by Jon.") == [("Jon", "Jonathan")]
    assert said("Elizabeth, also called Liz, is here.") == [("Liz", "Elizabeth")]
    assert said("Sam called Maya yesterday.") == []  # a call, not a name
    assert said("Priya called me Friday.") == []
    [bobby] = stated_aliases("My manager is Robert Lang, known as Bobby.")
    assert (bobby.start, bobby.end, bobby.subject_start) == (36, 41, 14)


def test_types_come_from_the_parser_and_the_rule_corrects_its_known_slip() -> None:
    assert parsed_entity_type("ORG", "I work at ", "Minho Foods") == "organization"
    assert parsed_entity_type("ORG", "its head office in ", "Bristol") == "place"
    assert parsed_entity_type("ORG", "I worked in ", "Acme Corp") == "organization"
    assert parsed_entity_type("PERSON", "I met ", "Maya") == "person"
    assert parsed_entity_type("FAC", "at the ", "Louvre") == "place"
    assert parsed_entity_type("ORG", "Maya moved to ", "York") == "place"
    assert parsed_entity_type("ORG", "I sent it to ", "Google") == "organization"
    assert parsed_entity_type("ORG", "My dog is called ", "Biscuit") == "animal"
    assert parsed_entity_type("PERSON", "Our new kitten is named ", "Miso") == "animal"
    assert parsed_entity_type("PERSON", "My dog loves walks. My sister is ", "Maya") == "person"
    assert guess_entity_type("I worked at ", "Minho Foods") == "organization"
    assert guess_entity_type("I moved to ", "Porto") == "place"
    assert guess_entity_type("I took an ", "Uber") == "thing"


def test_a_company_is_shortened_to_its_brand_but_a_name_of_words_stays_whole() -> None:
    assert brand("Northwind Labs") == "northwind" and brand("Acme Robotics Inc.") == "acme"
    assert brand("Acme Corp") == "acme" and brand("Minho Foods") == "minho"
    assert brand("Bank of America") == "bank of america" and brand("Labs") == "labs"


def test_the_verb_next_to_a_name_corrects_the_parsers_type() -> None:
    # whoever lives or works somewhere is a person, whatever label the small model gave the name
    assert parsed_entity_type("GPE", "", "Ottoline", " now lives in Bremen.") == "person"
    assert parsed_entity_type("ORG", "I think ", "Nnamdi", " works at Vantora.") == "person"
    assert parsed_entity_type("NORP", "", "Idris", " is a nurse at Orchid Health.") == "person"
    assert parsed_entity_type("GPE", "", "Solveig", " moved to Turku.") == "person"
    # a company keeps its type: its name says it is one, or the parser read it so before a move
    assert parsed_entity_type("ORG", "", "Sable Robotics", " works with us.") == "organization"
    assert parsed_entity_type("ORG", "", "Vantora", " moved its offices.") == "organization"
    # where someone lives is a place and where they work an employer
    assert parsed_entity_type("PERSON", "Idris has been living in ", "Hobart") == "place"
    assert parsed_entity_type("PERSON", "Idris works at ", "Emberline") == "organization"
    assert parsed_entity_type("FAC", "Rune is employed at ", "Tidewater Freight") == "organization"
    assert parsed_entity_type("FAC", "Rune works at ", "Heathrow Airport") == "place"
