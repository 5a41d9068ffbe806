"""Extraction and the memory lifecycle on a generated conversation set (engram.bench.extraction): users
state facts, restate, correct and contradict them among small talk, questions and negations.

Reported for the offline extractor through the real pipeline (ingest, resolve, extract, index on embedded
PostgreSQL): fact precision and recall (all statements, and those in phrasings its patterns cover),
reinforcements against the restatements planted, conflicts found against planted per strategy, the values
left active after each planted conflict, and model calls and tokens per event next to a baseline measured in
the same run: the same set extracted one event per call (`extraction_window` 1). Tokens are estimated from
what the Anthropic extractor would be sent and would send back (characters / 4), since the offline model
counts none.

The Anthropic extractor is not measured here: there is no key and no network on this machine, and recorded
replies for a generated set would have to be written by hand, which would measure the hand, not the model.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections import Counter
from collections.abc import Sequence
from typing import Any

import psycopg
import pytest

from engram.adapters.anthropic import _tool
from engram.bench.extraction import ExtractionSet, generate
from engram.enrichment.ingest import ingest_events
from engram.model.entities import EntitySighting
from engram.model.events import IngestRequest
from engram.model.memories import OntologyPredicate
from engram.ports import LLM, ConflictCheck, ExtractionResult, KnownFact, LLMReply, Reference, WindowEvent
from engram.ports.clients import Clients
from engram.prompts import conflicts as conflicts_prompt
from engram.prompts import extraction as extraction_prompt
from tests.bench.conftest import BenchReport
from tests.builder import enrich

pytestmark = pytest.mark.bench
USERS = int(os.environ.get("ENGRAM_BENCH_EXTRACTION_USERS", "24"))
CHARS_PER_TOKEN = 4.0


class MeteredLLM:
    """The offline model, counting calls and the characters the Anthropic extractor would send and receive
    for the same calls (system prompt, tool schema, messages; the tool input back)."""

    def __init__(self, inner: LLM) -> None:
        self.inner = inner
        self.name = inner.name
        self.calls: Counter[str] = Counter()
        self.chars_in = 0
        self.chars_out = 0

    def extract(self, events: Sequence[WindowEvent], known_entities: Sequence[str], *,
                references: Sequence[Reference] = (), candidates: Sequence[EntitySighting] = (),
                predicates: Sequence[OntologyPredicate] = ()) -> LLMReply[ExtractionResult]:
        reply = self.inner.extract(events, known_entities, references=references, candidates=candidates,
                                   predicates=predicates)
        self._meter("extract", extraction_prompt.SYSTEM, "record_facts",
                    extraction_prompt.messages(events, known_entities, references, candidates), reply.value)
        return reply

    def find_conflicts(self, new_facts: Sequence[KnownFact], known_facts: Sequence[KnownFact]) -> LLMReply[ConflictCheck]:
        reply = self.inner.find_conflicts(new_facts, known_facts)
        self._meter("find_conflicts", conflicts_prompt.SYSTEM, "report_conflicts",
                    conflicts_prompt.messages(new_facts, known_facts), reply.value)
        return reply

    def _meter(self, method: str, system: str, tool: str, messages: list[dict[str, str]], value: Any) -> None:
        self.calls[method] += 1
        self.chars_in += len(system) + len(json.dumps(_tool(tool))) + sum(len(m["content"]) for m in messages)
        self.chars_out += len(value.model_dump_json(exclude_defaults=True))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def run(clients: Clients, world: str, data: ExtractionSet) -> tuple[MeteredLLM, Counter[str]]:
    """Every user's sessions, one batch each, through resolve, extract and index."""
    llm = MeteredLLM(clients.llm)
    metered = dataclasses.replace(clients, llm=llm)  # type: ignore[arg-type]
    counts: Counter[str] = Counter()
    for user, sessions in data.turns.items():
        for n, session in enumerate(sessions):
            ids = [f"{user}-{n}-{i}" for i in range(len(session))]
            ingest_events(metered, metered.world(world), IngestRequest.model_validate({"events": [
                {"event_id": eid, "user_id": user, "conversation_id": t.conversation_id, "role": t.role,
                 "content": t.content, "occurred_at": t.at.isoformat()} for eid, t in zip(ids, session, strict=True)]}))
            counts.update(enrich(metered, world, ids))
    return llm, counts


def stored_facts(pg_url: str, world: str) -> list[dict[str, Any]]:
    with psycopg.connect(pg_url) as conn, conn.cursor(row_factory=psycopg.rows.dict_row) as cur:
        cur.execute("SELECT m.memory_id, m.user_id, lower(e.name) AS subject, m.predicate, lower(m.object_value) AS object, "
                    "m.status, m.reinforcement_count FROM semantic_memories m JOIN canonical_entities e ON "
                    "e.world_id = m.world_id AND e.entity_id = m.subject_entity_id WHERE m.world_id = %s", (world,))
        return list(cur.fetchall())


