"""A turn read with the question it replies to: the offline model counts the question's words said in the pair,
takes the value from the reply, and never lets the other speaker's turn answer for the person asked about."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from engram.adapters.offline import answers
from engram.model.context import QueryContext
from engram.model.queries import ContextItem

SAID = datetime(2023, 5, 8, 14, 0, tzinfo=UTC)


def _answer(question: str, text: str, replying_to: str | None) -> tuple[str, float]:
    item = ContextItem(kind="event", id="D1:4", text=text, score=0.5, occurred_at=SAID, replying_to=replying_to)
    found = answers.answer(QueryContext(query_id="q", world_id="w", question=question, items=[item]))
    return found.content, found.confidence


@pytest.mark.parametrize(("question", "reply", "asked", "value"), [
    ("How long have Mel and her husband been married?", "Melanie: 5 years already! Time flies.",
     "Caroline: Wow, what an amazing family pic! How long have you been married?", "5 years"),
    ("Which book does Caroline recommend most?", "Caroline: I loved \"Becoming Nicole\" by Amy Ellis Nutt.",
     "Melanie: Books have such power! Which book would you recommend most?", "Becoming Nicole"),
    # A reply that opens with thanks says its value in its second sentence.
    ("Which team did John sign with?", "John: Thanks, man! The Minnesota Wolves, so pumped.",
     "Tim: Congrats! Which team did you sign with?", "Minnesota Wolves"),
])
def test_a_reply_answers_the_question_it_replies_to(question: str, reply: str, asked: str, value: str) -> None:
    alone, _ = _answer(question, reply, None)
    content, confidence = _answer(question, reply, asked)

    assert alone == answers.UNKNOWN  # the reply alone does not say what its value is of
    assert value in content
    assert confidence < 0.75  # read from a pair of turns: never labelled high


def test_a_reply_said_by_someone_else_does_not_answer_for_the_person_asked_about() -> None:
    content, _ = _answer("How long has Caroline been married?", "Melanie: 5 years already! Time flies.",
                         "Caroline: Wow, what an amazing family pic! How long have you been married?")
    assert content == answers.UNKNOWN


def test_a_reply_to_news_does_not_borrow_the_news_words() -> None:
    content, _ = _answer("How long has Melanie been married?", "Melanie: 5 years already! Time flies.",
                         "Caroline: My sister has been married for ages.")
    assert content == answers.UNKNOWN


def test_yes_or_no_is_what_a_reply_itself_says_not_the_question_before_it() -> None:
    content, _ = _answer("Is Oscar Melanie's pet?",
                         "Melanie: They're good, thanks! We got another cat named Bailey. Can you show me Oscar?",
                         "Caroline: And yup, I do- Oscar, my guinea pig. How are your pets?")
    assert content == answers.UNKNOWN
