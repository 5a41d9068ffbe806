"""What one answer call costs: the context thinned to `context_token_budget` (the search's evidence kept longest), the
prompt saying each thing once, the stable prefix the provider caches, and a first context an ordinary question is
answered from in one call."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from engram.adapters.offline.llm import OfflineLLM
from engram.adapters.structured import TOOLS, tool_schema
from engram.model.context import QueryContext
from engram.model.heuristics import DEFAULT_HEURISTICS
from engram.model.queries import ContextItem, NeedsMoreInfo
from engram.prompts import answer
from engram.query import budget
from engram.query import offer as offers

T0 = datetime(2023, 5, 25, 13, 0, tzinfo=UTC)
SAID = "I ran a charity race for mental health last Saturday."


def _context(*items: ContextItem, conversation: list[str] | None = None, question: str = "When did Mel run?") -> QueryContext:
    return QueryContext(query_id="q", world_id="w", question=question, items=list(items),
                        conversation=conversation or [])


def _event(n: int, text: str = SAID, score: float = 0.5) -> ContextItem:
    return ContextItem(kind="event", id=f"e{n}", text=f"Mel: {text}", score=score, occurred_at=T0)


def test_conversation_lines_an_item_shows_are_left_out_first_and_their_header_with_them() -> None:
    context = _context(_event(1), conversation=["Here's some relevant context from our previous conversations:",
                                                f"- You said (May 25): {SAID}"])
    taken = budget.thin(context, DEFAULT_HEURISTICS)
    assert taken == ["left out 2 conversation lines items show"] and context.conversation == []  # the header too
    kept = _context(_event(1), conversation=["Header:", f"- You said (May 25): {SAID}", "- You said (May 26): Hi."])
    budget.thin(kept, DEFAULT_HEURISTICS)
    assert kept.conversation == ["Header:", "- You said (May 26): Hi."]


def test_over_budget_the_conversation_and_long_bodies_go_before_any_evidence_item() -> None:
    h = DEFAULT_HEURISTICS.with_overrides({"context_token_budget": 200, "context_summary_body_chars": 100})
    episode = ContextItem(kind="episodic", id="ep", text="word " * 200, score=0.9)
    events = [_event(n, f"turn {n} " + "x" * 60, score=n / 10) for n in range(5)]
    context = _context(episode, *events, conversation=[f"- You said (May {n}): line {n}" for n in range(1, 9)])

    taken = budget.thin(context, h)

    assert taken == ["compacted", "stripped the bodies of summaries"]  # nothing dropped: it fits
    assert [i.id for i in context.items] == ["ep", "e0", "e1", "e2", "e3", "e4"] and len(context.conversation) == 3
    assert len(context.items[0].text) <= 101 and context.stats().estimated_tokens <= 200


def test_the_lowest_scoring_items_are_dropped_last_and_only_to_fit() -> None:
    h = DEFAULT_HEURISTICS.with_overrides({"context_token_budget": 60, "context_keep_at_least": 2})
    context = _context(*[_event(n, "y" * 90, score=n / 10) for n in range(5)])
    taken = budget.thin(context, h)
    assert taken[-1] == "dropped 3 low-scoring items" and [i.id for i in context.items] == ["e3", "e4"]


def test_the_prompt_dates_each_item_and_names_the_entity_ids_by_their_items() -> None:
    dana = ContextItem(kind="entity", id="ent_dana", text="Dana (person) [summary]", full=False, name="Dana")
    context = _context(_event(1), dana, conversation=[f"- You said (May 25): {SAID}", "- You said (May 26): Hi."])
    context.definitions = ["person"]

    text = answer.messages(context, 2)[0]["content"]

    assert f"- event e1 (25 May 2023): Mel: {SAID}" in text
    assert text.count(SAID) == 1 and "- You said (May 26): Hi." in text  # the line the item shows is not repeated
    assert "ent_dana" not in text.split("This round's ids:")[1]  # request_info's description says which ids
    assert "- definitions (definition): [person]" in text and "Info requests remaining: 2." in text
    assert "Ids: expand_* take [summary] items' ids" in answer.REQUEST_INFO


def test_an_offer_lists_the_ids_the_items_do_not_carry() -> None:
    context = _context(ContextItem(kind="semantic", id="s1", text="Dana lives_in Lisbon", entity_ids=["ent_lisbon"]))
    context.referenced_entities = True  # ent_lisbon may be named though no entity item carries it: it is listed
    text = answer.messages(context, 1)[0]["content"]
    assert "- entity ids (get_relationships.entity_id, get_entity_timeline.entity_id, from_entity_id, to_entity_id): " \
           "[ent_lisbon]" in text
    assert offers.offer(context).describe(shown={offers.ENTITIES: frozenset({"ent_lisbon"})})[0].startswith(
        "- entity ids held only as summaries")  # the entity ids line goes; the expandable one stays


def test_the_answer_rounds_prefix_is_lean_and_the_same_every_round() -> None:
    answer_schema, request_schema = tool_schema("answer"), tool_schema("request_info")
    for schema in (answer_schema, request_schema):
        assert "description" not in json.dumps(schema) and '"default"' not in json.dumps(schema)
    assert "question_signals" in answer_schema["properties"] and "question_signals" not in request_schema["properties"]
    assert TOOLS["request_info"][1] == answer.REQUEST_INFO  # the capabilities ride with request_info only
    assert "expand_entity {entity_id}" not in answer.SYSTEM
    prefix = len(answer.SYSTEM) + sum(len(json.dumps(tool_schema(t))) + len(TOOLS[t][1]) for t in TOOLS
                                      if t in ("answer", "request_info"))
    assert prefix / DEFAULT_HEURISTICS.query.chars_per_token < 900  # was about 1,280 tokens before issue 21


def test_the_offline_model_answers_in_one_call_when_the_context_holds_the_answer() -> None:
    dana = ContextItem(kind="entity", id="ent_dana", text="Dana (person) [summary]", full=False, name="Dana")
    context = _context(ContextItem(kind="event", id="e1", text="Dana: I moved to Lisbon last spring.",
                                   occurred_at=T0), dana, question="Where did Dana move to?")
    reply = OfflineLLM().answer(context, can_request_more=True, remaining_info_requests=3, temperature=0.0)
    assert not isinstance(reply.value, NeedsMoreInfo) and "Lisbon" in reply.value.content


def test_the_offline_model_asks_only_for_what_it_can_read() -> None:
    """It reads facts and turns, never an entity record's text: a named entity's summary is worth no round; with
    nothing in view, a search with the question's words is."""
    llm = OfflineLLM()
    dana = ContextItem(kind="entity", id="ent_dana", text="Dana (person) [summary]", full=False, name="Dana")
    named = _context(dana, question="Who is Dana's dentist?")
    empty = _context(question="Who is Dana's dentist?")

    answered = llm.answer(named, can_request_more=True, remaining_info_requests=3, temperature=0.0).value
    asked = llm.answer(empty, can_request_more=True, remaining_info_requests=3, temperature=0.0).value

    assert not isinstance(answered, NeedsMoreInfo) and answered.content.startswith("I don't know")
    assert isinstance(asked, NeedsMoreInfo) and [r.capability for r in asked.info_requests] == ["search_memories"]
