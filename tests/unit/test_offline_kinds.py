"""The values question kinds ask for that no named entity gives: common-noun places, people by their relation,
numbers and counts, frequencies; and the questions about something else that stay "I don't know"."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from engram.adapters.offline import answers
from engram.adapters.offline.answers import UNKNOWN
from engram.model.context import QueryContext
from engram.model.queries import ContextItem

SAID = datetime(2026, 10, 5, 14, 0, tzinfo=UTC)


def _context(question: str, *items: ContextItem) -> QueryContext:
    return QueryContext(query_id="q", world_id="w", question=question, items=list(items))


def _turn(event_id: str, text: str, at: datetime = SAID, score: float = 0.5) -> ContextItem:
    return ContextItem(kind="event", id=event_id, text=text, score=score, occurred_at=at)


@pytest.mark.parametrize(("question", "turn", "value"), [
    ("Where did Priya go camping?", "Priya: We went camping in the mountains last month, so peaceful.", "mountains"),
    ("Where was Omar's wedding photo taken?", "Omar: The wedding photo was taken near my hometown.",
     "near hometown"),
    ("Where is Lena planning to open her bakery?", "Lena: I'm planning to open my bakery in a small town.",
     "small town"),
    ("Who taught Priya to knit?", "Priya: My grandmother taught me to knit when I was six.", "grandmother"),
    ("Who did Omar volunteer with at the food drive?",
     "Omar: I volunteered with a local charity at the food drive, it was great.", "local charity"),
    ("Who did Omar go climbing with?", "Omar: Hey Sarah, I went climbing with a colleague on Sunday!",
     "colleague"),  # Sarah is spoken to, not whom the turn tells of
    ("How many guests came to Lena's dinner party?", "Lena: The dinner party was great, 12 guests came!", "12"),
    ("How often does Priya swim at the pool?", "Priya: I swim at the pool three times a week, it keeps me sane.",
     "three times a week"),
    ("How long does Omar hold a plank?", "Omar: I usually hold a plank for 90 seconds, it burns.", "90 seconds"),
])
def test_a_kind_is_answered_by_a_value_no_named_entity_gives(question: str, turn: str, value: str) -> None:
    answer = answers.answer(_context(question, _turn("e1", turn)))

    assert answer.content == value
    assert answer.confidence < 0.75  # read from text: never "high"


@pytest.mark.parametrize(("question", "turn"), [
    # the frequency is said of the gym, not the pool
    ("How often does Priya swim at the pool?", "Priya: I go to the gym three times a week with my kids, I swim too."),
    # the charity helped at the food drive, not at the animal shelter
    ("Who did Omar volunteer with at the animal shelter?",
     "Omar: I volunteered with a local charity at the food drive, it was great."),
    # a relation that is no argument of what is asked
    ("Who taught Priya to knit?", "Priya: I learned to knit when I was six. My kids love the scarves."),
])
def test_a_value_said_of_something_else_is_no_answer(question: str, turn: str) -> None:
    assert answers.answer(_context(question, _turn("e1", turn))).content == UNKNOWN


def test_a_count_of_occasions_is_the_days_the_person_told_of_it_and_stays_low() -> None:
    turns = [_turn(f"e{n}", text, SAID + timedelta(days=10 * n), score=0.3) for n, text in enumerate([
        "Lena: Ugh, my manuscript got rejected by a publisher today.",
        "Lena: Another publisher rejected my manuscript, I'm gutted.",
        "Omar: My manuscript was rejected too, long ago.",
    ])]

    answer = answers.answer(_context("How many times has Lena's manuscript been rejected?", *turns))

    assert answer.content == "twice"
    assert answer.confidence <= 0.45
    assert {s.id for s in answer.sources} == {"e0", "e1"}


def test_the_highest_ordinal_of_the_counted_thing_is_a_count() -> None:
    turns = [_turn("e1", "Omar: I won my first chess tournament!", score=0.3),
             _turn("e2", "Omar: Guess what, I won my third chess tournament yesterday.", SAID + timedelta(days=30),
                   score=0.3)]

    answer = answers.answer(_context("How many tournaments has Omar won?", *turns))

    assert answer.content == "three"
    assert answer.confidence <= 0.45


def test_a_number_of_something_else_does_not_count_times() -> None:
    turns = [_turn("e1", "Omar: I walked my two dogs by the lake today.", score=0.3)]

    assert answers.answer(_context("How many times has Omar walked by the lake?", *turns)).content == UNKNOWN


def test_one_occasion_is_no_count() -> None:
    turns = [_turn("e1", "Lena: Ugh, my manuscript got rejected by a publisher today.", score=0.3)]

    assert answers.answer(_context("How many times has Lena's manuscript been rejected?", *turns)).content == UNKNOWN


def test_a_count_of_someone_elses_turns_is_no_answer() -> None:
    turns = [_turn(f"e{n}", "Omar: My manuscript got rejected again.", SAID + timedelta(days=n), score=0.3)
             for n in range(3)]

    assert answers.answer(_context("How many times has Lena's manuscript been rejected?", *turns)).content == UNKNOWN


def test_a_frequency_in_a_reply_counts_the_words_of_the_question_it_answers() -> None:
    question = "How often does Priya take her kids to the park?"
    reply = "Priya: We go a few times a week, they love it."
    asked = ContextItem(kind="event", id="e1", text=reply, score=0.5, occurred_at=SAID,
                        replying_to="Omar: Do you take the kids to the park often?")

    assert answers.answer(_context(question, _turn("e1", reply))).content == UNKNOWN  # "park" is never said
    assert answers.answer(_context(question, asked)).content == "a few times a week"
