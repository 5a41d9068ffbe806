"""The keyword query syntax compiled to tsquery text for the PostgreSQL full-text index."""

from __future__ import annotations

import pytest

from engram.rules.tsquery import compile_query


def _match(query: str) -> str | None:
    compiled = compile_query(query)
    return None if compiled is None else compiled.match


@pytest.mark.parametrize(("query", "match"), [
    ("hiking", "'hiking':AB"),
    ("Lisbon dog", "('Lisbon':AB | 'dog':AB)"),
    ("Lisbon OR dog", "('Lisbon':AB | 'dog':AB)"),
    ("hiking AND dog", "('hiking':AB & 'dog':AB)"),
    ("hiking AND NOT mountains", "('hiking':AB & !'mountains':AB)"),
    ("a b -c", "(('a':AB | 'b':AB) & !'c':AB)"),
    ("+a b", "'a':AB"),
    ("hik*", "'hik':*AB"),
    ("speaker:bob", "'bob':B"),
    ("kind:entity conversation:c1", "('entity':C | 'c1':D)"),
    ("speaker:(bob OR dana)", "('bob':B | 'dana':B)"),
    ("NOT (a OR b) c", "('c':AB & !('a':AB | 'b':AB))"),
])
def test_clauses_combine_as_lucenes_query_parser_combines_them(query: str, match: str) -> None:
    assert _match(query) == match


def test_a_phrase_matches_inside_one_field_so_it_never_spans_text_and_speaker() -> None:
    assert _match('"loves hiking"') == "('loves hiking':A | 'loves hiking':B)"
    assert _match('text:"loves hiking"') == "'loves hiking':A"


def test_user_text_is_always_a_quoted_literal_never_tsquery_syntax() -> None:
    assert _match("o'clock") == "'o''clock':AB"
    assert _match("a:b & !c | d <-> e") is not None
    for operand in (_match("x') | ('y") or "").split(" | "):
        assert operand.count("'") % 2 == 0


def test_excluded_words_neither_rank_nor_highlight() -> None:
    compiled = compile_query("hiking -mountains")
    assert compiled is not None and compiled.positive == "'hiking':AB"


@pytest.mark.parametrize("query", ["", "((", "NOT nothing", "-only -exclusions"])
def test_a_query_that_can_match_nothing_compiles_to_none(query: str) -> None:
    assert compile_query(query) is None


def test_malformed_syntax_degrades_to_the_plain_words() -> None:
    assert _match('"unbalanced lisbon') == "('unbalanced':AB | 'lisbon':AB)"
    assert _match("a) b") == "('a':AB | 'b':AB)"
