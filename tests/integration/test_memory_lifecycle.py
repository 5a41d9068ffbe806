"""The memory lifecycle on the real parts (embedded PostgreSQL, tantivy, the offline model; the Anthropic
adapter over recorded replies): each branch a triple can take, the 0.95 cap, each conflict strategy,
dates read from when they were said, one model call per window, and a model failure that loses nothing."""

from __future__ import annotations

import dataclasses
import itertools
import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import anthropic
import httpx
import httpx2
import psycopg
import pytest

from engram.adapters.anthropic import AnthropicLLM
from engram.enrichment.extract import extract_events
from engram.enrichment.indexing import index_pending
from engram.enrichment.ingest import ingest_events
from engram.enrichment.resolve import resolve_events, user_entity
from engram.model.events import IngestRequest
from engram.model.memories import ConfidenceFactors, OntologyPredicate, SemanticMemory
from engram.ports import KnownFact
from engram.ports.clients import Clients
from tests.asgi import api_client
from tests.builder import enrich
from tests.fakes.llm import ScriptedLLM

pytestmark = pytest.mark.integration
T0 = datetime(2026, 3, 4, 9, 0, tzinfo=UTC)  # a Wednesday
_seq = iter(range(1_000_000))
RECORDED = Path(__file__).resolve().parents[1] / "fixtures" / "anthropic"


def say(clients: Clients, world: str, *texts: str, user: str = "dana", conversation: str = "c1",
        at: datetime = T0, index: bool = True) -> dict[str, int]:
    """Ingest the user's turns a minute apart and run the enrichment steps on them."""
    n = next(_seq)
    ids = [f"{world}-{n}-{i}" for i in range(len(texts))]
    ingest_events(clients, clients.world(world), IngestRequest.model_validate({"events": [
        {"event_id": eid, "user_id": user, "conversation_id": conversation, "role": "user", "content": text,
         "occurred_at": (at + timedelta(minutes=i)).isoformat()} for i, (eid, text) in enumerate(zip(ids, texts, strict=True))]}))
    resolve_events(clients, clients.world(world), ids)
    counts = extract_events(clients, clients.world(world), ids, now=at + timedelta(hours=1))
    if index:
        index_pending(clients, world, ids)
    return counts


def facts(clients: Clients, world: str, predicate: str, user: str = "dana", status: str | None = None
          ) -> list[SemanticMemory]:
    me = user_entity(clients, world, user)
    found = clients.store.find_facts(world, me.entity_id, predicate, statuses=("active", "superseded"))
    return [f for f in found if status is None or f.status == status]


def with_llm(clients: Clients, llm: object) -> Clients:
    return dataclasses.replace(clients, llm=llm)  # type: ignore[arg-type]


def set_heuristics(pg_url: str, world: str, overrides: dict[str, object]) -> None:
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("INSERT INTO system_config (world_id, key, value) VALUES (%s, 'heuristics', %s) "
                     "ON CONFLICT (world_id, key) DO UPDATE SET value = EXCLUDED.value", (world, json.dumps(overrides)))


# ---------------------------------------------------------------- create, reinforce
def test_a_new_statement_becomes_a_fact_that_says_why_it_is_believed(clients: Clients) -> None:
    say(clients, "lc-new", "I work at Acme Robotics.")
    [fact] = facts(clients, "lc-new", "works_at")
    assert (fact.object_value, fact.status, fact.confidence) == ("Acme Robotics", "active", pytest.approx(0.9))
    assert fact.factors == ConfidenceFactors(base=0.9, reinforcement=0.0, source="user", source_weight=1.0)
    assert len(fact.source_event_ids) == 1 and fact.last_validated_at == T0


def test_a_fact_about_someone_else_is_reported_and_believed_less(clients: Clients) -> None:
    say(clients, "lc-reported", "Tom is Priya's brother.")
    tom = clients.store.find_entity_by_name("lc-reported", "tom")
    assert tom is not None
    [fact] = clients.store.find_facts("lc-reported", tom.entity_id, "brother_of")
    assert fact.factors is not None and fact.factors.source == "reported"
    assert fact.confidence == pytest.approx(0.7 * 0.9)


