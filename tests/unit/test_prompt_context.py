"""The context for an agent's prompt on in-memory fakes: the rules' conversation context with its prefixes and
relative times, the user's current facts, the token budget dropping whole items, and nothing of another user."""

from __future__ import annotations

from datetime import timedelta

import pytest

from engram.memory.context import FACTS_HEADER, PromptContextPorts, prompt_context
from engram.model.world import World
from engram.retrieval.conversation import HEADER
from tests.fakes.conversations import T0, remember, said
from tests.fakes.ports import FakePorts
from tests.unit.test_search_steps import RecordingWeb

WORLD = World("wp")
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


def test_the_text_is_the_rules_context_then_the_users_current_facts(fakes: FakePorts) -> None:
    ports: PromptContextPorts = fakes
    context = prompt_context(ports, WORLD, "dana", "Where does Dana live?", "c1", 2000, now=NOW)
    lines = context.text.splitlines()
    assert lines[0] == HEADER
    assert "- You said (3 hours ago): Hi! My name is Dana and I live in Lisbon." in lines
    assert "- I responded (2 hours ago): Lisbon is lovely." in lines
    facts = [i for i in context.items if i.kind == "fact"]
    assert facts and any("Lisbon" in f.text for f in facts) and FACTS_HEADER in lines
    assert lines.index(FACTS_HEADER) > lines.index(HEADER) and lines[lines.index(FACTS_HEADER) - 1] == ""
    assert {i.kind for i in context.items} >= {"exchange", "fact"}
    assert all(i.line in lines for i in context.items) and context.dropped == 0
    assert context.estimated_tokens == -(-len(context.text) // 4)  # chars_per_token 4, rounded up


def test_another_users_events_and_facts_never_appear(fakes: FakePorts) -> None:
    for conversation in (None, "c2"):
        context = prompt_context(fakes, WORLD, "dana", "surfing in Porto", conversation, 2000, now=NOW)
        assert "Porto" not in context.text and "surfing" not in context.text
        assert all(i.user_id in (None, "dana") for i in context.items)


@pytest.mark.parametrize("max_tokens", [1, 20, 40, 80, 120])
def test_the_budget_drops_whole_items_the_lowest_priority_first(fakes: FakePorts, max_tokens: int) -> None:
    full = prompt_context(fakes, WORLD, "dana", "Where does Dana live?", "c1", 2000, now=NOW)
    cut = prompt_context(fakes, WORLD, "dana", "Where does Dana live?", "c1", max_tokens, now=NOW)
    assert cut.estimated_tokens <= max_tokens and cut.dropped == len(full.items) - len(cut.items)
    assert all(i.line in cut.text.splitlines() for i in cut.items)
    assert set(cut.text.splitlines()) <= {*full.text.splitlines()}  # lines are dropped, never cut
    if cut.items:  # the latest exchange is the last to go
        latest = max((i for i in full.items if i.kind == "exchange"), key=lambda i: i.when or NOW)
        assert latest in cut.items
    if max_tokens == 1:
        assert cut.text == "" and cut.items == []


def test_web_results_come_first_and_go_first(fakes: FakePorts) -> None:
    with_web = FakePorts(store=fakes.store, index=fakes.index, web=RecordingWeb())
    context = prompt_context(with_web, WORLD, "dana", "What's the weather in Lisbon today?", "c1", 2000, now=NOW)
    assert context.text.startswith("Here's current web search information relevant to your question:\n"
                                   "- Lisbon weather: Sunny, 24°C (https://example.org)\n\n" + HEADER)
    web = next(i for i in context.items if i.kind == "web")
    without = prompt_context(with_web, WORLD, "dana", "What's the weather in Lisbon today?", "c1",
                             context.estimated_tokens - 1, now=NOW)
    assert web not in without.items and without.dropped >= 1
