"""The answers the retrieval's best turns lean to when no turn holds enough of the question's words: a guess from
the asked person's own best turn, a list gathered over the person's turns, "Likely yes" to a supposition; the
person swapped, or a turn that replies to the listener, still answers "I don't know"."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from engram.adapters.offline import answers
from engram.adapters.offline.leaning import lists
from engram.adapters.spacy_engine import shared_engine
from engram.model.context import QueryContext
from engram.model.queries import Answer, ContextItem

SAID = datetime(2026, 10, 5, 14, 0, tzinfo=UTC)


def _answer(question: str, *turns: tuple[str, float]) -> Answer:
    items = [ContextItem(kind="event", id=f"e{n}", text=t, score=s, occurred_at=SAID) for n, (t, s) in enumerate(turns)]
    return answers.answer(QueryContext(query_id="q", world_id="w", question=question, items=items))


@pytest.mark.parametrize(("question", "listing"), [
    ("What hobbies does Priya enjoy?", True),
    ("Which cities has Tomas lived in?", True),
    ("What kind of plants does Priya grow?", True),
    ("What are the names of Tomas's cousins?", True),
    ("What hobby does Priya enjoy most?", False),
    ("What did Tomas bake on Sunday?", False),
    ("What is Priya's favorite plant?", False),
])
def test_a_question_asks_for_a_list_by_a_plural_kind_or_names(question: str, listing: bool) -> None:
    assert lists(shared_engine().doc(question)) is listing


def test_the_asked_persons_best_turn_answers_in_other_words_with_low_confidence() -> None:
    found = _answer("What instrument did Priya choose at the community music school?",
                    ("Priya: At the music school I finally went with the cello.", 1.0))

    assert "cello" in found.content.lower()
    assert found.confidence < 0.45


@pytest.mark.parametrize("turn", [
    "Tomas: At the music school I finally went with the cello.",  # someone else's story
    "Priya: At the music school you finally went with the cello!",  # the listener's news
])
def test_a_best_turn_by_someone_else_or_replying_to_the_listener_answers_nothing(turn: str) -> None:
    found = _answer("What instrument did Priya choose at the community music school?", (turn, 1.0))

    assert found.content == answers.UNKNOWN


def test_a_list_is_gathered_over_the_persons_turns_and_not_the_other_speakers() -> None:
    found = _answer("What outdoor sports has Priya picked up?",
                    ("Priya: Last spring I got into rock climbing, such a great outdoor sport.", 1.0),
                    ("Tomas: Fencing became my second sport.", 0.9),
                    ("Priya: Kayaking became my second sport.", 0.8))

    said = found.content.lower()
    assert "climbing" in said and "kayaking" in said
    assert "fencing" not in said


@pytest.mark.parametrize(("question", "turn", "expected"), [
    ("Would Priya likely enjoy a jazz concert?", "Priya: Music nights downtown are my favourite thing.",
     "Likely yes"),
    ("Would Priya likely enjoy a jazz concert?", "Tomas: Music nights downtown are my favourite thing.",
     answers.UNKNOWN),
    ("Did Priya go to a jazz concert?", "Priya: Music nights downtown are my favourite thing.", answers.UNKNOWN),
])
def test_a_supposition_no_turn_states_leans_to_yes_only_for_the_person_asked(question: str, turn: str,
                                                                            expected: str) -> None:
    found = _answer(question, (turn, 1.0))

    assert found.content == expected
    assert found.confidence <= 0.1
