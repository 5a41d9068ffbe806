"""Facts over time, on in-memory fakes: a new value of a single-valued predicate said to replace the old one
closes the old one's valid time (first and third person alike), older news becomes history instead of the
current value, and a stated end closes a fact without a new one. Each settled change is a resolved conflict
that keeps both statements."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from engram.enrichment.extract import ExtractPorts, extract_events
from engram.enrichment.ingest import ingest_events
from engram.enrichment.resolve import resolve_events, user_entity
from engram.model.context import QueryContext
from engram.model.heuristics import DEFAULT_HEURISTICS
from engram.model.memories import SemanticMemory
from engram.model.world import World
from engram.query.capabilities import CapabilityPorts, EntityTimeline, timeline
from engram.retrieval.search import SearchPorts, search
from engram.rules.conflicts import Side, decide, older_news, states_change
from tests.fakes.conversations import T0, remember, said
from tests.fakes.ports import FakePorts
from tests.fakes.readings import ReadingLLM

WORLD = World("w1")
PHRASES = DEFAULT_HEURISTICS.extract.conflict_change_phrases
_batch = iter(range(1, 1000))


def _say(fakes: FakePorts, *turns: str, days: float = 0) -> dict[str, int]:
    request = said(*turns, first=next(_batch) * 10, start=T0 + timedelta(days=days))
    ingest_events(fakes, WORLD, request)
    ids = [e.event_id for e in request.events if e.event_id]
    resolve_events(fakes, WORLD, ids)
    ports: ExtractPorts = fakes
    return extract_events(ports, WORLD, ids)


def _reading(readings: Mapping[str, Sequence[Mapping[str, Any]]]) -> FakePorts:
    return FakePorts(llm=ReadingLLM(readings))


def _facts(fakes: FakePorts, subject: str, predicate: str) -> dict[str, SemanticMemory]:
    entity = fakes.store.find_entity_by_name("w1", subject) or user_entity(fakes, "w1", subject)
    return {f.object_value: f for f in fakes.store.find_facts("w1", entity.entity_id, predicate,
                                                               ("active", "superseded"))}


KALANI = {
    "Kalani lives in Cork.": [{"subject": "Kalani", "predicate": "lives_in", "object": "Cork",
                               "object_is_entity": True, "confidence": 0.9}],
    "Update: Kalani moved and now lives in Porto.": [{"subject": "Kalani", "predicate": "lives_in",
                                                       "object": "Porto", "object_is_entity": True, "confidence": 0.9}],
}


def test_a_third_person_move_supersedes_the_old_place_and_closes_its_valid_time() -> None:
    fakes = _reading(KALANI)
    _say(fakes, "Kalani lives in Cork.")
    counts = _say(fakes, "Update: Kalani moved and now lives in Porto.", days=3)
    by_value = _facts(fakes, "Kalani", "lives_in")
    assert (by_value["Porto"].status, by_value["Cork"].status) == ("active", "superseded")
    assert by_value["Cork"].valid_to == by_value["Porto"].valid_from == T0 + timedelta(days=3)
    [conflict] = fakes.store.list_conflicts("w1", None)
    assert (conflict.status, conflict.strategy, conflict.resolved_by, conflict.winner_memory_id) == \
        ("resolved", "change", "rules", by_value["Porto"].memory_id)
    assert (conflict.memory_id, conflict.conflicting_memory_id) == (by_value["Cork"].memory_id,
                                                                    by_value["Porto"].memory_id)
    assert counts["conflicts"] == 1 and counts["conflicts_open"] == 0
    cork = fakes.store.find_entity_by_name("w1", "Cork")
    assert cork is not None and fakes.store.relationships("w1", cork.entity_id, 1) == []  # its edge went with it


def test_a_first_person_move_read_by_the_offline_model_is_a_change() -> None:
    fakes = FakePorts()
    _say(fakes, "I live in Lisbon.")
    _say(fakes, "I moved to Porto.", days=5)
    by_value = _facts(fakes, "dana", "lives_in")
    assert (by_value["Porto"].status, by_value["Lisbon"].status) == ("active", "superseded")
    [conflict] = fakes.store.list_conflicts("w1", "resolved")
    assert conflict.strategy == "change"


def test_without_a_word_of_change_a_close_contradiction_still_asks_the_user() -> None:
    fakes = FakePorts()
    _say(fakes, "I work at Acme.")
    _say(fakes, "I work at Globex.", days=3)
    assert {f.status for f in _facts(fakes, "dana", "works_at").values()} == {"active"}
    [conflict] = fakes.store.list_conflicts("w1", "open")
    assert conflict.strategy == "ask_user"


def test_older_news_becomes_history_and_never_the_current_value() -> None:
    fakes = _reading({"Back in 2019 I moved to Cork.": [{"subject": "__speaker__", "predicate": "lives_in",
                                                         "object": "Cork", "valid_from": "2019-05-01"}]})
    _say(fakes, "I live in Porto.")
    _say(fakes, "Back in 2019 I moved to Cork.", days=2)  # said later, true earlier; "moved" does not make it new
    by_value = _facts(fakes, "dana", "lives_in")
    porto, cork = by_value["Porto"], by_value["Cork"]
    assert (porto.status, porto.valid_to) == ("active", None)
    assert (cork.status, cork.valid_from, cork.valid_to) == ("superseded", datetime(2019, 5, 1, tzinfo=UTC),
                                                             porto.valid_from)
    [conflict] = fakes.store.list_conflicts("w1", "resolved")
    assert (conflict.strategy, conflict.winner_memory_id) == ("history", porto.memory_id)


def test_a_move_dated_a_little_before_an_undated_value_was_said_is_still_a_move() -> None:
    fakes = _reading({"I relocated to Porto last month.": [{"subject": "__speaker__", "predicate": "lives_in",
                                                            "object": "Porto", "valid_from": "2026-02-01"}]})
    _say(fakes, "I live in Cork.")  # said on 03-01, no date of its own: it may have held a while
    _say(fakes, "I relocated to Porto last month.", days=3)
    by_value = _facts(fakes, "dana", "lives_in")
    assert (by_value["Porto"].status, by_value["Cork"].status) == ("active", "superseded")
    assert by_value["Cork"].valid_to == by_value["Cork"].valid_from  # already outdated when it was said
    [conflict] = fakes.store.list_conflicts("w1", None)
    assert conflict.strategy == "change"


def test_older_news_ends_where_the_next_known_value_began() -> None:
    fakes = _reading({"I lived in Lisbon in 2015.": [{"subject": "__speaker__", "predicate": "lives_in",
                                                      "object": "Lisbon", "valid_from": "2015-01-01"}],
                      "In 2019 I moved to Cork.": [{"subject": "__speaker__", "predicate": "lives_in",
                                                    "object": "Cork", "valid_from": "2019-01-01"}]})
    _say(fakes, "In 2019 I moved to Cork.")
    _say(fakes, "I moved to Porto.", days=1)
    _say(fakes, "I lived in Lisbon in 2015.", days=2)
    by_value = _facts(fakes, "dana", "lives_in")
    assert by_value["Porto"].status == "active"
    assert by_value["Lisbon"].valid_to == by_value["Cork"].valid_from  # not Porto's: Cork came between


def test_a_stated_end_closes_the_fact_without_a_new_value() -> None:
    ended = [{"subject": "__speaker__", "predicate": "works_at", "object": "Acme", "negated": True}]
    fakes = _reading({"I no longer work at Acme.": ended, "I never worked at Globex.":
                      [{**ended[0], "object": "Globex"}]})
    _say(fakes, "I work at Acme.")
    counts = _say(fakes, "I no longer work at Acme.", "I never worked at Globex.", days=4)
    [acme] = _facts(fakes, "dana", "works_at").values()
    assert (acme.status, acme.valid_to) == ("superseded", T0 + timedelta(days=4))
    assert counts["facts_closed"] == 1 and counts["facts_created"] == 0  # Globex: nothing held, nothing made
    assert fakes.store.list_conflicts("w1", None) == []
    entity = fakes.store.find_entity_by_name("w1", "Acme")
    assert entity is not None and fakes.store.relationships("w1", entity.entity_id, 1) == []


def test_a_verb_that_ends_a_value_closes_the_fact_with_that_value_and_is_kept_as_its_own() -> None:
    fakes = _reading({"I quit Acme last week.": [{"subject": "__speaker__", "predicate": "quit", "object": "Acme",
                                                  "object_is_entity": True, "valid_from": "2026-03-03"}]})
    _say(fakes, "I work at Acme.")
    counts = _say(fakes, "I quit Acme last week.", days=8)
    assert counts["facts_closed"] == 1 and counts["facts_created"] == 1
    [acme] = _facts(fakes, "dana", "works_at").values()
    assert (acme.status, acme.valid_to) == ("superseded", datetime(2026, 3, 3, tzinfo=UTC))
    [quit] = _facts(fakes, "dana", "quit").values()
    assert quit.status == "active"


def test_a_stated_end_before_the_value_began_closes_nothing() -> None:
    fakes = _reading({"I no longer work at Acme.": [{"subject": "__speaker__", "predicate": "works_at",
                                                     "object": "Acme", "negated": True}]})
    _say(fakes, "I no longer work at Acme.")
    _say(fakes, "I work at Acme.", days=1)  # a later start: the earlier end does not reach it
    [acme] = _facts(fakes, "dana", "works_at").values()
    assert acme.status == "active"


# ---------------------------------------------------------------- as of a past time
def test_a_search_as_of_before_a_move_finds_the_old_place_and_nothing_said_after() -> None:
    fakes = FakePorts()
    remember(fakes, WORLD, said("I live in Lisbon.", prefix="a"))
    remember(fakes, WORLD, said("I moved to Porto.", start=T0 + timedelta(days=30), prefix="b"))
    ports: SearchPorts = fakes
    before = search(ports, WORLD, "lives in", user_id="dana", as_of=T0 + timedelta(days=10))
    assert [h.text for h in before.hits if h.kind == "semantic"] == ["dana lives in Lisbon"]  # superseded since
    assert all(h.occurred_at is None or h.occurred_at <= T0 + timedelta(days=10) for h in before.hits)
    assert "b1" not in [h.doc_id for h in before.hits]  # the move was not said yet
    now = search(ports, WORLD, "lives in", user_id="dana")
    assert [h.text for h in now.hits if h.kind == "semantic"] == ["dana lives in Porto"]
    earlier = search(ports, WORLD, "lives in", user_id="dana", as_of=T0 - timedelta(days=1))
    assert [h for h in earlier.hits if h.kind != "entity"] == []  # nothing was known yet


def test_an_entitys_timeline_shows_a_replaced_value_with_until_when_it_held() -> None:
    fakes = FakePorts()
    remember(fakes, WORLD, said("I live in Lisbon.", prefix="a"))
    remember(fakes, WORLD, said("I moved to Porto.", start=T0 + timedelta(days=30), prefix="b"))
    dana = user_entity(fakes, "w1", "dana").entity_id
    ports: CapabilityPorts = fakes
    ask = EntityTimeline(capability="get_entity_timeline", entity_id=dana)
    today = QueryContext(query_id="q", world_id="w1", question="Where did I live?")
    assert [i.text.split(" (")[0] for i in timeline(ports, WORLD, today, "dana", ask)] == [
        "dana lives in Lisbon", "dana lives in Porto"]  # in the order they became true
    lisbon, porto = timeline(ports, WORLD, today, "dana", ask)
    assert "held from 2026-03-01 until 2026-03-31, since replaced" in lisbon.text and "replaced" not in porto.text
    then = QueryContext(query_id="q", world_id="w1", question="Where did I live?", as_of=T0 + timedelta(days=1))
    [held] = timeline(ports, WORLD, then, "dana", ask)
    assert held.text.startswith("dana lives in Lisbon") and "replaced" not in held.text  # as of then, it holds


def test_a_fact_read_as_of_a_time_it_held_is_current_then_and_unknown_before() -> None:
    fact = SemanticMemory(world_id="w1", memory_id="sem_1", user_id="dana", subject_entity_id="ent_1",
                          predicate="lives_in", object_value="Lisbon", confidence=0.9, status="superseded",
                          valid_from=T0, valid_to=T0 + timedelta(days=30), created_at=T0 + timedelta(days=40),
                          last_validated_at=T0)
    assert [fact.holds_at(T0 + timedelta(days=d)) for d in (-1, 0, 29, 30)] == [False, True, True, False]
    then = fact.as_held_at(T0 + timedelta(days=10))
    assert (then.status, then.valid_to) == ("active", None) and fact.status == "superseded"
    assert fact.as_held_at(T0 + timedelta(days=31)) is fact and fact.as_held_at(None) is fact
    assert not fact.model_copy(update={"status": "archived"}).holds_at(T0 + timedelta(days=1))  # forgotten


# ---------------------------------------------------------------- the pure rules
def _side(days: float, *, change: bool = False, confidence: float = 0.9, source: str = "user") -> Side:
    return Side(confidence, source, T0 + timedelta(days=days), is_change=change)  # type: ignore[arg-type]


def test_a_stated_change_settles_what_would_otherwise_be_asked() -> None:
    assert decide(_side(0), _side(3), confidence_gap=0.3, recency_gap_days=60).strategy == "ask_user"
    changed = decide(_side(0), _side(3, change=True), confidence_gap=0.3, recency_gap_days=60)
    assert (changed.strategy, changed.winner) == ("change", "new")
    hedged = decide(_side(0), _side(3, change=True, confidence=0.5), confidence_gap=0.3, recency_gap_days=60)
    assert (hedged.strategy, hedged.winner) == ("confidence_gap", "old")  # "I think she moved" is not enough
    same_time = decide(_side(3), _side(3, change=True), confidence_gap=0.3, recency_gap_days=60)
    assert same_time.strategy == "ask_user"  # "moved from Cork to Porto" read as two values at once: not a change


def test_only_a_value_that_began_earlier_is_older_news() -> None:
    decision = older_news(_side(10), _side(2))
    assert decision is not None and (decision.strategy, decision.winner) == ("history", "old")
    assert older_news(_side(10), _side(10)) is None and older_news(_side(2), _side(10)) is None
    assert older_news(_side(10, source="domain"), _side(2)) is None  # the domain database's own rule decides
    undated = Side(0.9, "user", T0 + timedelta(days=10), said_at=T0 + timedelta(days=10))
    assert older_news(undated, _side(2), undated_slack_days=60) is None  # it may have held since before day 2
    assert older_news(undated, _side(-100), undated_slack_days=60) is not None
    dated = Side(0.9, "user", T0 + timedelta(days=10), said_at=T0 + timedelta(days=40))  # "since day 10", said later
    assert older_news(dated, _side(2), undated_slack_days=60) is not None


def test_words_of_change_are_read_as_whole_words() -> None:
    assert states_change("Update: Kalani moved and now lives in Porto.", PHRASES)
    assert states_change("I no longer live there; I live in Porto", PHRASES)
    assert not states_change("I live in Porto.", PHRASES)
    assert not states_change("Kalani knows Porto well.", PHRASES)  # "now" inside "knows" is no word of change
    assert not states_change("I moved to Porto.", ())