def test_restatements_reinforce_with_diminishing_returns_and_never_pass_0_95(clients: Clients) -> None:
    levels = []
    for day in range(12):
        say(clients, "lc-cap", "I live in Lisbon.", at=T0 + timedelta(days=day))
        [fact] = facts(clients, "lc-cap", "lives_in")
        levels.append(fact.confidence)
    gains = [b - a for a, b in itertools.pairwise(levels)]
    assert all(g > 0 for g in gains[:3]) and all(later <= earlier for earlier, later in itertools.pairwise(gains))
    assert max(levels) <= 0.95 and levels[-1] > 0.945
    assert fact.reinforcement_count == 11 and len(fact.source_event_ids) == 12
    assert fact.last_validated_at == T0 + timedelta(days=11)  # decay restarts at the last restatement


def test_a_second_value_of_a_many_valued_predicate_is_a_second_fact_not_a_conflict(clients: Clients) -> None:
    say(clients, "lc-many", "I like jazz.", "I like hiking.")
    assert sorted(f.object_value for f in facts(clients, "lc-many", "likes", status="active")) == ["hiking", "jazz"]
    assert clients.store.list_conflicts("lc-many", None) == []


# ---------------------------------------------------------------- conflicts: each strategy, neither side dropped
def test_a_correction_supersedes_the_earlier_value(clients: Clients) -> None:
    say(clients, "lc-correct", "I live in Lisbon.")
    say(clients, "lc-correct", "Actually, I live in Porto now.", at=T0 + timedelta(days=1))
    by_value = {f.object_value: f for f in facts(clients, "lc-correct", "lives_in")}
    assert (by_value["Porto"].status, by_value["Lisbon"].status) == ("active", "superseded")
    assert by_value["Lisbon"].valid_to == by_value["Porto"].valid_from  # it held until the new one did
    [conflict] = clients.store.list_conflicts("lc-correct", None)
    assert (conflict.strategy, conflict.status, conflict.resolved_by, conflict.winner_memory_id) == \
        ("correction", "resolved", "rules", by_value["Porto"].memory_id)


def test_a_confidence_gap_above_0_30_keeps_the_surer_value_and_stores_the_other(clients: Clients) -> None:
    say(clients, "lc-gap", "I work at Acme.")
    say(clients, "lc-gap", "I think I work at Initech.", at=T0 + timedelta(days=2))
    by_value = {f.object_value: f for f in facts(clients, "lc-gap", "works_at")}
    assert by_value["Acme"].status == "active"
    assert by_value["Initech"].status == "superseded" and by_value["Initech"].confidence == pytest.approx(0.54)
    [conflict] = clients.store.list_conflicts("lc-gap", "resolved")
    assert (conflict.strategy, conflict.winner_memory_id) == ("confidence_gap", by_value["Acme"].memory_id)
    assert "0.90 against 0.54" in (conflict.reason or "")


def test_an_age_gap_above_60_days_keeps_the_more_recent_value(clients: Clients) -> None:
    say(clients, "lc-age", "I live in Lisbon.")
    say(clients, "lc-age", "I live in Porto.", at=T0 + timedelta(days=90))
    by_value = {f.object_value: f for f in facts(clients, "lc-age", "lives_in")}
    assert (by_value["Porto"].status, by_value["Lisbon"].status) == ("active", "superseded")
    [conflict] = clients.store.list_conflicts("lc-age", None)
    assert conflict.strategy == "trust_recent" and conflict.winner_memory_id == by_value["Porto"].memory_id


