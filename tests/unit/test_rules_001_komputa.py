"""The Komputa business rules (seed 001), row by row: the document's own scores, keyword lists, limits, formats and
examples, copied verbatim into the tables below. docs/rules.md maps every rule to its test here."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import pytest
from pydantic import ValidationError

from engram.enrichment.ingest import ingest_events
from engram.model.events import EventIn, StoredEvent
from engram.model.heuristics import DEFAULT_HEURISTICS, Heuristics, IngestHeuristics
from engram.model.overrides import WorldConfig
from engram.model.search import DocKind, SemanticHit
from engram.model.web import WebResult
from engram.model.world import World
from engram.retrieval.conversation import ConversationContext, ConversationPorts, conversation_context
from engram.rules.scoring import importance
from engram.rules.tags import tags_for
from engram.rules.timefmt import relative_time
from engram.rules.web_trigger import needs_web_search
from tests.fakes.conversations import said
from tests.fakes.ports import FakePorts
from tests.fakes.store import InMemoryStore

H = DEFAULT_HEURISTICS

# ---------------------------------------------------------------- Memory Scoring Rules
BASE_SCORES = [  # Base Content Type Scoring
    ("userpreference", 0.9), ("factuallearning", 0.8), ("contextualfact", 0.7), ("default", 0.5),
    ("userinput", 0.4), ("assistantresponse", 0.3),
]
IMPORTANCE_KEYWORDS = ["remember", "prefer", "always", "never", "my name is", "i am", "i live", "i work"]
BOOST, CAP = 0.2, 1.0


@pytest.mark.parametrize(("content_type", "base"), BASE_SCORES)
def test_each_content_type_starts_from_its_base_score(content_type: str, base: float) -> None:
    assert H.ingest.base_importance[content_type] == base
    assert importance("The train leaves at noon.", content_type, H) == base


def test_an_unnamed_content_type_scores_as_default() -> None:
    assert importance("The train leaves at noon.", "something_new", H) == 0.5


@pytest.mark.parametrize(("role", "score"), [("user", 0.4), ("assistant", 0.3)])
def test_a_role_without_a_content_type_scores_as_its_content_type(role: str, score: float) -> None:
    response = ingest_events(FakePorts(), World("w1"), said((role, "The train leaves at noon.")))
    assert response.events[0].importance == score


def test_the_importance_keywords_are_the_documents() -> None:
    assert list(H.ingest.importance_keywords) == IMPORTANCE_KEYWORDS
    assert (H.ingest.importance_keyword_boost, H.ingest.importance_cap) == (BOOST, CAP)


@pytest.mark.parametrize("keyword", IMPORTANCE_KEYWORDS)
def test_each_importance_keyword_adds_the_boost(keyword: str) -> None:
    assert importance(f"Note: {keyword} tea.", "userinput", H) == 0.6


def test_several_importance_keywords_add_one_boost() -> None:
    assert importance("Remember: my name is Dana, I live in Lisbon and I always prefer tea.", "userinput", H) == 0.6


@pytest.mark.parametrize("content", [
    "My friend from Delhi lives nearby.",  # "delhi lives" contains "i live"
    "We flew to Hawaii amid the storm.",  # "hawaii amid" contains "i am"
    "I preferred the window seat.",
    "REMEMBERED", "NeVeR again",
])
def test_importance_keywords_count_anywhere_in_the_content_whatever_their_case(content: str) -> None:
    assert importance(content, "userinput", H) == 0.6


@pytest.mark.parametrize(("content", "score"), [
    ("My friend from Delhi lives nearby.", 0.4), ("We flew to Hawaii amid the storm.", 0.4),
    ("I preferred the window seat.", 0.6), ("I live in Lisbon.", 0.6),
])
def test_a_world_can_count_importance_keywords_only_at_the_start_of_a_word(content: str, score: float) -> None:
    word_starts = H.with_overrides({"importance_keyword_match": "word_start"})
    assert importance(content, "userinput", word_starts) == score


@pytest.mark.parametrize(("content_type", "base"), BASE_SCORES)
def test_the_score_is_the_base_plus_the_boost_capped_at_one(content_type: str, base: float) -> None:
    # Math.Min(baseScore + keywordBoost, 1.0)
    assert importance("Please remember this.", content_type, H) == pytest.approx(min(base + BOOST, CAP))


@pytest.mark.parametrize(("base", "boost", "score"), [(-0.3, 0.2, 0.0), (0.95, 0.2, 1.0), (1.4, 0.0, 1.0)])
def test_importance_stays_between_zero_and_one_whatever_a_world_configures(base: float, boost: float,
                                                                          score: float) -> None:
    tuned = Heuristics(ingest=IngestHeuristics(base_importance={"default": base}, importance_keyword_boost=boost))
    assert importance("remember", "default", tuned) == score


# ---------------------------------------------------------------- Tag Extraction Rules
TAG_CATEGORIES = {  # Content Categorization Algorithm
    "weather": ["weather", "temperature", "rain", "sunny", "cloudy", "forecast"],
    "greeting": ["hello", "hi", "hey", "good morning", "good evening"],
    "question": ["what", "how", "why", "when", "where", "who", "?"],
    "preference": ["prefer", "like", "favorite", "always", "never", "usually"],
    "personal": ["my name", "i am", "i live", "i work", "my job"],
    "time": ["time", "clock", "hour", "minute", "schedule", "calendar"],
    "news": ["news", "today", "latest", "current", "recent", "breaking", "update", "happening"],
}
CATEGORIES = H.ingest.tag_keywords


def test_the_tag_categories_and_keywords_are_the_documents() -> None:
    assert {name: list(words) for name, words in CATEGORIES.items()} == TAG_CATEGORIES
    assert list(CATEGORIES) == list(TAG_CATEGORIES)


@pytest.mark.parametrize(("category", "keyword"), [(c, k) for c, words in TAG_CATEGORIES.items() for k in words])
def test_each_tag_keyword_tags_its_category(category: str, keyword: str) -> None:
    assert category in tags_for(f"so {keyword} then", CATEGORIES)


def test_a_memory_gets_every_category_it_matches() -> None:
    assert tags_for("Hey, what is the forecast for today? I prefer sun.", CATEGORIES) == [
        "weather", "greeting", "question", "preference", "news"]


@pytest.mark.parametrize(("content", "category"), [
    ("GOOD MORNING", "greeting"), ("My Name is Dana", "personal"), ("Breaking", "news"), ("CALENDAR", "time"),
])
def test_tag_keywords_match_whatever_their_case(content: str, category: str) -> None:
    assert tags_for(content, CATEGORIES) == [category]


@pytest.mark.parametrize(("content", "category"), [
    ("this", "greeting"), ("training", "weather"), ("unlikely", "preference"), ("somewhat", "question"),
    ("sometimes", "time"), ("newsletter", "news"), ("my jobs", "personal"),
])
def test_tag_keywords_match_anywhere_in_the_content(content: str, category: str) -> None:
    assert tags_for(content, CATEGORIES) == [category]


def test_a_world_can_ask_tag_keywords_to_be_whole_words() -> None:
    whole = World("w1", H.with_overrides({"tag_keyword_match": "whole_word"}))
    response = ingest_events(FakePorts(), whole, said("this training is fine", "Hi! Rain today?"))
    assert [e.tags for e in response.events] == [[], ["weather", "greeting", "question", "news"]]


def test_a_world_adds_a_tag_category_without_code_changes() -> None:
    world = World("w1", config=WorldConfig(tag_categories={"travel": ["flight", "hotel"]}))
    response = ingest_events(FakePorts(), world, said("Booked the hotel."))
    assert response.events[0].tags == ["travel"]


# ---------------------------------------------------------------- Web Search Triggering Rules
CURRENT_INFO_KEYWORDS = ["news", "today", "latest", "current", "recent", "now", "this week", "this month", "today's",
                         "recent events", "what's happening", "what happened", "breaking", "update"]
QUESTION_PATTERNS = ["what is", "what are", "what's", "tell me about", "update on", "latest on"]
TEMPORAL_CONTEXT = ["today", "now", "latest"]
ONLY_PATTERNS = H.with_overrides({"web_search_keywords": []})  # the second clause of the decision on its own


def test_the_web_search_lists_are_the_documents() -> None:
    assert list(H.context.web_search_keywords) == CURRENT_INFO_KEYWORDS
    assert list(H.context.web_search_question_patterns) == QUESTION_PATTERNS
    assert list(H.context.web_search_temporal_words) == TEMPORAL_CONTEXT


@pytest.mark.parametrize("keyword", CURRENT_INFO_KEYWORDS)
def test_each_current_information_keyword_triggers_a_web_search(keyword: str) -> None:
    assert needs_web_search(f"Anything {keyword} for me?", H)


@pytest.mark.parametrize("temporal", TEMPORAL_CONTEXT)
@pytest.mark.parametrize("pattern", QUESTION_PATTERNS)
def test_each_question_pattern_with_today_now_or_latest_triggers_a_web_search(pattern: str, temporal: str) -> None:
    text = f"{pattern} the score {temporal}"
    assert needs_web_search(text, H) and needs_web_search(text, ONLY_PATTERNS)


@pytest.mark.parametrize(("text", "heuristics"), [
    ("What did I say about the garden?", H),
    ("Remember that I prefer tea", H),
    ("weather in Porto", H),
    ("What is the capital of France?", ONLY_PATTERNS),  # a question pattern without a temporal context
    ("Lunch today", ONLY_PATTERNS),  # a temporal context without a question pattern
])
def test_input_without_a_trigger_does_not_search_the_web(text: str, heuristics: Heuristics) -> None:
    assert not needs_web_search(text, heuristics)


@pytest.mark.parametrize("text", ["Do you know my name?", "Is it currently raining?", "Any updates?", "NEWS please"])
def test_web_trigger_words_count_anywhere_in_the_input(text: str) -> None:
    assert needs_web_search(text, H)


@pytest.mark.parametrize(("text", "fires"), [("Do you know my name?", False), ("Is it raining now?", True)])
def test_a_world_can_ask_web_trigger_words_to_be_whole_words(text: str, fires: bool) -> None:
    assert needs_web_search(text, H.with_overrides({"web_search_keyword_match": "whole_word"})) is fires


# ---------------------------------------------------------------- Relative Time Display
NOW = datetime(2026, 12, 22, 15, 0, tzinfo=UTC)


@pytest.mark.parametrize(("ago", "shown"), [
    (timedelta(seconds=30), "just now"),  # < 1 minute
    (timedelta(minutes=15), "15 minutes ago"),  # < 1 hour
    (timedelta(hours=3), "3 hours ago"),  # < 1 day
    (timedelta(days=2), "2 days ago"),  # < 7 days
    (timedelta(days=7), "Dec 15"),  # >= 7 days: "MMM d"
    (timedelta(seconds=59), "just now"),
    (timedelta(seconds=60), "1 minutes ago"),
    (timedelta(minutes=59, seconds=59), "59 minutes ago"),
    (timedelta(hours=1), "1 hours ago"),
    (timedelta(hours=23, minutes=59), "23 hours ago"),
    (timedelta(days=1), "1 days ago"),
    (timedelta(days=6, hours=23), "6 days ago"),
    (timedelta(days=17), "Dec 5"),
])
def test_relative_times_read_as_the_document_shows_them(ago: timedelta, shown: str) -> None:
    assert relative_time(NOW - ago, NOW) == shown


@pytest.mark.parametrize(("ago", "shown"), [
    (timedelta(minutes=1), "1 minute ago"), (timedelta(hours=1), "1 hour ago"), (timedelta(days=1), "1 day ago"),
    (timedelta(minutes=2), "2 minutes ago"),
])
def test_a_world_can_read_one_unit_in_the_singular(ago: timedelta, shown: str) -> None:
    assert relative_time(NOW - ago, NOW, singular=True) == shown
    singular = World("w1", H.with_overrides({"relative_time_singular": True}))
    store = _Store(_event("e1", "c1", NOW - ago))
    context = conversation_context(FakePorts(store=store), singular, "dana", "c1", "Hello", NOW)
    assert context.lines("dana", NOW)[1] == f"- You said ({shown}): e1"


# ---------------------------------------------------------------- Conversation Context Building Rules
LIMITS = [  # Context Selection Strategy, Context Constraints, Memory Limit Rules
    ("context_recent_exchanges", 5), ("context_semantic", 3), ("context_important", 5), ("context_max_items", 8),
]


@pytest.mark.parametrize(("name", "value"), LIMITS)
def test_the_context_limits_are_the_documents(name: str, value: int) -> None:
    assert H.flat()[name] == value


def _event(event_id: str, conversation: str, at: datetime, importance: float = 0.4,
           role: str = "user") -> StoredEvent:
    return StoredEvent(world_id="w1", event_id=event_id, user_id="dana", conversation_id=conversation,
                       role=role, content=event_id, content_type="userinput", occurred_at=at,  # type: ignore[arg-type]
                       received_at=at, importance=importance)


class _Store(InMemoryStore):
    """Dana's events, and a semantic search that answers with the ids it is given, most similar first."""

    def __init__(self, *events: StoredEvent, similar: Sequence[str] = ()) -> None:
        super().__init__()
        self.insert_events(events)
        self.similar = list(similar)

    def semantic_search(self, world_id: str, embedding: Sequence[float], *, user_id: str | None,
                        kinds: Sequence[DocKind], limit: int, min_similarity: float,
                        context_weight: float = 0.0) -> list[SemanticHit]:
        return [SemanticHit(doc_id=d, kind="event", score=0.9 - n / 100) for n, d in enumerate(self.similar)][:limit]


