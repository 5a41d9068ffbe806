"""Consolidation over the real parts (PostgreSQL, tantivy, the hash embedder, the offline model), driven in
process step by step as the state machine drives it: plan, each summary scope, each world's upkeep, finish."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

import pytest

from engram.app.inline import InlineWorkflows
from engram.consolidation.run import Plan, consolidate_scope, plan
from engram.model.common import utcnow
from engram.model.memories import ConfidenceFactors, MemoryConflict, SemanticMemory
from engram.model.queries import QueryRequest
from engram.ports import KnownFact, LLMReply, WrittenSummary
from engram.ports.clients import Clients
from engram.query.submit import submit_query
from engram.retrieval.search import search
from tests.builder import consolidate, remember
from tests.fakes.llm import ScriptedLLM

pytestmark = pytest.mark.integration
NOW = utcnow()
WORLD = "cons"
CONVERSATIONS = {
    "ana": {"a1": ["My name is Ana and I live in Seville.", "I work at Olivo Labs.",
                   "The Berlin office sends the Q3 report to Olivo Labs."],
            "a2": ["Olivo Labs asked about the Berlin office again.", "I prefer tea over coffee."],
            "a3": ["Olivo Labs and the Berlin office met today."],
            "a4": ["I visited Granada last spring."], "a5": ["Granada was sunny and Malaga too."]},
    "ben": {"b1": ["My name is Ben and I live in Porto.", "I work at Olivo Labs as a designer."],
            "b2": ["My manager is Ana."]},
}


def _ingest(clients: Clients, world: str, user: str, conversations: dict[str, list[str]], at: datetime) -> None:
    events = [{"event_id": f"{c}-{i}", "user_id": user, "conversation_id": c, "role": "user", "content": text,
               "occurred_at": (at + timedelta(minutes=10 * n + i)).isoformat()}
              for n, (c, turns) in enumerate(conversations.items()) for i, text in enumerate(turns)]
    remember(clients, world, events)


def _rows(clients: Clients, world: str) -> dict[str, list[dict[str, Any]]]:
    """Everything consolidation may write, as stored (vectors as text)."""
    tables = {"memory_summaries": "summary_id", "procedural_memories": "memory_id",
              "semantic_memories": "memory_id", "memory_conflicts": "conflict_id", "chat_events": "event_id",
              "index_outbox": "outbox_id"}
    out = {}
    with clients.store.tx(world) as cur:  # type: ignore[attr-defined]
        for table, key in tables.items():
            cur.execute(f"SELECT * FROM {table} WHERE world_id = %s ORDER BY {key}", (world,))
            out[table] = [{k: str(v) for k, v in r.items()} for r in cur.fetchall()]
    return out


@pytest.fixture(scope="module")
def world(clients: Clients) -> Clients:
    clients.workflows = InlineWorkflows(clients, background=False)
    for user, conversations in CONVERSATIONS.items():
        _ingest(clients, WORLD, user, conversations, NOW - timedelta(days=3))
    return clients


@pytest.fixture(scope="module")
def first_run(world: Clients) -> tuple[Plan, dict[str, Any], dict[str, SemanticMemory]]:
    before = {f.memory_id: f for f, _ in world.store.scope_facts(WORLD, "user", "ana", "ana", 50)}
    run, output = consolidate(world, WORLD)
    return run, output, before


def test_a_run_plans_each_conversation_and_user_with_new_material_and_the_worlds_upkeep(
        first_run: tuple[Plan, dict[str, Any], dict[str, SemanticMemory]]) -> None:
    run, output, _ = first_run
    planned = sorted((s.scope_kind, s.scope_id) for s in run.scopes)
    assert planned == [("conversation", c) for c in ("a1", "a2", "a3", "a4", "a5", "b1", "b2")] + [
        ("user", "ana"), ("user", "ben")]
    assert [(s.scope_kind, s.scope_id) for s in run.worlds] == [("world", WORLD)]
    assert output["summaries"] == 9 and output["failed"] == 0 and output["model_calls"] == 9


def test_a_summary_keeps_its_text_key_facts_sources_confidence_and_embedding(
        world: Clients, first_run: tuple[Plan, dict[str, Any], dict[str, SemanticMemory]]) -> None:
    summary = world.store.get_summary(WORLD, "conversation", "a1")
    assert summary is not None and summary.user_id == "ana"
    assert "Seville" in summary.content and "ana lives in Seville" in summary.key_facts
    assert {"a1-0", "a1-1", "a1-2"} <= set(summary.source_ids)
    assert 0.0 < summary.confidence <= 0.95
    with world.store.tx(WORLD) as cur:  # type: ignore[attr-defined]
        cur.execute("SELECT count(*) AS n FROM memory_summaries WHERE world_id = %s AND embedding IS NULL", (WORLD,))
        assert cur.fetchone()["n"] == 0


def test_a_fact_the_summary_confirms_gains_a_tenth_under_the_cap_once_and_is_validated_now(
        world: Clients, first_run: tuple[Plan, dict[str, Any], dict[str, SemanticMemory]]) -> None:
    run, _, before = first_run
    after = {f.memory_id: f for f, _ in world.store.scope_facts(WORLD, "user", "ana", "ana", 50)}
    lives = next(i for i, f in before.items() if f.predicate == "lives_in")
    assert before[lives].confidence == pytest.approx(0.9)
    # +0.1 would be 1.0: capped at 0.95, and only once although three scopes of the run restate it
    assert after[lives].confidence == pytest.approx(0.95)
    assert after[lives].last_validated_at == run.as_of
    assert after[lives].reinforcement_count == before[lives].reinforcement_count  # not a restatement


class _ConfirmsOnly(ScriptedLLM):
    """A model whose summary states every fact but confirms only those whose predicate it is told to."""

    def __init__(self, predicate: str) -> None:
        super().__init__()
        self.predicate = predicate

    def summarize(self, scope: str, items: Sequence[str],
                  facts: Sequence[KnownFact] = ()) -> LLMReply[WrittenSummary]:
        reply = super().summarize(scope, items, facts)
        return LLMReply(WrittenSummary(summary=reply.value.summary, confirmed_fact_ids=[
            f.memory_id for f in facts if f.predicate == self.predicate]), reply.usage, reply.model)


def test_the_facts_confirmed_are_the_ones_the_model_names_not_the_ones_its_text_repeats(clients: Clients) -> None:
    world, model = "cons-confirm", _ConfirmsOnly("likes")
    confirming = dataclasses.replace(clients, llm=model)
    _ingest(confirming, world, "dee", {"k1": ["I live in Faro.", "I like jazz."]}, NOW - timedelta(days=2))
    before = {f.predicate: f for f, _ in clients.store.scope_facts(world, "user", "dee", "dee", 10)}

    run, output = consolidate(confirming, world)

    after = {f.predicate: f for f, _ in clients.store.scope_facts(world, "user", "dee", "dee", 10)}
    assert "Faro" in clients.store.get_summary(world, "conversation", "k1").content  # type: ignore[union-attr]
    assert after["lives_in"].confidence == before["lives_in"].confidence  # repeated, not confirmed
    assert after["likes"].confidence == pytest.approx(min(0.95, before["likes"].confidence + 0.1))  # once
    assert after["likes"].last_validated_at == run.as_of
    assert output["confirmed"] == 1  # two scopes confirmed it; the run boosted it once
    offered = [c.args["facts"] for c in model.calls_to("summarize")]
    assert all(set(ids) == {f.memory_id for f in before.values()} for ids in offered)


def test_entities_named_together_in_three_of_five_conversations_become_a_procedure_with_support_and_episodes(
        world: Clients, first_run: tuple[Plan, dict[str, Any], dict[str, SemanticMemory]]) -> None:
    [procedure] = world.store.user_memories(WORLD, "ana", "procedural", 10)
    assert "Olivo Labs" in procedure.pattern and "Berlin" in procedure.pattern
    assert procedure.support_count == 3
    assert {"a1-2", "a2-0", "a3-0"} <= set(procedure.source_ids)
    assert world.store.user_memories(WORLD, "ben", "procedural", 10) == []  # one conversation is no pattern


def test_a_fact_stated_again_in_three_conversations_becomes_a_recurring_attribute_with_its_episodes(
        clients: Clients) -> None:
    world = "cons-recurring"
    _ingest(clients, world, "cara", {
        "r1": ["Dora prefers paper invoices.", "I live in Faro."],
        "r2": ["Dora prefers paper invoices.", "Ed prefers email."],
        "r3": ["Dora prefers paper invoices."],
        "r4": ["Ed prefers email.", "I visited Lagos."]}, NOW - timedelta(days=2))
    consolidate(clients, world)

    [procedure] = [p for p in clients.store.user_memories(world, "cara", "procedural", 10)
                   if "paper invoices" in p.pattern]
    assert procedure.pattern == "Again and again: Dora prefers paper invoices"
    assert procedure.support_count == 3 and procedure.confidence == pytest.approx(0.75)
    episodes = {e.memory_id: e for e in clients.store.user_memories(world, "cara", "episodic", 20)}
    said_in = [i for i in procedure.source_ids if i in episodes]
    assert sorted(episodes[i].conversation_id for i in said_in) == ["r1", "r2", "r3"]  # one episode each
    assert {"r1-0", "r2-0", "r3-0"} <= set(procedure.source_ids)
    # "Ed prefers email" came up in two conversations only: no pattern yet
    assert not [p for p in clients.store.user_memories(world, "cara", "procedural", 10) if "email" in p.pattern]

    before = _rows(clients, world)
    _, output = consolidate(clients, world)
    assert output["procedures"] == 0 and _rows(clients, world) == before  # idempotent like the other kind
    _ingest(clients, world, "cara", {"r5": ["Ed prefers email."]}, NOW - timedelta(days=1))
    consolidate(clients, world)
    [email] = [p for p in clients.store.user_memories(world, "cara", "procedural", 10) if "email" in p.pattern]
    assert email.support_count == 3


def test_summaries_and_procedures_are_found_by_search_and_only_by_their_user(
        world: Clients, first_run: tuple[Plan, dict[str, Any], dict[str, SemanticMemory]]) -> None:
    hits = search(world, world.world(WORLD), "Olivo Labs Berlin office", user_id="ana", limit=30).hits
    kinds = {h.kind for h in hits}
    assert {"summary", "procedural"} <= kinds
    procedure = next(h for h in hits if h.kind == "procedural")
    assert "a2-0" in procedure.event_ids  # a pattern leads back to the events it was read from
    ben = search(world, world.world(WORLD), "Olivo Labs Berlin office", user_id="ben", limit=30).hits
    assert not [h for h in ben if h.kind in ("summary", "procedural") and h.user_id == "ana"]


def test_a_second_run_changes_nothing(
        world: Clients, first_run: tuple[Plan, dict[str, Any], dict[str, SemanticMemory]]) -> None:
    run, _, _ = first_run
    before = _rows(world, WORLD)
    second, output = consolidate(world, WORLD)
    assert second.scopes == [] and output["summaries"] == 0 and output["model_calls"] == 0
    # and a scope run again as of its own run (a retried Map item) changes nothing either
    for scope in run.scopes:
        consolidate_scope(world, world.world(scope.world_id), scope)
    assert _rows(world, WORLD) == before


def test_new_material_plans_only_its_scopes_again(
        world: Clients, first_run: tuple[Plan, dict[str, Any], dict[str, SemanticMemory]]) -> None:
    _ingest(world, WORLD, "ben", {"b3": ["I moved my desk to the Porto studio."]}, NOW - timedelta(days=1))
    run = plan(world, world.world(WORLD))
    assert sorted((s.scope_kind, s.scope_id) for s in run.scopes) == [("conversation", "b3"), ("user", "ben")]


# ---------------------------------------------------------------- forgetting
def test_a_fact_that_decayed_away_is_archived_out_of_search_but_its_event_stays(clients: Clients) -> None:
    world = "cons-decay"
    clients.workflows = InlineWorkflows(clients, background=False)
    _ingest(clients, world, "cleo", {"old": ["I live in Valladolid."]}, NOW - timedelta(days=3 * 365))
    _ingest(clients, world, "cleo", {"new": ["I work at Prado Mills."]}, NOW - timedelta(days=2))
    event_before = clients.store.get_event(world, "old-0")
    found = search(clients, clients.world(world), "Valladolid", user_id="cleo", limit=10).hits
    assert {"event", "semantic"} <= {h.kind for h in found}

    _, output = consolidate(clients, world)

    assert output["archived"] == 1
    [old] = [f for f in clients.store.user_memories(world, "cleo", "semantic", 10) if f.object_value == "Valladolid"]
    assert old.status == "archived"  # kept, never deleted
    [work] = [f for f in clients.store.user_memories(world, "cleo", "semantic", 10) if f.object_value == "Prado Mills"]
    assert work.status == "active"
    found = search(clients, clients.world(world), "Valladolid", user_id="cleo", limit=10).hits
    assert "semantic" not in {h.kind for h in found}
    assert "old-0" in {h.doc_id for h in found if h.kind == "event"}
    assert clients.store.get_event(world, "old-0") == event_before  # the raw event is never changed
    summary = clients.store.get_summary(world, "conversation", "old")
    assert summary is not None and summary.key_facts == []  # a faded fact is not revived by re-reading it


def test_an_imported_old_conversation_keeps_its_facts(clients: Clients) -> None:
    """Decay runs on the world's clock: facts stated years ago, in a world where nothing was said since, are
    as fresh as the world's last word (a LoCoMo import dated 2023 lost every fact to the wall clock)."""
    world = "cons-imported"
    clients.workflows = InlineWorkflows(clients, background=False)
    _ingest(clients, world, "cleo", {"old": ["I live in Valladolid.", "I work at Prado Mills."]},
            NOW - timedelta(days=3 * 365))
    facts = [f for f in clients.store.user_memories(world, "cleo", "semantic", 10) if f.status == "active"]
    assert len(facts) == 2

    _, output = consolidate(clients, world)

    assert output["archived"] == 0
    after = clients.store.user_memories(world, "cleo", "semantic", 10)
    assert sorted(f.status for f in after) == ["active", "active"]
    found = search(clients, clients.world(world), "Valladolid", user_id="cleo", limit=10).hits
    assert "semantic" in {h.kind for h in found}
    summary = clients.store.get_summary(world, "conversation", "old")
    assert summary is not None and len(summary.key_facts) == 2  # still current: the summary confirms them


