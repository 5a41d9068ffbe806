"""The conversation context as the model reads it: Komputa's exact prefixes, relative times, web results
first, the current input last."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from engram.model.events import StoredEvent
from engram.model.web import WebResult
from engram.retrieval.conversation import ConversationContext, format_line

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)


def _event(event_id: str, role: str, content: str, ago: timedelta, user: str = "dana") -> StoredEvent:
    return StoredEvent(world_id="w", event_id=event_id, user_id=user, conversation_id="c1", role=role,  # type: ignore[arg-type]
                       content=content, content_type="userinput", occurred_at=NOW - ago, received_at=NOW - ago,
                       importance=0.5)


def test_the_users_turns_read_you_said_and_the_assistants_i_responded() -> None:
    said = _event("e1", "user", "I moved to Lisbon.", timedelta(hours=3))
    answered = _event("e2", "assistant", "Congratulations on the move!", timedelta(hours=3))
    assert format_line(said, "dana", NOW) == "- You said (3 hours ago): I moved to Lisbon."
    assert format_line(answered, "dana", NOW) == "- I responded (3 hours ago): Congratulations on the move!"


def test_times_read_as_people_say_them() -> None:
    lines = [format_line(_event("e", "user", "x", ago), "dana", NOW)
             for ago in (timedelta(seconds=20), timedelta(minutes=5), timedelta(days=2), timedelta(days=30))]
    assert lines == ["- You said (just now): x", "- You said (5 minutes ago): x", "- You said (2 days ago): x",
                     "- You said (May 2): x"]


def test_another_participant_of_a_shared_conversation_is_named() -> None:
    line = format_line(_event("e", "user", "Hi all", timedelta(minutes=1), user="sam"), "dana", NOW)
    assert line == "- sam said (1 minutes ago): Hi all"


def test_the_whole_block_starts_with_the_header_and_ends_with_the_current_input() -> None:
    context = ConversationContext(events=[_event("e1", "user", "I moved to Lisbon.", timedelta(hours=3)),
                                          _event("e2", "assistant", "Nice!", timedelta(hours=2))])
    assert context.render("dana", "Where do I live?", NOW) == (
        "Here's some relevant context from our previous conversations:\n"
        "- You said (3 hours ago): I moved to Lisbon.\n"
        "- I responded (2 hours ago): Nice!\n"
        "\n"
        "Current user input: Where do I live?")


def test_web_results_come_first() -> None:
    context = ConversationContext(events=[_event("e1", "user", "I like Porto", timedelta(days=1))],
                                  web=[WebResult(title="Porto", snippet="A city in Portugal.", url="https://x.org")])
    assert context.lines("dana", NOW) == [
        "Here's current web search information relevant to your question:", "- Porto: A city in Portugal. (https://x.org)", "",
        "Here's some relevant context from our previous conversations:", "- You said (1 days ago): I like Porto"]


def test_with_nothing_to_show_only_the_input_remains() -> None:
    assert ConversationContext(events=[]).render("dana", "Hello?", NOW) == "Current user input: Hello?"