T0 = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


def test_the_context_takes_recent_then_similar_then_important_at_most_eight_in_time_order() -> None:
    recent = [_event(f"r{n}", "c1", T0 + timedelta(hours=10 + n), role="user" if n % 2 else "assistant")
              for n in range(1, 5)]  # two exchanges
    similar = [_event(f"s{n}", "c0", T0 + timedelta(hours=n), importance=0.95 if n == 1 else 0.4)
               for n in range(1, 5)]
    important = [_event("i1", "c0", T0, importance=0.9), _event("i2", "c0", T0, importance=0.85),
                 _event("i3", "c0", T0, importance=0.8)]
    # the semantic search also finds r4 (already recent); the most important event, s1, is already similar
    ports: ConversationPorts = FakePorts(store=_Store(*recent, *similar, *important,
                                                      similar=["r4", "s1", "s2", "s3", "s4"]))
    context = conversation_context(ports, World("w1"), "dana", "c1", "What do I like?", T0 + timedelta(days=1))
    # 4 recent + 3 similar (s4 is a 4th) + 1 important (i1, the most important not chosen) = 8, oldest first
    assert [e.event_id for e in context.events] == ["i1", "s1", "s2", "s3", "r1", "r2", "r3", "r4"]


def test_a_long_conversation_fills_the_context_with_its_latest_eight_items() -> None:
    turns = [_event(f"r{n:02}", "c1", T0 + timedelta(minutes=n)) for n in range(1, 13)]  # six exchanges
    ports = FakePorts(store=_Store(*turns, _event("i1", "c0", T0, importance=0.9), similar=["r01", "i1"]))
    context = conversation_context(ports, World("w1"), "dana", "c1", "Hello", T0 + timedelta(hours=1))
    assert [e.event_id for e in context.events] == [f"r{n:02}" for n in range(5, 13)]