def test_with_no_rule_to_decide_both_values_stay_and_the_user_is_asked(clients: Clients) -> None:
    say(clients, "lc-ask", "I work at Acme.")
    say(clients, "lc-ask", "I work at Globex.", at=T0 + timedelta(days=3))
    assert {f.status for f in facts(clients, "lc-ask", "works_at")} == {"active"}
    [conflict] = clients.store.list_conflicts("lc-ask", "open")
    assert (conflict.strategy, conflict.winner_memory_id, conflict.resolved_by) == ("ask_user", None, None)


def test_a_value_from_the_domain_database_wins_over_what_the_user_says(clients: Clients) -> None:
    world = "lc-domain"
    me = user_entity(clients, world, "dana")
    recorded = SemanticMemory(world_id=world, memory_id="sem_domain_1", user_id="dana", subject_entity_id=me.entity_id,
                              predicate="works_at", object_value="Acme", confidence=0.8, source_event_ids=[],
                              valid_from=T0 - timedelta(days=400), created_at=T0, last_validated_at=T0,
                              factors=ConfidenceFactors(base=0.8, source="domain"))
    clients.store.record_facts(world, [(recorded, None)], [], [])
    say(clients, world, "Actually, I work at Globex.", at=T0 + timedelta(days=200))  # surer, newer, a correction
    by_value = {f.object_value: f for f in facts(clients, world, "works_at")}
    assert (by_value["Acme"].status, by_value["Globex"].status) == ("active", "superseded")
    [conflict] = clients.store.list_conflicts(world, None)
    assert conflict.strategy == "trust_db" and conflict.winner_memory_id == "sem_domain_1"


def test_different_predicates_are_checked_by_the_model_only_when_the_subject_has_other_facts(clients: Clients) -> None:
    llm = ScriptedLLM()
    scripted = with_llm(clients, llm)
    say(scripted, "lc-cross", "I like coffee.")
    assert llm.calls_to("find_conflicts") == []  # nothing else is known about dana yet
    counts = say(scripted, "lc-cross", "I hate coffee.", at=T0 + timedelta(days=1))
    [check] = llm.calls_to("find_conflicts")
    [liked] = facts(clients, "lc-cross", "likes")
    [hated] = facts(clients, "lc-cross", "dislikes")
    assert check.args == {"new": [hated.memory_id], "known": [liked.memory_id]}
    [conflict] = clients.store.list_conflicts("lc-cross", None)
    assert (conflict.kind, conflict.memory_id, conflict.conflicting_memory_id) == \
        ("semantic_conflict", liked.memory_id, hated.memory_id)
    assert conflict.strategy == "ask_user" and {liked.status, hated.status} == {"active"}
    assert counts["model_calls"] == 2  # the extraction and the one check


# ---------------------------------------------------------------- dates, windows, episodes, outbox
def test_a_predicate_the_worlds_ontology_has_a_word_for_is_recorded_under_the_ontologys_name(
        clients: Clients) -> None:
    world = "lc-onto"
    clients.store.upsert_ontology_predicate(world, OntologyPredicate(
        concept="employer", description="the organisation a person works for", synonyms=["works_at", "employed by"]))
    clients.store.upsert_ontology_predicate(world, OntologyPredicate(concept="lives_in"))
    llm = ScriptedLLM()
    said = with_llm(clients, llm)

    say(said, world, "I work at Acme Robotics.", "I like jazz.")
    say(said, world, "I work at Acme Robotics.")

    [employer] = facts(clients, world, "employer")
    assert (employer.object_value, employer.reinforcement_count) == ("Acme Robotics", 1)  # one fact, restated
    assert facts(clients, world, "works_at") == []
    assert [f.object_value for f in facts(clients, world, "likes")] == ["jazz"]  # no word for it: stays free
    assert llm.calls_to("extract")[0].args["predicates"] == ["employer", "lives_in"]  # the model is told them
    say(clients, "lc-onto-none", "I work at Acme Robotics.")  # another world's ontology is not this one's
    assert [f.predicate for f in clients.store.user_memories("lc-onto-none", "dana", "semantic", 10)] == ["works_at"]


