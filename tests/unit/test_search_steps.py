"""The fused search, find-similar and the conversation context on in-memory fakes of the ports they declare:
what a user finds, what a brain that is down leaves, and what the answering model is shown of the conversation."""

from __future__ import annotations

from datetime import timedelta

import pytest

from engram.model.web import WebResult
from engram.model.world import World
from engram.retrieval.conversation import ConversationPorts, conversation_context
from engram.retrieval.search import SearchPorts, SimilarPorts, find_similar, search
from tests.fakes.conversations import T0, remember, said
from tests.fakes.ports import FakePorts

WORLD = World("wx")
NOW = T0 + timedelta(hours=3)


@pytest.fixture(scope="module")
def fakes() -> FakePorts:
    """Dana's conversation with the assistant, and Sam's own."""
    ports = FakePorts()
    remember(ports, WORLD, said("Hi! My name is Dana and I live in Lisbon.", ("assistant", "Lisbon is lovely."),
                                "I work at Acme Robotics as a firmware engineer.",
                                "I love hiking in the mountains on weekends."))
    remember(ports, WORLD, said("I live in Porto and I love surfing.", user="sam", conversation="c2", prefix="s"))
    return ports


def test_the_fused_search_finds_the_event_that_states_a_fact_and_says_which_brains_found_it(
        fakes: FakePorts) -> None:
    ports: SearchPorts = fakes
    result = search(ports, WORLD, "Where does Dana live?", user_id="dana", now=NOW)
    assert "e1" in [h.doc_id for h in result.hits]
    assert any("lives in Lisbon" in h.text for h in result.hits)
    assert [e.name for e in result.entities] == ["Dana"] and result.entities[0].user_id == "dana"
    assert all(h.ranks and h.explanation for h in result.hits) and result.unavailable == []


def test_a_user_finds_their_own_memories_and_the_worlds_never_another_users(fakes: FakePorts) -> None:
    mine = search(fakes, WORLD, "surfing in Porto", user_id="sam", now=NOW)
    theirs = search(fakes, WORLD, "surfing in Porto", user_id="dana", now=NOW)
    assert "s1" in [h.doc_id for h in mine.hits]
    assert all(h.user_id in (None, "dana") for h in theirs.hits) and "s1" not in [h.doc_id for h in theirs.hits]


def test_with_the_keyword_index_down_the_search_ranks_by_the_other_brains_and_says_so(fakes: FakePorts) -> None:
    fakes.index.down = True
    try:
        result = search(fakes, WORLD, "Where does Dana live?", user_id="dana", now=NOW)
    finally:
        fakes.index.down = False
    assert result.unavailable == ["keyword"] and "keyword brain unavailable" in result.interpretation
    assert "e1" in [h.doc_id for h in result.hits]


def test_find_similar_returns_the_nearest_memories_of_one_without_itself(fakes: FakePorts) -> None:
    ports: SimilarPorts = fakes
    anything = World("wx", WORLD.heuristics.with_overrides({"semantic_min_similarity": 0.0}))
    similar = find_similar(ports, anything, "event", "e1", user_id="dana")
    assert similar and "e1" not in [h.doc_id for h in similar]
    assert all(h.user_id in (None, "dana") and h.explanation == f"cosine {h.score:.2f} to event e1" for h in similar)


class RecordingWeb:
    """A web search that answers every query with one result and records what it was asked."""

    name = "recording"

    def __init__(self) -> None:
        self.asked: list[str] = []

    def search(self, query: str, limit: int) -> list[WebResult]:
        self.asked.append(query)
        return [WebResult(title="Lisbon weather", snippet="Sunny, 24°C", url="https://example.org")]


def test_the_conversation_context_shows_the_latest_exchanges_as_the_user_reads_them(fakes: FakePorts) -> None:
    ports: ConversationPorts = fakes
    context = conversation_context(ports, WORLD, "dana", "c1", "What do I do on weekends?", NOW)
    lines = context.lines("dana", NOW)
    assert lines[0] == "Here's some relevant context from our previous conversations:"
    assert "- You said (3 hours ago): Hi! My name is Dana and I live in Lisbon." in lines
    assert "- I responded (2 hours ago): Lisbon is lovely." in lines
    assert context.web == [] and all(e.user_id == "dana" for e in context.events)


def test_naming_another_users_conversation_reads_nothing_of_it(fakes: FakePorts) -> None:
    context = conversation_context(fakes, WORLD, "dana", "c2", "What did Sam say?", NOW)
    assert "s1" not in [e.event_id for e in context.events]


def test_a_question_about_the_present_brings_web_results_first_when_web_search_is_on(fakes: FakePorts) -> None:
    web = RecordingWeb()
    with_web = FakePorts(store=fakes.store, index=fakes.index, web=web)
    context = conversation_context(with_web, WORLD, "dana", "c1", "What's the weather in Lisbon today?", NOW)
    assert web.asked == ["What's the weather in Lisbon today?"]
    assert context.lines("dana", NOW)[:2] == ["Here's current web search information relevant to your question:",
                                              "- Lisbon weather: Sunny, 24°C (https://example.org)"]
    conversation_context(with_web, WORLD, "dana", "c1", "What do I do on weekends?", NOW)
    assert len(web.asked) == 1  # no trigger, no web search
