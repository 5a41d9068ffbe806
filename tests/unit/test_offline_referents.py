"""What a sentence's pointing word stands for: a relative clause's noun, a pronoun's earlier object, a copula's
subject, a verb's purpose, a shared image."""

from __future__ import annotations

import pytest

from engram.adapters.offline import answers, referents, wording
from engram.adapters.spacy_engine import shared_engine


def _answer(question: str, text: str) -> str | None:
    reading = answers.read_question(question, shared_engine().doc(question))
    sent = next(iter(shared_engine().doc(text).sents))
    return wording.thing_in(reading, sent)


@pytest.mark.parametrize(("question", "text", "expected"), [
    # the object a relative pronoun stands for
    ("What did Amara help write that won a prize?", "The short film script that I helped write won a prize!",
     "short film script"),
    # "it" takes the first verb's object again; the people it was shared with are not what was shared
    ("What did Felix bake and bring to his book club?",
     "I baked lemon poppy seed bread and brought it to some friends at my book club.", "lemon poppy seed bread"),
    # the copula says what the question's noun is
    ("What was the uncle's present to Ines?", "This watch is really dear to me - a present from my uncle in my old town.", "watch"),
    # what the verb's object is for, hung on the verb by the parse
    ("What was Oskar's interview for?", "Busy week - had an interview on Monday for a museum guide job.",
     "museum guide job"),
    # the kind is said, the title named after it is the answer
    ("What book did Lior finish?", 'I finished a book that kept me up all night, it was called "Salt Roads".',
     "Salt Roads"),
])
def test_a_word_that_points_at_the_answer_gives_way_to_what_it_points_at(question: str, text: str,
                                                                       expected: str) -> None:
    assert _answer(question, text) == expected


def test_what_a_shared_photo_shows_answers_what_the_photo_is_of() -> None:
    text = "Spent the evening at home. [image: a photo of a shelf full of board games and puzzles]"
    assert _answer("What did Rhea share a photo of when talking about her evening?", text) == \
        "shelf full of board games and puzzles"
    assert referents.shown(shared_engine().doc("No picture here.")) is None


def test_a_verb_with_its_own_object_is_not_read_as_a_relative_clause() -> None:
    doc = shared_engine().doc("The friend who lent me a tent lives nearby.")
    lent = next(t for t in doc if t.lower_ == "lent")
    assert referents.relative_head(lent) is None


def test_a_kind_the_sentence_only_names_or_only_echoes_is_left_to_another_sentence() -> None:
    # the sentence says the kind without saying which one: the answer is elsewhere, not its nearest noun
    assert _answer("Which language is Mateo learning?", "Learning another language is hard, but the app helps.") \
        is None
    # a neighbour that says none of the question's words gives no instance of the kind either
    assert _answer("What instrument is Zara learning?", "Challenging but fun, always loved music.") is None
    # a kind the sentence does not say, and a verb of the question, still lead to the object
    assert _answer("What kind of meal did Dario cook?", "Last night I cooked a spicy lentil curry.") == \
        "spicy lentil curry"


def test_an_interjection_is_never_a_name() -> None:
    assert _answer("What pets does Ola have?", "Yep, Ola here, Yep!") is None


def test_how_it_was_described_is_read_two_sentences_on() -> None:
    reading = answers.read_question("How does Ana describe the retreat with Leo?",
                                    shared_engine().doc("How does Ana describe the retreat with Leo?"))
    doc = shared_engine().doc("Leo and I went on a retreat last spring. We walked and cooked every day. "
                              "It was a really calm and lovely experience.")
    assert wording.explanation(reading, next(iter(doc.sents))) == "calm and lovely"


def test_an_idiom_or_a_word_for_anyone_is_no_thing() -> None:
    assert _answer("What did Kemal make at the workshop?", "Honestly, I made a difference at the workshop.") is None
    assert _answer("What did Kemal meet at the fair?", "I met some people at the fair.") is None


def test_what_something_is_full_of_is_the_thing_it_holds() -> None:
    assert _answer("What is on Yusuf's fridge door?", "My fridge door is full of postcards and kids' drawings.") == \
        "postcards and kids' drawings"


def test_how_a_thing_was_described_is_what_is_said_of_that_thing() -> None:
    question = "How did Elif describe the food on her trip to Lyon?"
    reading = answers.read_question(question, shared_engine().doc(question))
    doc = shared_engine().doc("We drove down to Lyon and it was great! The food was unforgettable.")
    assert wording.explanation(reading, next(iter(doc.sents))) == "unforgettable"


def test_a_reason_said_before_so_answers_why_the_effect_after_it_happened() -> None:
    question = "Why did Ren mix cooking with travel in her blog?"
    reading = answers.read_question(question, shared_engine().doc(question))
    doc = shared_engine().doc("I'm crazy about food and new places, so mixing them lets me write about both.")
    assert wording.explanation(reading, next(iter(doc.sents))) == "I'm crazy about food and new places"


def test_a_name_asked_for_is_a_name_or_nothing() -> None:
    assert _answer("What is the name of Ayla's new kitten?", "I adopted a new kitten, her name is Biscuit.") == \
        "Biscuit"
    assert _answer("What is the name of Ayla's new kitten?", "Long time no chat!") is None


def test_a_kind_asked_of_a_photo_is_not_the_whole_photo() -> None:
    text = "It's a pie made with plums and honey. [image: a photo of a pie on a table]"
    assert _answer("What fruit is in the pie Noor shared a photo of?", text) != "pie on a table"


def test_the_questions_own_words_with_only_when_added_are_no_answer() -> None:
    assert _answer("What did Ivo knit a wool scarf collection of?", "I knitted a wool scarf collection last week.") \
        is None


def test_the_kind_asked_with_only_praise_added_names_no_one_of_it() -> None:
    assert _answer("What kind of cake did Sami bake for the party?", "I baked a delicious cake for the party!") is None
    assert _answer("What kind of cake did Sami bake for the party?", "I baked a carrot cake for the party!") == \
        "carrot cake"