def test_relative_dates_are_read_from_when_the_message_was_said_not_when_it_is_processed(clients: Clients) -> None:
    said = datetime(2024, 7, 10, 12, 0, tzinfo=UTC)  # processed about two years later
    say(clients, "lc-dates", "I moved to Porto last year.", "Next Friday I start at Globex.", at=said)
    [porto] = facts(clients, "lc-dates", "lives_in")
    [globex] = facts(clients, "lc-dates", "works_at")
    assert (porto.object_value, porto.valid_from) == ("Porto", datetime(2023, 1, 1, tzinfo=UTC))
    assert (globex.object_value, globex.valid_from) == ("Globex", datetime(2024, 7, 12, tzinfo=UTC))


def test_one_model_call_per_conversation_window_of_the_configured_size(clients: Clients, pg_url: str) -> None:
    turns = [f"I like topic number {i}." for i in range(12)] + ["Hi!", "What do I like?"]
    llm = ScriptedLLM()
    counts = say(with_llm(clients, llm), "lc-window", *turns)
    assert [len(c.args["event_ids"]) for c in llm.calls_to("extract")] == [10, 2]  # greeting, question: not sent
    set_heuristics(pg_url, "lc-window-5", {"extraction_window": 5})
    llm = ScriptedLLM()
    say(with_llm(clients, llm), "lc-window-5", *turns)
    assert [len(c.args["event_ids"]) for c in llm.calls_to("extract")] == [5, 5, 2]
    # Two extraction calls; the second window's facts are about a subject with others: one conflict check.
    assert counts["windows"] == 2 and counts["model_calls"] == 3


def test_an_episode_keeps_what_happened_who_was_involved_and_its_events(clients: Clients) -> None:
    say(clients, "lc-episode", "Priya is my boss.", "I work at Acme Robotics.")
    [episode] = clients.store.user_memories("lc-episode", "dana", "episodic", 10)
    roles = {e.name: e.roles for e in episode.entities}
    assert roles["dana"] == ["object", "speaker", "subject"]
    assert roles["Priya"] == ["mentioned", "subject"] and roles["Acme Robotics"] == ["mentioned", "object"]
    assert {e.entity_type for e in episode.entities if e.name == "dana"} == {"person"}
    assert len(episode.event_ids) == 2 and "Priya is my boss." in episode.content
    assert sorted(episode.entity_ids) == sorted(e.entity_id for e in episode.entities)


def test_every_new_or_changed_memory_is_queued_for_the_keyword_index_with_it(clients: Clients) -> None:
    say(clients, "lc-outbox", "I live in Lisbon.", index=False)
    queued = {(kind, op) for _id, _w, kind, _doc, op in clients.store.pending_index_ops("lc-outbox", 100)}
    assert {("semantic", "upsert"), ("episodic", "upsert")} <= queued
    index_pending(clients, "lc-outbox")
    say(clients, "lc-outbox", "I live in Lisbon.", at=T0 + timedelta(days=1), index=False)  # a reinforcement
    [fact] = facts(clients, "lc-outbox", "lives_in")
    assert ("semantic", fact.memory_id) in {(k, d) for _i, _w, k, d, _o in clients.store.pending_index_ops("lc-outbox", 100)}


# ---------------------------------------------------------------- the model fails: nothing is lost
class Recorded(httpx2.BaseTransport):
    """The Messages API as recorded (tests/fixtures/anthropic), one reply per request in order, under the
    real `anthropic` client."""

    def __init__(self, *names: str) -> None:
        self.replies = [json.loads((RECORDED / f"{n}.json").read_text(encoding="utf-8")) for n in names]
        self.requests: list[dict[str, object]] = []

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(json.loads(request.read()))
        reply = self.replies.pop(0)
        return httpx2.Response(reply["status"], headers=reply["headers"], json=reply["body"], request=request)