def test_extraction_quality_lifecycle_and_model_use_on_a_generated_set(clients: Clients, pg_url: str,
                                                                       bench_report: BenchReport) -> None:
    data = generate(users=USERS)
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("INSERT INTO system_config (world_id, key, value) VALUES ('bench-extract-1', 'heuristics', %s)",
                     (json.dumps({"extraction_window": 1}),))
    llm, counts = run(clients, "bench-extract", data)
    per_event_llm, per_event_counts = run(clients, "bench-extract-1", data)

    # Fact precision and recall: every (subject, predicate, object) stored, whatever its status, against the set.
    rows = stored_facts(pg_url, "bench-extract")
    truth = {f.key() for f in data.facts}
    covered = {f.key() for f in data.facts if f.covered}
    found = {(r["subject"], r["predicate"], r["object"]) for r in rows}
    hits = found & truth
    precision = len(hits) / len(found) if found else 0.0
    recall, recall_covered = len(hits) / len(truth), len(found & covered) / len(covered)

    # Reinforcements: the planted restatements by the same user (each user's facts live their own lifecycle, so
    # several users saying a boss prefers tea make one fact each), in the phrasings the patterns cover and in
    # the others the extractor read (a user's uncovered "I'm based in ..." is restated in the same words).
    restated_uncovered = {f.key() for f in data.facts if not f.covered and f.predicate == "lives_in"}
    expected_reinforcements = data.restatements + len(restated_uncovered & found)
    reinforcements = sum(r["reinforcement_count"] for r in rows)

    # Conflicts: found against planted, per strategy and kind, matched by user; and what stays active.
    owner = {r["memory_id"]: r["user_id"] for r in rows}
    active = {(r["user_id"], r["predicate"], r["object"]) for r in rows if r["status"] == "active"}
    conflicts = clients.store.list_conflicts("bench-extract", None)
    found_by = Counter((owner.get(c.conflicting_memory_id), c.strategy, c.kind) for c in conflicts)
    planted_by = Counter((p.user, p.strategy, p.kind) for p in data.conflicts)
    matched = sum(min(n, found_by[k]) for k, n in planted_by.items())
    # Same predicate: exactly the expected values stay active; cross-predicate (asked): both sides do.
    wrong = [p for p in data.conflicts if not (
        {o for u, pr, o in active if u == p.user and pr == p.predicate} == {v.lower() for v in p.active}
        if p.kind == "memory_vs_memory" else
        all((p.user, pr, v.lower()) in active for pr in (p.predicate, "dislikes") for v in p.active))]
    outcomes_right = len(data.conflicts) - len(wrong)

    events = data.events()
    extractable = per_event_counts["windows"]  # one window per extractable event
    tokens = (llm.chars_in + llm.chars_out) / CHARS_PER_TOKEN
    base_tokens = (per_event_llm.chars_in + per_event_llm.chars_out) / CHARS_PER_TOKEN
    r = bench_report
    r.context.update({"users": USERS, "events": events, "extractable_events": extractable,
                      "facts_stated": len(truth), "facts_stored": len(found), "planted": dict(data.planted_by_strategy()),
                      "found": dict(Counter(f"{c.kind}:{c.strategy}" for c in conflicts)),
                      "missed_facts": sorted(map(list, truth - found))[:20],
                      "spurious_facts": sorted(map(list, found - truth))[:20],
                      "wrong_outcomes": [dataclasses.asdict(p) for p in wrong]})
    r.add("fact precision (offline extractor)", precision, "share")
    r.add("fact recall, all phrasings", recall, "share")
    r.add("fact recall, phrasings the patterns cover", recall_covered, "share")
    r.add("reinforcements", reinforcements, "count", baseline="restatements planted", baseline_value=expected_reinforcements)
    r.add("conflicts found", len(conflicts), "count", baseline="conflicts planted", baseline_value=len(data.conflicts))
    r.add("planted conflicts found as planted", matched, "count", baseline="conflicts planted",
          baseline_value=len(data.conflicts))
    for (strategy, kind), n in sorted(Counter((p.strategy, p.kind) for p in data.conflicts).items()):
        got = sum(min(v, found_by[(u, s, k)]) for (u, s, k), v in planted_by.items() if (s, k) == (strategy, kind))
        r.add(f"  {kind} {strategy}", got, "count", baseline="planted", baseline_value=n)
    r.add("planted conflicts leaving the right values active", outcomes_right, "count", baseline="conflicts planted",
          baseline_value=len(data.conflicts))
    r.add("model calls per event", counts["model_calls"] / events, "calls", baseline="one event per call",
          baseline_value=per_event_counts["model_calls"] / events)
    r.add("  extraction calls", llm.calls["extract"], "calls", baseline="one event per call",
          baseline_value=per_event_llm.calls["extract"])
    r.add("  cross-predicate checks", llm.calls["find_conflicts"], "calls", baseline="one event per call",
          baseline_value=per_event_llm.calls["find_conflicts"])
    r.add("estimated tokens per event (Anthropic prompts)", tokens / events, "tokens", baseline="one event per call",
          baseline_value=base_tokens / events)

    # What the set is for: the lifecycle sees what was planted, and windows use fewer calls than events.
    assert precision > 0.8 and recall_covered > 0.9 and recall < recall_covered
    assert reinforcements == expected_reinforcements
    assert matched == len(data.conflicts) and outcomes_right == len(data.conflicts)
    assert counts["model_calls"] < per_event_counts["model_calls"] <= events
