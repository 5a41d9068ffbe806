"""Which retrieved turns the offline model reads first: the words' cover of the question next to the retrieval's
own score; a when-question read from its person's strong turn on few of its words."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from engram.adapters.offline import answers
from engram.model.context import QueryContext
from engram.model.queries import ContextItem

SAID = datetime(2026, 10, 5, 14, 0, tzinfo=UTC)  # a Monday


def _scored(question: str, *turns: tuple[str, float]) -> str:
    items = [ContextItem(kind="event", id=f"e{n}", text=t, score=s, occurred_at=SAID) for n, (t, s) in enumerate(turns)]
    return answers.answer(QueryContext(query_id="q", world_id="w", question=question, items=items)).content


def test_the_turn_the_retrieval_ranks_far_higher_is_read_before_one_with_a_few_more_of_the_words() -> None:
    question = "What did Dana cook for the neighbourhood garden picnic?"
    weak = ("Dana: Everyone cooked at the neighbourhood garden picnic and the music was loud.", 0.05)
    strong = ("Dana: I will cook a lemon risotto for the picnic.", 0.9)

    assert "lemon risotto" in _scored(question, weak, strong)


@pytest.mark.parametrize(("score", "known"), [(0.9, True), (0.3, False)])
def test_a_when_question_is_answered_by_a_strong_turn_of_its_person_on_few_of_its_words(score: float,
                                                                                      known: bool) -> None:
    said = _scored("When did Dana visit the science museum?",
                   ("Dana: The museum trip yesterday was so much fun!", score))
    assert (said == "4 October 2026") is known
