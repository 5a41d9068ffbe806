"""`engram bench latency`'s question list without `--dataset`: varied, a quarter naming an entity."""

from __future__ import annotations

import re

from engram.bench.latency import TOPICS, timed_queries


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
