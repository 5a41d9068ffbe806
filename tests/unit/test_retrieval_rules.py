"""The arithmetic and text rules retrieval ranks with: fusion, recency decay, overlap, content terms,
and the keyword query syntax helpers."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engram.rules.keyword_query import negations_as_minus, plain_terms, split_prefixes
from engram.rules.relevance import jaccard, recency, rrf
from engram.rules.text import content_terms, stem

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)


# ---------------------------------------------------------------- reciprocal rank fusion
def test_fusion_sums_weight_over_k_plus_rank_across_brains() -> None:
    fused = rrf({"keyword": ["a", "b"], "semantic": ["b", "c"]}, {"keyword": 1.0, "semantic": 0.5}, k=60)

    assert fused["a"] == pytest.approx(1.0 / 61)
    assert fused["b"] == pytest.approx(1.0 / 62 + 0.5 / 61)
    assert fused["c"] == pytest.approx(0.5 / 62)


def test_a_document_found_by_two_brains_beats_one_found_by_one() -> None:
    fused = rrf({"keyword": ["solo", "both"], "semantic": ["both"]}, {}, k=60)
    assert fused["both"] > fused["solo"]


def test_a_brain_without_a_weight_counts_once() -> None:
    assert rrf({"graph": ["x"]}, {}, k=10) == {"x": pytest.approx(1 / 11)}


def test_fusing_nothing_gives_nothing() -> None:
    assert rrf({}, {"keyword": 1.0}, k=60) == {}
    assert rrf({"keyword": []}, {"keyword": 1.0}, k=60) == {}


@given(st.lists(st.text(min_size=1, max_size=3), unique=True, min_size=2, max_size=20), st.integers(1, 100))
def test_within_one_brain_a_higher_rank_scores_higher(ids: list[str], k: int) -> None:
    fused = rrf({"keyword": ids}, {"keyword": 1.0}, k=k)
    scores = [fused[i] for i in ids]
    assert scores == sorted(scores, reverse=True) and len(set(scores)) == len(scores)


# ---------------------------------------------------------------- recency decay
def test_recency_is_one_now_and_halves_every_half_life() -> None:
    assert recency(NOW, NOW, 30) == 1.0
    assert recency(NOW - timedelta(days=30), NOW, 30) == pytest.approx(0.5)
    assert recency(NOW - timedelta(days=60), NOW, 30) == pytest.approx(0.25)
    assert recency(NOW - timedelta(days=90), NOW, 90) == pytest.approx(0.5)


def test_an_unknown_time_counts_as_old() -> None:
    assert recency(None, NOW, 30) == 0.0


def test_a_future_time_counts_as_now() -> None:
    assert recency(NOW + timedelta(days=3), NOW, 30) == 1.0


@given(st.timedeltas(min_value=timedelta(0), max_value=timedelta(days=20_000)),
       st.timedeltas(min_value=timedelta(0), max_value=timedelta(days=100)),
       st.floats(min_value=0.5, max_value=1000))
def test_recency_is_in_zero_one_and_never_grows_with_age(age: timedelta, more: timedelta, half_life: float) -> None:
    younger = recency(NOW - age, NOW, half_life)
    older = recency(NOW - age - more, NOW, half_life)
    assert 0.0 <= older <= younger <= 1.0


# ---------------------------------------------------------------- overlap
def test_jaccard_is_shared_over_all() -> None:
    assert jaccard(["a", "b"], ["b", "c"]) == pytest.approx(1 / 3)
    assert jaccard(["a"], ["a", "a"]) == 1.0
    assert jaccard([], ["a"]) == 0.0 and jaccard([], []) == 0.0


# ---------------------------------------------------------------- content terms
@pytest.mark.parametrize("forms", [
    ("hike", "hikes", "hiked", "hiking"),
    ("live", "lives", "lived", "living"),
    ("city", "cities"),
    ("dana", "dana's"),
    ("james", "james's"),
])
def test_inflections_and_possessives_stem_alike(forms: tuple[str, ...]) -> None:
    assert len({stem(f) for f in forms}) == 1


def test_short_words_are_left_alone() -> None:
    assert [stem(w) for w in ("is", "bus", "red", "go")] == ["is", "bus", "red", "go"]


def test_content_terms_drop_stopwords_and_case_and_match_across_forms() -> None:
    question = content_terms("Where did Dana go hiking?")
    assert "where" not in question and "did" not in question
    assert content_terms("Dana hikes every weekend") & question == {"dana", stem("hiking")}
    assert content_terms("What is Dana's job?") & content_terms("Dana works as a nurse") == {"dana"}


def test_content_terms_of_nothing_meaningful_are_empty() -> None:
    assert content_terms("") == set()
    assert content_terms("What is it that you do?") == set()


# ---------------------------------------------------------------- keyword query syntax
def test_prefixes_are_split_out_lowercased() -> None:
    assert split_prefixes('Hik* "Dana Lee" tea') == ('"Dana Lee" tea', ["hik"])
    assert split_prefixes("tea") == ("tea", [])


def test_a_star_inside_a_field_or_phrase_or_after_one_letter_is_not_a_prefix() -> None:
    assert split_prefixes("speaker:dan*")[1] == []
    assert split_prefixes("a* tea")[1] == []


def test_negations_become_minus_terms() -> None:
    assert negations_as_minus("coffee AND NOT tea") == "coffee -tea"
    assert negations_as_minus("coffee NOT tea") == "coffee -tea"
    assert negations_as_minus("NOT tea") == "-tea"
    assert negations_as_minus("coffee AND tea") == "coffee AND tea"


def test_plain_terms_strip_every_operator_and_special_character() -> None:
    assert plain_terms('(coffee OR "tea") AND NOT speaker:dana hik* -x') == "coffee tea speaker dana hik x"
    assert plain_terms('"unbalanced (query') == "unbalanced query"


@given(st.text(max_size=120))
def test_plain_terms_leave_no_syntax_behind(query: str) -> None:
    terms = plain_terms(query)
    assert not set(terms) & set("\"'()[]{}:^~*+-!\\/")
    assert not {"AND", "OR", "NOT"} & set(terms.split())