def test_invalid_model_output_twice_fails_only_its_window_and_keeps_its_events(clients: Clients) -> None:
    transport = Recorded("record_facts_invalid", "record_facts_invalid", "record_facts")
    client = anthropic.Anthropic(api_key="test-key", max_retries=0, timeout=2.0,
                                 base_url="https://api.anthropic.com", http_client=httpx2.Client(transport=transport))
    llm = AnthropicLLM(client, model="claude-sonnet-4-5", fast_model="claude-haiku-4-5")
    real = with_llm(clients, llm)
    world = "lc-invalid"
    ingest_events(real, real.world(world), IngestRequest.model_validate({"events": [
        {"event_id": "inv-1", "user_id": "dana", "conversation_id": "c1", "role": "user",
         "content": "I live in Lisbon.", "occurred_at": T0.isoformat()},
        {"event_id": "inv-2", "user_id": "dana", "conversation_id": "c2", "role": "user",
         "content": "I prefer window seats.", "occurred_at": (T0 + timedelta(minutes=1)).isoformat()}]}))
    counts = enrich(real, world, ["inv-1", "inv-2"])

    # The first window: asked, retried once, given up; the second: asked once.
    assert len(transport.requests) == 3
    assert counts["failed_events"] == 1 and counts["episodes"] == 1
    assert (counts["model_calls"], counts["model_requests"]) == (1, 1)  # the rejected call raised before counting
    failed, done = real.store.get_events(world, ["inv-1", "inv-2"])
    assert failed.content == "I live in Lisbon." and failed.enrichment_status == "failed"
    assert "rejected twice" in (failed.enrichment_error or "")
    assert done.enrichment_status == "enriched"


def test_the_anthropic_conflict_check_is_a_forced_report_conflicts_tool_over_the_facts_offered() -> None:
    transport = Recorded("report_conflicts")
    client = anthropic.Anthropic(api_key="test-key", max_retries=0, timeout=2.0,
                                 base_url="https://api.anthropic.com", http_client=httpx2.Client(transport=transport))
    llm = AnthropicLLM(client, model="claude-sonnet-4-5", fast_model="claude-haiku-4-5")
    new = [KnownFact(memory_id="sem_new_hates_electronic", subject="Dana", predicate="dislikes",
                     object="electronic communication")]
    known = [KnownFact(memory_id="sem_known_prefers_email", subject="Dana", predicate="prefers", object="email")]

    reply = llm.find_conflicts(new, known)

    [request] = transport.requests
    assert request["model"] == "claude-haiku-4-5"
    assert request["tool_choice"] == {"type": "tool", "name": "report_conflicts"}
    assert "[sem_known_prefers_email] Dana prefers email" in request["messages"][0]["content"]  # type: ignore[index]
    [pair] = reply.value.conflicts
    assert (pair.memory_id, pair.conflicting_memory_id) == ("sem_new_hates_electronic", "sem_known_prefers_email")
    assert (reply.usage.input_tokens, reply.usage.output_tokens, reply.usage.calls) == (402, 61, 1)


def test_a_model_that_is_down_fails_the_step_before_anything_is_written(clients: Clients) -> None:
    from engram.errors import LLMUnavailable

    class Down(ScriptedLLM):
        def __init__(self) -> None:
            super().__init__(unavailable=["extract"])

    world = "lc-down"
    down = with_llm(clients, Down())
    ingest_events(down, down.world(world), IngestRequest.model_validate({"events": [
        {"event_id": "down-1", "user_id": "dana", "conversation_id": "c1", "role": "user",
         "content": "I live in Lisbon.", "occurred_at": T0.isoformat()}]}))
    with pytest.raises(LLMUnavailable):  # the state machine retries it, then its catch marks the events failed
        extract_events(down, down.world(world), ["down-1"])
    assert down.store.get_event(world, "down-1") is not None
    assert clients.store.user_memories(world, "dana", "semantic", 10) == []
    say(clients, world, "I live in Lisbon.")  # the model is back: the same path works
    assert [f.object_value for f in facts(clients, world, "lives_in")] == ["Lisbon"]


