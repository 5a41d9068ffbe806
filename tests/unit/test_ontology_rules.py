"""The world's ontology for facts: a free predicate is recorded under the ontology's when it names it."""

from __future__ import annotations

from engram.model.memories import OntologyPredicate
from engram.rules.ontology import PredicateMap, normalized

ONTOLOGY = PredicateMap([OntologyPredicate(concept="lives_in", synonyms=["resides_in", "Home City"]),
                         OntologyPredicate(concept="employer", synonyms=["works_at"]),
                         OntologyPredicate(concept="manager", synonyms=["works_at"])])


def test_a_predicate_is_one_name_whatever_its_case_spacing_or_camel_case() -> None:
    assert normalized("livesIn") == normalized("Lives in") == normalized("lives_in ") == "lives_in"


def test_a_declared_synonym_or_the_ontologys_own_name_in_other_spelling_maps_to_it() -> None:
    assert [ONTOLOGY(p) for p in ("resides_in", "home_city", "LivesIn", "lives_in")] == ["lives_in"] * 4


def test_a_synonym_two_predicates_declare_stays_with_the_first_and_a_name_beats_a_synonym() -> None:
    assert ONTOLOGY("works_at") == "employer"
    assert PredicateMap([OntologyPredicate(concept="a", synonyms=["b"]), OntologyPredicate(concept="b")])("b") == "b"


def test_a_predicate_the_ontology_has_no_word_for_stays_free() -> None:
    assert ONTOLOGY("travels_with") == "travels_with"
    assert PredicateMap([])("lives_in") == "lives_in"
