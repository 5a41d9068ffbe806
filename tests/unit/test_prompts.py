"""Prompts are pure functions of their context: what the model is shown for each task."""

from __future__ import annotations

from datetime import UTC, datetime

from engram.model.context import QueryContext
from engram.model.entities import EntitySighting
from engram.model.queries import ContextItem
from engram.ports import Reference, WindowEvent
from engram.prompts import answer, extraction, summary

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


def test_extraction_shows_each_message_with_its_id_time_and_speaker() -> None:
    events = [WindowEvent(event_id="evt_01", role="user", content="I moved to Lisbon.", occurred_at=T0, speaker="Dana"),
              WindowEvent(event_id="evt_02", role="assistant", content="Nice!", occurred_at=T0)]

    (message,) = extraction.messages(events, ["Dana", "Lisbon"])

    assert message["role"] == "user"
    assert "Known entities: Dana, Lisbon" in message["content"]
    assert "[evt_01] (2026-03-01T09:00:00+00:00) Dana (user): I moved to Lisbon." in message["content"]
    assert "[evt_02] (2026-03-01T09:00:00+00:00) assistant (assistant): Nice!" in message["content"]


def test_extraction_says_when_no_entity_is_known_yet() -> None:
    (message,) = extraction.messages([], [])
    assert "Known entities: (none yet)" in message["content"]


def test_extraction_lists_the_references_to_link_and_only_the_offered_candidates() -> None:
    events = [WindowEvent(event_id="evt_02", role="user", content="She agreed.", occurred_at=T0, speaker="Dana")]
    references = [Reference(reference_id="evt_02@0", event_id="evt_02", text="She", kind="pronoun", start=0)]
    candidates = [EntitySighting(entity_id="ent_p", name="Priya", entity_type="person", event_id="evt_01",
                                 occurred_at=T0),
                  EntitySighting(entity_id="ent_p", name="Priya", entity_type="person", event_id="evt_00",
                                 occurred_at=T0)]

    (message,) = extraction.messages(events, ["Dana"], references, candidates)

    assert message["content"].endswith('References to link:\n- evt_02@0: "She" (pronoun) in [evt_02]\n\n'
                                       "Candidate entities:\n- ent_p: Priya (person; mentioned in [evt_01]; "
                                       "mentioned in [evt_00])")
    assert "coreferences" in extraction.SYSTEM
    (plain,) = extraction.messages(events, ["Dana"])
    assert "References" not in plain["content"]  # nothing to link: the prompt is as it always was


def test_extraction_asks_for_dates_relative_to_the_message_not_today() -> None:
    assert "against that message's timestamp" in extraction.SYSTEM
    assert "record_facts" in extraction.SYSTEM


def _context(**kwargs: object) -> QueryContext:
    return QueryContext.model_validate({"query_id": "q", "world_id": "w", "question": "Where does Dana live?",
                                        **kwargs})


def test_the_answer_prompt_lists_items_by_kind_and_id_and_the_expandable_entities() -> None:
    context = _context(items=[ContextItem(kind="semantic", id="sem_01", text="Dana lives_in Lisbon",
                                          entity_ids=["ent_dana", "ent_lisbon"])],
                       conversation=["[2 hours ago] User: I moved."], expanded_entity_ids=["ent_dana"],
                       referenced_entities=True)

    text = answer.messages(context, 2)[0]["content"]

    assert text.startswith("Question: Where does Dana live?")
    assert "- semantic sem_01: Dana lives_in Lisbon" in text
    assert "Recent conversation:\n[2 hours ago] User: I moved." in text
    assert "to expand (expand_entity.entity_id, entity_ids): [ent_lisbon]" in text  # ent_dana is expanded already
    assert ("- entity ids (get_relationships.entity_id, get_entity_timeline.entity_id, from_entity_id, to_entity_id): "
            "[ent_dana, ent_lisbon]") in text


def test_a_turn_shows_the_end_of_the_turn_it_replies_to_on_a_short_re_line() -> None:
    context = _context(items=[
        ContextItem(kind="event", id="D2:12", text="Caroline: I chose them 'cause they help LGBTQ+ folks.",
                    replying_to="Melanie: Wow, that agency looks great! What made you pick it?"),
        ContextItem(kind="event", id="D2:1", text="Caroline: Hey Mel!")])

    text = answer.render_context(context)

    assert ("- event D2:12: Caroline: I chose them 'cause they help LGBTQ+ folks.\n"
            "  re: Melanie: Wow, that agency looks great! What made you pick it?\n- event D2:1: Caroline: Hey Mel!") in text
    assert context.stats().characters == sum(len(i.text) for i in context.items) + len(
        "Melanie: Wow, that agency looks great! What made you pick it?")  # the budget counts it


def test_an_empty_context_says_so() -> None:
    text = answer.render_context(_context())
    assert "- (none)" in text and "Recent conversation" not in text and "expand" not in text


def test_the_answer_prompt_counts_down_info_requests_or_says_to_answer_now() -> None:
    assert answer.messages(_context(), 2)[0]["content"].endswith("Info requests remaining: 2.")
    assert "answer now" in answer.messages(_context(), None)[0]["content"]


def test_the_summary_prompt_lists_its_material() -> None:
    (message,) = summary.messages("conversation c1", ["Dana lives_in Lisbon", "Dana likes jazz"])
    assert message["content"] == "Scope: conversation c1\n\nMaterial:\n- Dana lives_in Lisbon\n- Dana likes jazz"