# ---------------------------------------------------------------- conflicts
def _fact(world: str, memory_id: str, value: str, confidence: float, valid_from: datetime,
          validated: datetime) -> SemanticMemory:
    return SemanticMemory(world_id=world, memory_id=memory_id, user_id="dan", subject_entity_id="ent_dan",
                          predicate="lives_in" if memory_id[-1] in "ab" else "works_at", object_value=value,
                          confidence=confidence, source_event_ids=[], valid_from=valid_from, created_at=valid_from,
                          last_validated_at=validated, factors=ConfidenceFactors(base=confidence))


def test_open_conflicts_the_rules_can_now_settle_are_resolved_with_the_reason_and_ambiguous_ones_stay_open(
        clients: Clients) -> None:
    world, t = "cons-conflicts", NOW - timedelta(days=300)
    # Two homes stated a month apart, equally sure: the user was asked. Since then the second was restated
    # (validated yesterday) and the first never again: its effective confidence decayed.
    a = _fact(world, "m_a", "Lyon", 0.9, t, t)
    b = _fact(world, "m_b", "Nantes", 0.9, t + timedelta(days=30), NOW - timedelta(days=1))
    # Two employers, both fresh and as sure: still nothing decides.
    c = _fact(world, "m_c", "Acme", 0.8, NOW - timedelta(days=5), NOW - timedelta(days=5))
    d = _fact(world, "m_d", "Zeta", 0.85, NOW - timedelta(days=3), NOW - timedelta(days=3))
    conflicts = [MemoryConflict(world_id=world, conflict_id=f"cfl_{x.memory_id}", memory_id=x.memory_id,
                                conflicting_memory_id=y.memory_id, strategy="ask_user", reason="asked",
                                created_at=y.created_at) for x, y in ((a, b), (c, d))]
    clients.store.record_facts(world, [(f, None) for f in (a, b, c, d)], [], conflicts)

    _, output = consolidate(clients, world)

    assert output["conflicts_settled"] == 1
    settled = clients.store.get_conflict(world, "cfl_m_a")
    assert settled is not None and (settled.status, settled.strategy, settled.resolved_by, settled.winner_memory_id) \
        == ("resolved", "confidence_gap", "rules", "m_b")
    assert settled.reason is not None and "gap" in settled.reason
    sides = {f.memory_id: f for f in clients.store.get_semantic(world, ["m_a", "m_b"])}
    assert (sides["m_a"].status, sides["m_b"].status) == ("superseded", "active")  # superseded, never deleted
    still = clients.store.get_conflict(world, "cfl_m_c")
    assert still is not None and (still.status, still.resolved_by) == ("open", None)
    _, again = consolidate(clients, world)
    assert again["conflicts_settled"] == 0


