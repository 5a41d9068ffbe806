"""Planted facts (engram.bench.planted) among LoCoMo turns, through the real pipeline on the embedded stack, and
asked back through the query loop. Reported next to a baseline measured in the same run: the regex statement
patterns the offline model used before its language engine (`engram.adapters.offline.statements`), run over the
same planted turns.

Judged (issue 19) on conversations never tuned on: facts, moves and corrections held as planted (recall at least
0.9), one entity per person, no wrong answer labelled high confidence.
"""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

import pytest

from engram.adapters.offline.statements import SELF, statements
from engram.app.inline import run_query
from engram.bench.locomo import load
from engram.bench.planted import Person, PlantedWorld, abstained, answered_with, plant, questions, said
from engram.model.queries import QueryConfig, QueryRequest
from engram.ports.clients import Clients
from engram.query.submit import submit_query
from tests.bench.conftest import LOCOMO, BenchReport
from tests.builder import remember

pytestmark = pytest.mark.bench
SEED = 20261124
CONVERSATIONS = 4  # LoCoMo samples planted into (the first turns of each)
BATCH = 50


def _ingest(clients: Clients, world: PlantedWorld) -> None:
    for start in range(0, len(world.events), BATCH):
        remember(clients, world.world_id, world.events[start:start + BATCH])


def _entity(clients: Clients, world_id: str, person: Person) -> str | None:
    found = clients.store.find_entity_by_name(world_id, person.full)
    return found.entity_id if found else None


def _values(clients: Clients, world_id: str, entity_id: str | None, predicate: str,
            statuses: tuple[str, ...]) -> list[str]:
    if entity_id is None:
        return []
    facts = clients.store.find_facts(world_id, entity_id, predicate, statuses)
    current_only = tuple(statuses) == ("active",)  # current: active with an open valid time; else the history too
    return [f.object_value for f in facts if f.valid_to is None or not current_only]


def _score_memory(clients: Clients, world: PlantedWorld, tally: Counter[str]) -> None:
    for person in world.people:
        entity_id = _entity(clients, world.world_id, person)
        every = ("active", "superseded", "archived")
        lived = _values(clients, world.world_id, entity_id, "lives_in", every)
        worked = _values(clients, world.world_id, entity_id, "works_at", every)
        home = _values(clients, world.world_id, entity_id, "lives_in", ("active",))
        work = _values(clients, world.world_id, entity_id, "works_at", ("active",))
        for held, value in ((lived, person.city), (lived, person.new_city), (worked, person.company),
                            (worked, person.new_company)):
            tally["facts_planted"] += 1
            tally["facts_held"] += any(said(v, value) for v in held)
        for current, new, old in ((home, person.new_city, person.city), (work, person.new_company, person.company)):
            tally["changes_planted"] += 1
            tally["changes_held"] += any(said(v, new) for v in current) and not any(said(v, old) for v in current)
        named = [e for e in clients.store.list_entities(world.world_id, person.first, 50, min_similarity=0.3)
                 if person.first.lower() in e.name.lower() or person.last.lower() in e.name.lower()]
        tally["people"] += 1
        tally["one_entity"] += entity_id is not None and len(named) == 1


def _score_answers(clients: Clients, world: PlantedWorld, rng: random.Random, tally: Counter[str],
                   wrong: list[str]) -> None:
    for person in world.people:
        for question, expected, old in questions(person, rng):
            query = submit_query(clients, world.world_id, QueryRequest(
                user_id=world.user_id, question=question, config=QueryConfig(max_info_requests=2)))
            run_query(clients, world.world_id, query.query_id)
            answered = clients.store.get_query(world.world_id, query.query_id)
            answer = answered.answer if answered else None
            content, level = (answer.content, answer.confidence_level) if answer else ("", None)
            right = abstained(content) if expected is None else answered_with(content, expected, old)
            kind = "unanswerable" if expected is None else "answerable"
            tally[f"{kind}_asked"] += 1
            tally[f"{kind}_right"] += right
            if not right and level == "high":
                tally["wrong_high"] += 1
                wrong.append(f"{question} -> {content[:120]!r} ({level})")


def _regex_baseline(world: PlantedWorld) -> Counter[str]:
    """The regex statements over the planted turns: facts whose subject names the person and whose value is
    planted, by the same rule (the old extractor has no supersession, so changes are not scored)."""
    tally: Counter[str] = Counter()
    planted = {e["event_id"]: e["content"] for e in world.events if e["event_id"] in world.planted_ids}
    found = [s for text in planted.values() for s in statements(text) if s.subject != SELF]
    for person in world.people:
        for predicate, value in (("lives_in", person.city), ("lives_in", person.new_city),
                                 ("works_at", person.company), ("works_at", person.new_company)):
            tally["facts_planted"] += 1
            tally["facts_held"] += any(s.predicate == predicate and person.first in s.subject and said(s.object, value)
                                       for s in found)
    return tally


@pytest.mark.skipif(not LOCOMO.exists(), reason="the LoCoMo split is not on this machine")
def test_planted_facts_moves_and_corrections(tmp_path: Path, bench_report: BenchReport) -> None:
    from engram.bench.stack import embedded_clients

    rng = random.Random(SEED)
    worlds = [plant(conv, rng) for conv in load(LOCOMO)[:CONVERSATIONS]]
    tally: Counter[str] = Counter()
    baseline: Counter[str] = Counter()
    wrong: list[str] = []
    with embedded_clients(tmp_path / "data", embedder="hash") as clients:
        for world in worlds:
            _ingest(clients, world)
            _score_memory(clients, world, tally)
            _score_answers(clients, world, rng, tally, wrong)
            baseline += _regex_baseline(world)

    report = bench_report
    share = lambda n, d: tally[n] / tally[d] if tally[d] else 0.0  # noqa: E731
    report.add("planted facts held (recall)", share("facts_held", "facts_planted"), "share",
               baseline="regex statements", baseline_value=baseline["facts_held"] / baseline["facts_planted"])
    report.add("moves and corrections current", share("changes_held", "changes_planted"), "share")
    report.add("people held as one entity", share("one_entity", "people"), "share")
    report.add("answerable questions right", share("answerable_right", "answerable_asked"), "share")
    report.add("unanswerable answered 'I don't know'", share("unanswerable_right", "unanswerable_asked"), "share")
    report.add("wrong answers labelled high", tally["wrong_high"], "answers")
    report.context["counts"] = dict(tally)
    report.context["wrong_high"] = wrong
    assert tally["facts_planted"] == 4 * sum(len(w.people) for w in worlds)
