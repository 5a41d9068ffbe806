"""The offline model's answers: the value the question asks for, "I don't know" when memory holds none, and a
confidence that follows what the answer rests on."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from engram.adapters.offline import answers
from engram.adapters.offline.answers import UNKNOWN
from engram.adapters.offline.llm import OfflineLLM
from engram.model.context import QueryContext
from engram.model.queries import ContextItem
from engram.ports import KnownFact
from engram.rules.confidence import answer_confidence

SAID = datetime(2026, 10, 5, 14, 0, tzinfo=UTC)  # a Monday


def _context(question: str, *items: ContextItem) -> QueryContext:
    return QueryContext(query_id="q", world_id="w", question=question, items=list(items))


def _turn(event_id: str, text: str, at: datetime = SAID) -> ContextItem:
    return ContextItem(kind="event", id=event_id, text=text, score=0.5, occurred_at=at)


def _fact(memory_id: str, subject: str, predicate: str, value: str, since: datetime, *,
          until: datetime | None = None) -> ContextItem:
    return ContextItem(kind="semantic", id=memory_id, text=f"{subject} {predicate.replace('_', ' ')} {value}",
                       score=0.8, subject=subject, predicate=predicate, object=value, valid_from=since,
                       valid_to=until, status="superseded" if until else "active")


@pytest.mark.parametrize(("question", "turn", "value"), [
    ("Who is Dana's dentist?", "My dentist is Dr. Priya Raman, she is great.", "Priya Raman"),
    ("Where did Caroline move from?", "I moved from Sweden four years ago with my family.", "Sweden"),
    ("When did Dana visit her sister?", "I visited my sister last Friday, it was lovely.", "Friday 2 October 2026"),
    ("When did Dana go to the support group?", "I went to a support group yesterday.", "4 October 2026"),
    ("When did Dana start painting?", "I started painting last week and love it.", "the week before 5 October 2026"),
    ("How many kids does Melanie have?", "Melanie has three kids and a dog.", "three"),
    ("When is Maya's birthday?", "Maya's birthday is on March 3, she loves cake.", "March 3"),  # not when said
    ("What did Caroline research?", "Researching adoption agencies, it's been a dream.", "adoption agencies"),
])
def test_a_question_is_answered_with_the_span_of_the_type_it_asks_for(question: str, turn: str, value: str) -> None:
    answer = answers.answer(_context(question, _turn("e1", turn)))

    assert answer.content == value
    assert [s.id for s in answer.sources] == ["e1"]
    assert answer.confidence < 0.75  # read from text: never "high"


def test_a_when_question_about_people_in_the_plural_asks_one_time() -> None:
    earlier = datetime(2026, 8, 3, 14, 0, tzinfo=UTC)
    context = _context("When did Dana meet her friends and mentors?",
                       _turn("e1", "I met my friends and mentors yesterday, so good.", SAID),
                       _turn("e2", "I met my friends and mentors yesterday, what a day.", earlier))

    answer = answers.answer(context)

    assert answer.content == "4 October 2026"


def test_a_question_no_memory_answers_gets_i_dont_know_with_low_confidence() -> None:
    context = _context("Who is Dana's dentist?", _turn("e1", "Dana lives in Lisbon and works at Acme."))

    answer = answers.answer(context)

    assert answer.content.startswith("I don't know")
    assert answer.confidence <= 0.1 and answer.sources == []


def test_a_turn_without_a_value_of_the_asked_type_is_no_answer() -> None:
    context = _context("Where did Dana go hiking?", _turn("e1", "Dana loved hiking with her brother."))
    assert answers.answer(context).content.startswith("I don't know")


def test_the_current_value_comes_first_then_the_history_then_the_sources() -> None:
    old = _fact("sem_acme", "Dana", "works_at", "Acme", datetime(2024, 3, 1, tzinfo=UTC),
                until=datetime(2026, 9, 28, tzinfo=UTC))
    new = _fact("sem_globex", "Dana", "works_at", "Globex", datetime(2026, 9, 28, tzinfo=UTC))
    turn = _turn("e7", "I started at Globex last Monday.")

    answer = answers.answer(_context("Where does Dana work now?", old, turn, new))

    assert answer.content == "Globex (since 28 September 2026; before: Acme)"
    assert [s.id for s in answer.sources] == ["sem_globex", "sem_acme", "e7"]
    assert answer.confidence >= 0.75


def test_a_fact_about_someone_else_does_not_answer() -> None:
    fact = _fact("sem_1", "Sam", "works_at", "Globex", datetime(2026, 1, 1, tzinfo=UTC))
    assert answers.answer(_context("Where does Dana work?", fact)).content.startswith("I don't know")


def test_an_answer_from_a_fact_is_surer_than_one_read_from_a_turn() -> None:
    fact = _fact("sem_1", "Dana", "lives_in", "Lisbon", datetime(2026, 1, 1, tzinfo=UTC))
    from_fact = answers.answer(_context("Where does Dana live?", fact))
    from_turn = answers.answer(_context("Where does Dana live?", _turn("e1", "Dana lives in Lisbon.")))

    assert from_fact.content == from_turn.content == "Lisbon"
    assert from_fact.confidence > from_turn.confidence


def test_two_current_values_an_open_conflict_lower_the_confidence() -> None:
    lisbon = _fact("sem_1", "Dana", "lives_in", "Lisbon", datetime(2026, 1, 1, tzinfo=UTC))
    porto = _fact("sem_2", "Dana", "lives_in", "Porto", datetime(2025, 1, 1, tzinfo=UTC))
    settled = answers.answer(_context("Where does Dana live?", lisbon))
    contested = answers.answer(_context("Where does Dana live?", lisbon, porto))

    assert contested.content.startswith("Lisbon")
    assert contested.confidence < settled.confidence and contested.confidence < 0.75


@pytest.mark.parametrize(("weaker", "stronger"), [
    ({"from_fact": False, "coverage": 1.0}, {"from_fact": True, "coverage": 1.0}),
    ({"from_fact": True, "coverage": 1.0, "open_conflict": True}, {"from_fact": True, "coverage": 1.0}),
    ({"from_fact": True, "coverage": 1.0, "disagreeing": 1}, {"from_fact": True, "coverage": 1.0}),
    ({"from_fact": True, "coverage": 0.5}, {"from_fact": True, "coverage": 0.5, "agreeing": 1}),
    ({"from_fact": True, "coverage": 1.0, "recency": 0.2}, {"from_fact": True, "coverage": 1.0}),
])
def test_answer_confidence_orders_what_an_answer_rests_on(weaker: dict[str, float], stronger: dict[str, float]) -> None:
    assert answer_confidence(**weaker) < answer_confidence(**stronger)  # type: ignore[arg-type]


def test_only_a_settled_fact_reaches_high_and_text_never_does() -> None:
    assert answer_confidence(from_fact=True, coverage=1.0) >= 0.75
    assert answer_confidence(from_fact=True, coverage=1.0, open_conflict=True) < 0.75
    assert answer_confidence(from_fact=False, coverage=1.0, agreeing=5) < 0.75
    assert answer_confidence(from_fact=True, coverage=1.0, agreeing=2, typed=False) < 0.75


@pytest.mark.parametrize(("question", "predicate", "value", "high"), [
    ("Where does Nadia live?", "lives_in", "Porto", True),
    ("What did Nadia get promoted to?", "get_promoted_to", "manager", False),
    ("What does Nadia like?", "likes", "turtles", False),
    ("Since when does Nadia live in Porto?", "lives_in", "Porto", False),
])
def test_only_a_fact_of_a_known_relation_answers_high(question: str, predicate: str, value: str, high: bool) -> None:
    item = ContextItem(kind="semantic", id="m1", text=f"Nadia {predicate} {value}", score=0.9, subject="Nadia",
                       predicate=predicate, object=value, valid_from=SAID, occurred_at=SAID)
    found = OfflineLLM().force_answer(_context(question, item), temperature=0.0).value

    assert found.content != UNKNOWN and (found.confidence >= 0.75) is high  # type: ignore[union-attr]


def test_the_offline_model_asks_for_a_search_before_saying_it_does_not_know() -> None:
    llm = OfflineLLM()
    context = _context("Who is Dana's dentist?", _turn("e1", "Dana lives in Lisbon."))

    asked = llm.answer(context, can_request_more=True, remaining_info_requests=2, temperature=0.0).value
    forced = llm.force_answer(context, temperature=0.0).value

    assert [r.capability for r in asked.info_requests] == ["search_memories"]  # type: ignore[union-attr]
    assert forced.content.startswith("I don't know") and forced.forced


def test_the_offline_summary_confirms_a_fact_only_where_other_material_restates_it() -> None:
    lives = KnownFact(memory_id="sem_lives", subject="dana", predicate="lives_in", object="Faro")
    likes = KnownFact(memory_id="sem_likes", subject="dana", predicate="likes", object="jazz")

    written = OfflineLLM().summarize("conversation c1", ["I moved and now I live in Faro."], [lives, likes]).value

    assert "dana likes jazz" in written.summary  # copied into the summary...
    assert written.confirmed_fact_ids == ["sem_lives"]  # ...but only the restated one is confirmed


def test_a_question_with_two_verbs_is_answered_for_each() -> None:
    lives = _fact("sem_1", "Nadia", "lives_in", "Porto", datetime(2026, 3, 2, tzinfo=UTC))
    works = _turn("e3", "I work at Azul Airlines as a pilot.")

    answer = answers.answer(_context("Where does Nadia live and work?", lives, works))

    assert answer.content == "Porto; Azul Airlines"
    assert [s.id for s in answer.sources] == ["sem_1", "e3"]


def test_a_place_a_fact_names_answers_where_even_if_the_engine_reads_it_as_a_person() -> None:
    # "Valencia" or "Bluefin Analytics" alone read as a PERSON by the small model: the predicate says what it is
    home = _fact("sem_home", "Idris Kaur", "lives_in", "Valencia", datetime(2026, 2, 1, tzinfo=UTC))
    work = _fact("sem_work", "Idris Kaur", "works_at", "Bluefin Analytics", datetime(2026, 2, 1, tzinfo=UTC))
    assert answers.answer(_context("Where does Idris live?", home, work)).content == "Valencia"
    assert answers.answer(_context("Where does Idris work?", home, work)).content == "Bluefin Analytics"


def test_an_ended_value_answering_what_holds_now_is_never_high() -> None:
    old = _fact("sem_old", "Idris", "works_at", "Vantora", datetime(2025, 1, 1, tzinfo=UTC),
                until=datetime(2026, 3, 1, tzinfo=UTC))
    answer = answers.answer(_context("Where does Idris work now?", old))
    assert answer.content.startswith("Vantora") and answer.confidence < 0.75
    assert answers.answer(_context("Where did Idris work?", old)).confidence > answer.confidence


def test_a_fact_of_a_person_with_a_longer_first_name_does_not_answer() -> None:
    priya = _fact("sem_priya", "Priya Raman", "works_at", "Google", datetime(2025, 1, 1, tzinfo=UTC))
    assert answers.answer(_context("Where does Priyanka work?", priya)).content.startswith("I don't know")


@pytest.mark.parametrize(("question", "turn"), [
    ("When is Nadia's birthday?", "Caroline: I got my first dog in 2013, on my birthday."),
    ("What did Melanie adopt?", "Caroline: I adopted a puppy last week. It sleeps all day."),
    ("Where does Omar work?", "assistant: I work at Acme Corp, in the support team."),
])
def test_another_speakers_first_person_turn_does_not_answer_for_the_person_asked_about(question: str,
                                                                                        turn: str) -> None:
    answer = answers.answer(_context(question, _turn("e1", turn)))
    assert answer.content.startswith("I don't know") and answer.confidence <= 0.1


@pytest.mark.parametrize(("question", "turn", "value"), [
    ("When is Caroline's birthday?", "Caroline: I got my first dog in 2013, on my birthday.", "2013"),
    ("When is Nadia's birthday?", "Caroline: My friend Nadia had her birthday party in 2013.", "2013"),
    ("Where does Maya work?", "dana: My sister Maya lives in Leeds. She works at Acme Corp as a nurse.", "Acme Corp"),
    ("What did Melanie adopt?", "Caroline: Melanie came over. She adopted a puppy last week.", "puppy"),
    ("What did Dana adopt?", "I adopted a puppy last week.", "puppy"),  # no speaker said: the asker's own turn
])
def test_a_turn_answers_for_its_speaker_whom_it_names_or_a_pronoun_for_them(question: str, turn: str,
                                                                              value: str) -> None:
    assert answers.answer(_context(question, _turn("e1", turn))).content == value


def test_a_question_by_an_alias_is_answered_by_the_turns_of_the_one_it_names() -> None:
    dana = ContextItem(kind="entity", id="ent_dana", text="Dana Whitfield (person). also called Dee", score=1.0,
                       name="Dana Whitfield")
    said = _turn("e1", "dana: I work at Acme Corp as a product manager.")
    assert answers.answer(_context("Where does Dee work?", said, dana)).content == "Acme Corp"
    assert answers.answer(_context("Where does Dee work?", said)).content.startswith("I don't know")
    mom = dana.model_copy(update={"name": "Dee's mom", "text": "Dee's mom (person)"})
    assert answers.answer(_context("Where does Dee work?", said, mom)).content.startswith("I don't know")


@pytest.mark.parametrize(("question", "turn"), [
    ("What does Caroline love about her family?", "Caroline: That's awesome, Melanie! Family love is the best."),
    ("What did Jon design for his store?", "Jon: Wow, it looks great! Must have taken you ages to design it."),
    ("What did Jon paint?", "Jon: That's awesome, Gina! Painting sunsets is the best."),
    ("What did Jon paint?", "Jon: Wow, Gina, that is great! Painted a sunset over the lake."),
])
def test_a_speakers_line_about_the_listener_does_not_answer_for_the_speaker(question: str, turn: str) -> None:
    assert answers.answer(_context(question, _turn("e1", turn))).content.startswith("I don't know")


@pytest.mark.parametrize(("question", "turn", "value"), [
    ("What is Gina's store selling?", "Gina: Hey Jon! The store is selling vintage jackets now.", "vintage jackets"),
    ("What did Jon paint?", "Jon: Painting sunsets is the best.", "sunsets"),
    ("What did Jon paint?", "Jon: I finally finished it. Painted a sunset over the lake.", "sunset"),
])
def test_a_speakers_own_news_answers_after_a_greeting_or_without_a_subject(question: str, turn: str,
                                                                            value: str) -> None:
    assert answers.answer(_context(question, _turn("e1", turn))).content == value