# ---------------------------------------------------------------- the routes
@pytest.fixture(scope="module")
def api(clients: Clients) -> Iterator[httpx.Client]:
    with api_client(clients) as client:
        yield client


def test_a_users_facts_come_with_their_effective_confidence_decayed_as_of_the_read(clients: Clients,
                                                                                   api: httpx.Client) -> None:
    say(clients, "lc-route", "I live in Lisbon.", at=datetime(2024, 1, 1, tzinfo=UTC))
    reply = api.get("/v1/worlds/lc-route/users/dana/memories", params={"layer": "semantic"})
    assert reply.status_code == 200, reply.text
    [fact] = [f for f in reply.json() if f["predicate"] == "lives_in"]
    assert fact["confidence"] == pytest.approx(0.9)
    assert 0 < fact["effective_confidence"] < 0.9 * 0.5  # more than a 180-day half-life ago
    assert fact["explanation"]["base"] == 0.9 and fact["explanation"]["source"] == "user"
    assert fact["explanation"]["recency"] < 0.5 and fact["source_event_ids"]
    episodes = api.get("/v1/worlds/lc-route/users/dana/memories", params={"layer": "episodic"}).json()
    assert episodes and episodes[0]["entities"]
    assert api.get("/v1/worlds/lc-route/users/dana/memories", params={"layer": "nope"}).status_code == 422


def test_the_user_settles_an_open_conflict_and_cannot_settle_it_twice(clients: Clients, api: httpx.Client) -> None:
    say(clients, "lc-settle", "I work at Acme.")
    say(clients, "lc-settle", "I work at Globex.", at=T0 + timedelta(days=1))
    [open_] = api.get("/v1/worlds/lc-settle/conflicts", params={"status": "open"}).json()
    assert open_["memory"]["object_value"] == "Acme" and open_["conflicting_memory"]["object_value"] == "Globex"
    assert open_["memory"]["effective_confidence"] > 0
    url = f"/v1/worlds/lc-settle/conflicts/{open_['conflict_id']}/resolution"

    assert api.post(url, json={"winner_memory_id": "sem_elsewhere"}).status_code == 422
    assert api.post(url, json={}).status_code == 422
    assert api.post(url, json={"winner_memory_id": open_["memory_id"], "keep_both": True}).status_code == 422
    assert api.post("/v1/worlds/lc-settle/conflicts/cfl_nope/resolution", json={"keep_both": True}).status_code == 404
    settled = api.post(url, json={"winner_memory_id": open_["conflicting_memory_id"], "note": "I moved jobs"})
    assert settled.status_code == 200, settled.text
    body = settled.json()
    assert (body["status"], body["resolved_by"], body["note"]) == ("resolved", "user", "I moved jobs")
    assert (body["memory"]["status"], body["conflicting_memory"]["status"]) == ("superseded", "active")
    assert [f.object_value for f in facts(clients, "lc-settle", "works_at", status="active")] == ["Globex"]
    assert api.post(url, json={"keep_both": True}).status_code == 409
    assert api.get("/v1/worlds/lc-settle/conflicts", params={"status": "open"}).json() == []


def test_the_user_may_overturn_the_rules_and_keep_both(clients: Clients, api: httpx.Client) -> None:
    say(clients, "lc-overturn", "I live in Lisbon.")
    say(clients, "lc-overturn", "Actually, I live in Porto.", at=T0 + timedelta(days=1))
    [conflict] = api.get("/v1/worlds/lc-overturn/conflicts", params={"status": "resolved"}).json()
    assert conflict["resolved_by"] == "rules"
    reply = api.post(f"/v1/worlds/lc-overturn/conflicts/{conflict['conflict_id']}/resolution", json={"keep_both": True})
    assert reply.status_code == 200, reply.text
    assert sorted(f.object_value for f in facts(clients, "lc-overturn", "lives_in", status="active")) == ["Lisbon", "Porto"]
    assert reply.json()["winner_memory_id"] is None