def test_the_context_reads_with_the_documents_prefixes_and_formats() -> None:
    now = T0 + timedelta(hours=3)
    context = ConversationContext(
        events=[_event("I moved to Lisbon.", "c1", T0), _event("Nice!", "c1", T0 + timedelta(hours=1), role="assistant")],
        web=[WebResult(title="Lisbon", snippet="Sunny, 24°C", url="")])
    assert context.render("dana", "What is the weather today?", now) == (
        "Here's current web search information relevant to your question:\n"
        "- Lisbon: Sunny, 24°C\n"
        "\n"
        "Here's some relevant context from our previous conversations:\n"
        "- You said (3 hours ago): I moved to Lisbon.\n"
        "- I responded (2 hours ago): Nice!\n"
        "\n"
        "Current user input: What is the weather today?")


class _Web:
    """A web search that answers every query with one result and records what it was asked."""

    name = "recording"

    def __init__(self) -> None:
        self.asked: list[str] = []

    def search(self, query: str, limit: int) -> list[WebResult]:
        self.asked.append(query)
        return [WebResult(title="Porto", snippet="Rain", url="")]


@pytest.mark.parametrize(("text", "searched"), [("Any news from Porto?", True), ("Where do I live?", False)])
def test_a_triggered_web_search_comes_first_in_the_context(text: str, searched: bool) -> None:
    web = _Web()
    ports = FakePorts(store=_Store(_event("e1", "c1", T0)), web=web)
    lines = conversation_context(ports, World("w1"), "dana", "c1", text, T0).lines("dana", T0)
    assert web.asked == ([text] if searched else [])
    assert lines[0] == ("Here's current web search information relevant to your question:" if searched
                        else "Here's some relevant context from our previous conversations:")


# ---------------------------------------------------------------- Business Invariants, Processing Rules
@pytest.mark.parametrize("content", ["", None])
def test_an_event_with_empty_or_missing_content_is_refused(content: str | None) -> None:
    with pytest.raises(ValidationError):
        EventIn.model_validate({"user_id": "dana", "conversation_id": "c1", "role": "user", "content": content})


def test_ingest_stores_every_user_input_and_every_response_with_its_tags() -> None:
    fakes = FakePorts()
    ingest_events(fakes, World("w1"), said("Hello! What is the weather today?", ("assistant", "Sunny, I am told.")))
    stored = fakes.store.get_events("w1", ["e1", "e2"])
    assert [(e.role, e.tags) for e in stored] == [("user", ["weather", "greeting", "question", "news"]),
                                                  ("assistant", ["weather", "personal"])]
