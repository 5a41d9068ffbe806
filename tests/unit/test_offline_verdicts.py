"""Yes-or-no questions answered by the offline model: from the turn about whom the question names, "No" when it
says it negated, "Likely ..." when the question only supposes, "I don't know" when the turn is someone else's."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from engram.adapters.offline import answers
from engram.model.context import QueryContext
from engram.model.queries import ContextItem

SAID = datetime(2026, 10, 5, 14, 0, tzinfo=UTC)


def _ask(question: str, *turns: str) -> str:
    items = [ContextItem(kind="event", id=f"e{n}", text=t, score=0.5, occurred_at=SAID) for n, t in enumerate(turns)]
    reply = answers.answer(QueryContext(query_id="q", world_id="w", question=question, items=items))
    assert reply.confidence < 0.75  # a verdict read from one turn is never "high"
    return reply.content


@pytest.mark.parametrize(("question", "turn", "verdict"), [
    ("Did Dana adopt a dog?", "Dana: I adopted a dog from the shelter last month.", "Yes"),
    ("Did Dana finish the marathon?", "Dana: I did not finish the marathon, my knee gave out.", "No"),
    ("Would Dana enjoy a cooking class?", "Dana: I enjoy cooking so much, I take a class every week.", "Likely yes"),
    ("Is Tomas still learning the violin?", "Dana: Tomas is still learning the violin, he practises daily.", "Yes"),
])
def test_a_yes_or_no_question_is_answered_yes_or_no(question: str, turn: str, verdict: str) -> None:
    assert _ask(question, turn) == verdict


@pytest.mark.parametrize(("question", "turn"), [
    ("Did Priya adopt a dog?", "Dana: I adopted a dog from the shelter last month."),  # someone else's news
    ("Did Dana adopt a dog?", "Dana: I bought new running shoes yesterday."),  # nothing about it
])
def test_a_yes_or_no_question_no_turn_about_its_person_answers_is_not_known(question: str, turn: str) -> None:
    assert _ask(question, turn).startswith("I don't know")


def test_a_question_offering_alternatives_is_not_answered_yes_or_no() -> None:
    assert _ask("Does Dana live near a beach or the mountains?", "Dana: I live near the beach.") not in (
        "Yes", "No", "Likely yes", "Likely no")



@pytest.mark.parametrize(("score", "verdict"), [(0.9, "Likely yes"), (0.2, None)])
def test_a_yes_or_no_question_is_answered_by_a_strong_turn_in_other_words(score: float, verdict: str | None) -> None:
    turn = ContextItem(kind="event", id="e1", text="Dana: Live jazz is my favourite thing in the world.",
                       score=score, occurred_at=SAID)
    reply = answers.answer(QueryContext(query_id="q", world_id="w", question="Would Dana enjoy a jazz concert?",
                                        items=[turn]))
    assert reply.content == verdict if verdict else reply.content.startswith("I don't know")