def test_summaries_and_procedures_enter_a_querys_context(
        world: Clients, first_run: tuple[Plan, dict[str, Any], dict[str, SemanticMemory]]) -> None:
    for question, kind in (("When ana talks about Olivo Labs, what comes up?", "procedural"),
                           ("Seville, tea over coffee and Olivo Labs: what do I know about ana?", "summary")):
        query = submit_query(world, WORLD, QueryRequest(user_id="ana", question=question))
        context = world.store.load_context(WORLD, query.query_id)
        assert context is not None
        assert kind in {item.kind for item in context.items}, question


def test_a_restated_fact_whose_valid_time_is_closed_keeps_its_confidence(clients: Clients) -> None:
    world = "cons-current"
    _ingest(clients, world, "eve", {"k1": ["I live in Faro.", "I like jazz."]}, NOW - timedelta(days=2))
    before = {f.predicate: f for f, _ in clients.store.scope_facts(world, "user", "eve", "eve", 10)}
    closed = before["lives_in"].model_copy(update={"valid_to": NOW - timedelta(days=1)})
    clients.store.update_semantic(closed)  # no longer true, though the conversation still says it

    consolidate(clients, world)

    after = {f.predicate: f for f, _ in clients.store.scope_facts(world, "user", "eve", "eve", 10)}
    assert after["lives_in"].confidence == before["lives_in"].confidence
    assert after["likes"].confidence == pytest.approx(min(0.95, before["likes"].confidence + 0.1))
