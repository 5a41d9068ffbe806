"""The span picker of the offline answers: which sentence of a turn answers, and which of its words."""

from __future__ import annotations

from engram.adapters.offline import answers, spans
from engram.adapters.spacy_engine import shared_engine


def _reading(question: str) -> answers.Reading:
    return answers.read_question(question, shared_engine().doc(question))


def _sents(text: str) -> list:  # type: ignore[type-arg]
    return list(shared_engine().doc(text).sents)


def test_the_sentence_holding_the_question_terms_ranks_first_and_questions_are_left_out() -> None:
    reading = _reading("What did Dana bake for the party?")
    ranked = spans.ranked_sentences(reading, _sents(
        "We threw a party for Sam on Saturday. I baked a lemon cake with blueberries. Did you bake anything?"))

    assert [s.text for s in ranked] == ["I baked a lemon cake with blueberries.",
                                        "We threw a party for Sam on Saturday."]


def test_a_sentence_next_to_the_topic_sentence_is_kept_and_unrelated_ones_are_not() -> None:
    reading = _reading("Why did Dana move to Lisbon?")
    ranked = spans.ranked_sentences(reading, _sents(
        "Work has been busy. I moved to Lisbon in March. The light there is perfect for painting. "
        "Anyway, my cat is fine. She sleeps all day."))

    assert [s.text for s in ranked][:2] == ["I moved to Lisbon in March.", "The light there is perfect for painting."]
    assert all("cat" not in s.text and "sleeps" not in s.text for s in ranked)


def test_a_why_question_is_answered_by_the_sentence_words_less_the_question_and_dates() -> None:
    reading = _reading("Why did Dana move to Lisbon?")
    first, second = spans.ranked_sentences(reading, _sents(
        "I moved to Lisbon in March. The light there is perfect for painting."))[:2]

    assert reading.explains
    assert spans.residue(reading, first) is None  # only the question and its date: no reason in it
    assert spans.residue(reading, second) == "light is perfect for painting"


def test_a_reason_in_the_next_sentence_answers_a_why_question() -> None:
    context = answers.QueryContext(query_id="q", world_id="w", question="Why did Dana move to Lisbon?", items=[
        answers.ContextItem(kind="event", id="e1", score=0.5, text="Dana: I moved to Lisbon in March. "
                            "The light there is perfect for painting.")])

    assert answers.answer(context).content == "light is perfect for painting"


def test_only_why_and_how_questions_explain() -> None:
    assert spans.explains("Why did she leave?") and spans.explains("how does John feel about surfing?")
    assert not spans.explains("What did she leave behind?") and not spans.explains("")
