"""`engram bench latency`'s question list without `--dataset`: varied, a quarter naming an entity."""

from __future__ import annotations

import re

from engram.bench.latency import NAMING, OTHERS, TOPICS, by_question, timed_queries


def test_the_default_questions_are_distinct_and_a_quarter_name_a_different_entity() -> None:
    queries = timed_queries()
    assert len(queries) >= 20 and len(set(queries)) == len(queries)
    named = [re.search(r"Person\d+", q) for q in queries]
    people = [m.group() for m in named if m]
    assert len(people) == len(queries) // 4 and len(set(people)) == len(people)
    assert [bool(m) for m in named] == [i % 4 == 0 for i in range(len(queries))]
    assert {t for t in TOPICS for q in queries if t in q} == set(TOPICS)


def test_a_given_question_list_is_kept_with_every_fourth_naming_an_entity() -> None:
    queries = timed_queries(["When did Caroline go to the support group?", "What is Melanie's hobby?"])
    assert queries[1] == "What is Melanie's hobby?"
    assert re.match(r"What did Person\d+ say about it\? When did Caroline go", queries[0])


def test_the_timed_searches_are_split_by_whether_the_search_found_an_entity_in_the_question() -> None:
    queries = ["What did Person60 say about it? Why?", "Why?", "How?"]
    samples = [30.0, 10.0, 12.0, 34.0, 11.0, 13.0, 32.0]  # the searches cycle through the questions
    split = by_question(samples, queries, naming={queries[0]})
    assert split[NAMING] == {"p50": 32.0, "p95": 32.0, "queries": 3.0}
    assert split[OTHERS] == {"p50": 11.5, "p95": 12.0, "queries": 4.0}
    assert list(by_question(samples[1:3], queries[1:], naming=set())) == [OTHERS]  # an empty group is left out
