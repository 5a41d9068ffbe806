"""Which words of a chosen sentence answer: the verb's whole object, titles, reasons and feelings, never a filler."""

from __future__ import annotations

import pytest

from engram.adapters.offline import answers, wording
from engram.adapters.spacy_engine import shared_engine
from engram.rules.text import stem


def _answer(question: str, sentence: str) -> str | None:
    reading = answers.read_question(question, shared_engine().doc(question))
    sent = next(iter(shared_engine().doc(sentence).sents))
    return wording.explanation(reading, sent) if reading.explains else wording.thing_in(reading, sent)


@pytest.mark.parametrize(("question", "sentence", "expected"), [
    ("What does Priya store in the tin?", "I store old letters, ticket stubs, and tiny shells in it.",
     "old letters, ticket stubs, and tiny shells"),
    ("What did Omar cook for dinner?", "Last night I cooked a soup of red lentils and fresh coriander.",
     "soup of red lentils and fresh coriander"),
    ("What did Lena see on her hike?", "We saw a family of wild goats.", "family of wild goats"),
    ("What is Ben learning?", "Lately I've been learning the cello in the evenings.", "cello"),
])
def test_a_what_question_is_answered_by_the_whole_object_of_its_verb(question: str, sentence: str,
                                                                     expected: str) -> None:
    assert _answer(question, sentence) == expected


def test_the_speakers_praise_and_the_determiner_are_not_part_of_the_thing() -> None:
    assert _answer("What game is Kofi playing?", "I'm playing this awesome pirate strategy game now.") == \
        "pirate strategy game"


def test_a_date_or_a_pronoun_after_the_object_is_left_out() -> None:
    assert _answer("What did Ines start?", "I started painting watercolour birds last month.") == \
        "painting watercolour birds"
    assert _answer("What does Ines keep in the drawer?", "I keep spare keys in it.") == "spare keys"


def test_the_kind_the_question_names_comes_with_what_the_sentence_says_of_it() -> None:
    assert _answer("What club did Ravi join?", "I joined a vintage cycling club on Sunday.") == "vintage cycling club"
    assert _answer("What kind of offer did Ravi get?", "I got an offer from a small robotics startup!") == \
        "offer from a small robotics startup"


def test_a_filler_or_a_pronoun_is_never_the_answer() -> None:
    assert _answer("What did Sara get?", "Yep, I got it!") is None
    assert _answer("What did Sara get?", "Sure thing, I got a lot of stuff.") is None


def test_several_things_asked_for_are_the_conjoined_ones() -> None:
    assert _answer("What instruments does Mia play?", "I play the oboe and the harp.") == "oboe and the harp"


def test_a_why_question_is_answered_by_the_because_or_purpose_clause_without_the_speakers_pronouns() -> None:
    assert _answer("Why did Tom sell his car?", "I sold my car because the repairs cost too much.") == \
        "the repairs cost too much"
    assert _answer("Why did Tom move to Leeds?", "I moved to Leeds to be closer to my sister.") == \
        "to be closer to sister"


def test_a_how_did_they_feel_question_is_answered_by_the_adjectives() -> None:
    assert _answer("How did Ada feel about the concert?", "Honestly the concert left me thrilled and exhausted.") \
        == "thrilled and exhausted"


def test_a_how_was_it_question_is_answered_by_what_the_sentence_predicates_of_it() -> None:
    assert _answer("How was Ada's trip to Oslo?", "The trip was calm and restorative.") == "calm and restorative"


def test_a_how_did_they_do_it_question_is_answered_by_the_sentence_words_not_its_adjectives() -> None:
    assert _answer("How did Ada celebrate her promotion?", "I celebrated by baking a huge chocolate cake.") == \
        "by baking a huge chocolate cake"


def test_a_light_verb_of_the_question_still_leads_to_its_object() -> None:
    assert _answer("What did Jo's neighbours give her?", "They gave me a jar of wild honey.") == "jar of wild honey"


def test_a_kind_the_sentence_does_not_say_is_answered_by_the_name_it_gives() -> None:
    assert _answer("Which painter does Eli admire?", "Hey Sam, I'm kind of obsessed with Frida Kahlo.") == \
        "Frida Kahlo"
    assert _answer("What is Eli's favorite board game?", "Honestly it's Ticket to Ride, no question!") == "Ticket to Ride"


def test_the_kind_asked_for_is_read_from_the_words_after_which_or_favorite() -> None:
    def kind(question: str) -> frozenset[str]:
        return wording.kind_asked(shared_engine().doc(question))

    assert kind("Which TV series does Eli watch?") == {"tv", stem("series")}
    assert kind("What kind of deal did Eli get?") == {"deal"}
    assert kind("What is Eli's favorite movie?") == {stem("movie")}
    assert kind("What did Eli buy?") == frozenset()


def test_a_prepositional_phrase_of_the_speakers_own_or_of_the_question_is_left_out() -> None:
    assert _answer("What activity did Noor take up with her cousins?", "I took up rock climbing with my cousins.") == \
        "rock climbing"
    assert _answer("What did Noor add to the stew for flavor?", "I added smoked paprika for a deeper flavor.") == \
        "smoked paprika"


def test_a_verb_the_question_says_leads_on_to_what_is_done() -> None:
    assert _answer("What class did Noor start doing?", "I started doing Pilates at the gym.") == "Pilates"


def test_a_noun_the_parse_hangs_elsewhere_is_still_read_after_the_verb() -> None:
    assert _answer("What did Noor build for the school?", "I built this cedar reading bench to remind kids that "
                   "stories are the key to everything.") == "cedar reading bench"


def test_a_question_word_that_is_not_a_thing_leads_to_what_its_preposition_says() -> None:
    assert _answer("What is Noor getting ready for?", "I'm getting ready for a bake sale at the library.") == \
        "bake sale at the library"


def test_a_reason_or_a_feeling_in_the_next_sentence_answers_when_the_first_says_only_when() -> None:
    reading = answers.read_question("Why did Noor join the choir?", shared_engine().doc("Why did Noor join the choir?"))
    first = next(iter(shared_engine().doc("Just yesterday I joined the choir. I wanted to meet people who love "
                                          "singing.").sents))
    assert wording.explanation(reading, first) == "to meet people who love singing"

    reading = answers.read_question("How did Noor describe the retreat?",
                                    shared_engine().doc("How did Noor describe the retreat?"))
    first = next(iter(shared_engine().doc("We had a blast at the retreat. It was a quiet and healing place.").sents))
    assert wording.explanation(reading, first) == "quiet and healing"


def test_a_how_did_they_manage_question_is_answered_by_the_by_phrase() -> None:
    assert _answer("How did Noor get over her fear of heights?", "I got over it by climbing a little higher each "
                   "week with a coach.") == "by climbing a little higher each week with a coach"


def test_what_someone_realized_is_the_clause_they_realized() -> None:
    assert _answer("What did Noor realize after the marathon?", "After the marathon I realized that rest days "
                   "matter.") == "rest days matter"


def test_a_phrase_adding_only_size_to_the_questions_noun_is_no_answer() -> None:
    assert _answer("What villain is Noor a fan of?", "Honestly I'm a huge fan!") is None
