"""Consolidation: memory improves while nobody talks to it. Summaries of conversations, users and entities
(and the facts they confirm made surer), procedural patterns from repetition, open conflicts the rules can
now settle, and facts that decayed away archived. Raw events are never changed; nothing is deleted.

The state machine runs `plan` once, `consolidate_scope` per summary scope (a Map with a catch per item: a
failed scope stays stale and is planned again next run), then per world for its upkeep (a second Map: it reads
what the summaries confirmed), then `finish_run`. Every scope of a run writes as of the plan's time, so running
a scope again changes nothing and a second run finds nothing new to do.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field

from engram.enrichment.indexing import index_pending
from engram.enrichment.ingest import sweep_stalled
from engram.memory.lifecycle import explained
from engram.model.common import new_id, stable_id, utcnow
from engram.model.heuristics import Heuristics
from engram.model.memories import ConfidenceFactors, MemorySummary, ProceduralMemory, SemanticMemory
from engram.model.world import World
from engram.ports import KnownFact
from engram.ports.clients import Clients
from engram.rules.confidence import confirmed, stored_confidence
from engram.rules.conflicts import Side, decide
from engram.rules.patterns import co_occurrences, pattern_confidence, recurring_facts

ScopeKind = Literal["conversation", "entity", "user", "world"]


class Scope(BaseModel):
    """One item of a Map. `world`: the world's upkeep (conflicts, forgetting); the others are summarized."""

    world_id: str
    scope_kind: ScopeKind = "conversation"
    scope_id: str
    user_id: str | None = None
    as_of: datetime | None = None  # the plan's time; None: now


class Plan(BaseModel):
    run_id: str
    as_of: datetime
    scopes: list[Scope] = Field(default_factory=list)  # to summarize
    worlds: list[Scope] = Field(default_factory=list)  # to keep up, after the summaries
    enrichments_restarted: int = 0


class ScopeResult(BaseModel):
    """What one scope did (small: a distributed Map returns every item's result in its output)."""

    world_id: str
    scope_kind: str
    scope_id: str
    summarized: bool = False
    sources: int = 0
    confirmed: int = 0
    procedures: int = 0
    conflicts_settled: int = 0
    archived: int = 0
    model_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    failed: bool = False
    error: str | None = None


def plan(clients: Clients, world: World | None, *, now: datetime | None = None) -> Plan:
    """The run's scopes, bounded: the conversations, users and entities with material newer than their summary
    (the longest waiting first), and the upkeep of each world with facts or open conflicts. The schedule also sweeps events whose enrichment start
    was lost, so nothing stays unenriched for long."""
    now = now or utcnow()
    run_id = new_id("run")
    swept = sweep_stalled(clients, world, now=now)
    world_id, h = (world.world_id, world.heuristics) if world else (None, clients.heuristics)
    limit = h.consolidation.consolidation_max_scopes
    worlds = [Scope(world_id=w, scope_kind="world", scope_id=w, as_of=now)
              for w in clients.store.worlds_to_maintain(world_id, limit)]
    stale = clients.store.stale_scopes(world_id, limit, min_facts=h.consolidation.summary_min_facts)
    scopes = [Scope.model_validate({"world_id": w, "scope_kind": kind, "scope_id": scope_id, "user_id": user_id,
                                     "as_of": now}) for w, kind, scope_id, user_id, _changed in stale]
    for w in sorted({s.world_id for s in [*scopes, *worlds]}):
        clients.store.start_run(w, run_id, now)
    return Plan(run_id=run_id, as_of=now, scopes=scopes, worlds=worlds, enrichments_restarted=len(swept.enrichment_ids))


def consolidate_scope(clients: Clients, world: World, scope: Scope, *, now: datetime | None = None) -> ScopeResult:
    """Consolidate one scope (of `world`) as of the plan's time."""
    as_of = scope.as_of or now or utcnow()
    h = world.heuristics
    decay_at = world_clock(clients, scope.world_id, as_of)
    if scope.scope_kind == "world":
        return _upkeep(clients, scope, h, as_of, decay_at)
    result = _summarize(clients, scope, h, as_of, decay_at)
    if scope.scope_kind == "user" and scope.user_id is not None:
        result.procedures = _procedures(clients, scope.world_id, scope.user_id, h, as_of)
    return result


def world_clock(clients: Clients, world_id: str, as_of: datetime) -> datetime:
    """The time decay is measured at: the world's latest event when it is older than `as_of`. A fact fades
    while the world goes on without restating it, not while nothing is said: an imported old conversation
    keeps its facts, and a live world's clock is the wall clock."""
    found = clients.store.worlds([world_id])
    return min(as_of, found[0].last_event_at) if found else as_of


def finish_run(clients: Clients, run_id: str, results: Sequence[ScopeResult], upkeep: Sequence[ScopeResult] = (),
               *, now: datetime | None = None) -> dict:
    """Bring the keyword index up to date with what the run wrote, and record the run's counts per world."""
    now = now or utcnow()
    everything = [*results, *upkeep]
    counted = ("summarized", "confirmed", "procedures", "conflicts_settled", "archived", "failed", "model_calls")
    by_world: dict[str, dict[str, int]] = defaultdict(lambda: dict.fromkeys(("scopes", *counted), 0))
    for r in everything:
        stats = by_world[r.world_id]
        stats["scopes"] += 1
        for key in counted:
            stats[key] += int(getattr(r, key))
    for world_id, stats in sorted(by_world.items()):
        index_pending(clients, world_id)
        clients.store.finish_run(world_id, run_id, now, {**stats, "failed_scopes": [
            f"{r.scope_kind}:{r.scope_id}" for r in everything if r.world_id == world_id and r.failed]})
    totals = {key: sum(s[key] for s in by_world.values()) for key in counted}
    return {"run_id": run_id, "scopes": len(everything), "summaries": totals.pop("summarized"), **totals}


# ---------------------------------------------------------------- summaries
def _summarize(clients: Clients, scope: Scope, h: Heuristics, as_of: datetime, decay_at: datetime) -> ScopeResult:
    """Synthesize a scope from its highest-scoring memories: its facts by effective confidence, its events by
    importance. The facts the summary confirms (the model says which) and that are still true (active, valid time
    open) are confirmed: +boost (under the cap) and validated now, once per run; the summary and those facts are
    written in one transaction."""
    store = clients.store
    result = ScopeResult(world_id=scope.world_id, scope_kind=scope.scope_kind, scope_id=scope.scope_id)
    facts = store.scope_facts(scope.world_id, scope.scope_kind, scope.scope_id, scope.user_id,
                              h.consolidation.summary_scope_facts)
    events = store.scope_events(scope.world_id, scope.scope_kind, scope.scope_id, scope.user_id,
                                h.consolidation.summary_max_items)
    if not facts and not events:
        return result
    # A fact that decayed below the archive threshold is not revived by re-reading old material: it is left out.
    scored = [(f, name, explained(f, h, decay_at).effective_confidence) for f, name in facts]
    ranked = sorted([x for x in scored if x[2] >= h.consolidation.archive_below_confidence],
                    key=lambda x: (-x[2], x[0].memory_id))[: h.consolidation.summary_max_items]
    # The chosen facts in a canonical order: this run's own boosts reorder scores, and a retried scope must
    # write the same summary.
    ranked.sort(key=lambda x: x[0].memory_id)
    events = sorted(events, key=lambda e: (e.occurred_at, e.event_id))
    offered = [KnownFact(memory_id=f.memory_id, subject=name, predicate=f.predicate, object=f.object_value)
               for f, name, _ in ranked]
    reply = clients.llm_for(scope.world_id).summarize(_label(scope, facts), [e.content for e in events], offered)
    result.model_calls, result.input_tokens, result.output_tokens = (
        1, reply.usage.sent_tokens, reply.usage.output_tokens)
    confirmed_ids = set(reply.value.confirmed_fact_ids)  # the model's word on which facts its summary states
    # Only a fact still true is confirmed: a restated old value (closed or superseded) keeps its confidence.
    kept = [(f, name) for f, name, _ in ranked if f.memory_id in confirmed_ids and _current(f)]
    boosted = [_confirm(f, h, as_of) for f, _ in kept if f.last_validated_at < as_of]
    effective = [explained(f, h, max(decay_at, f.last_validated_at)).effective_confidence for f, _ in kept]
    user_id = scope.user_id or (events[-1].user_id if events else None)
    summary = MemorySummary(
        world_id=scope.world_id, user_id=user_id, scope_kind=scope.scope_kind,  # type: ignore[arg-type]
        summary_id=stable_id("sum", scope.world_id, scope.scope_kind, scope.scope_id, user_id or ""),
        scope_id=scope.scope_id, content=reply.value.summary, key_facts=[f.statement(name) for f, name in kept],
        source_ids=[e.event_id for e in events] + [f.memory_id for f, _, _ in ranked],
        confidence=(round(sum(effective) / len(effective), 4) if effective
                    else h.consolidation.summary_default_confidence),
        created_at=as_of)
    [embedding] = clients.embedder.embed([summary.content])
    store.save_summary(summary, embedding, boosted)
    result.summarized, result.sources, result.confirmed = True, len(summary.source_ids), len(boosted)
    return result


def _current(fact: SemanticMemory) -> bool:
    """Whether a fact is still true: active, its valid time not closed."""
    return fact.status == "active" and fact.valid_to is None


def _confirm(fact: SemanticMemory, h: Heuristics, as_of: datetime) -> SemanticMemory:
    fact.factors = confirmed(fact.factors or ConfidenceFactors(base=fact.confidence), h.extract.max_confidence,
                             h.consolidation.consolidation_boost)
    fact.confidence = stored_confidence(fact.factors, h.extract.max_confidence)
    fact.last_validated_at = as_of  # validated: its decay starts again
    return fact


def _label(scope: Scope, facts: list[tuple[SemanticMemory, str]]) -> str:
    if scope.scope_kind == "entity":
        name = next((n for f, n in facts if f.subject_entity_id == scope.scope_id), scope.scope_id)
        return f"entity {name} (as {scope.user_id} knows it)"
    return f"{scope.scope_kind} {scope.scope_id}"


# ---------------------------------------------------------------- procedural memory
def _procedures(clients: Clients, world_id: str, user_id: str, h: Heuristics, as_of: datetime) -> int:
    """The user's patterns, written when new or when their support changed: entities brought up together in
    separate conversations, and facts stated again in separate conversations. Returns how many were written."""
    store = clients.store
    found = [*_co_occurring(clients, world_id, user_id, h, as_of), *_recurring(clients, world_id, user_id, h, as_of)]
    if not found:
        return 0
    known = {m.memory_id: m for m in store.user_memories(world_id, user_id, "procedural",
                                                         20 * h.consolidation.procedure_max_per_user)}
    written = 0
    for memory in found:
        old = known.get(memory.memory_id)
        if old is not None and (old.pattern, old.support_count, old.source_ids, round(old.confidence, 4)) == (
                memory.pattern, memory.support_count, memory.source_ids, memory.confidence):
            continue
        [vector] = clients.embedder.embed([memory.pattern])
        written += store.save_procedure(memory, vector)
    return written


def _co_occurring(clients: Clients, world_id: str, user_id: str, h: Heuristics,
                  as_of: datetime) -> list[ProceduralMemory]:
    """"When the user talks about X, Y comes up too": entities named together in separate conversations."""
    store = clients.store
    c = h.consolidation
    found = co_occurrences(store.user_entity_sightings(world_id, user_id, c.procedure_conversations),
                           c.procedure_min_support, c.procedure_min_lift)[: c.procedure_max_per_user]
    if not found:
        return []
    names = {e.entity_id: e.name for e in store.get_entities(world_id, sorted({i for p in found
                                                                                for i in (p.first, p.second)}))}
    return [ProceduralMemory(
        world_id=world_id, memory_id=stable_id("proc", world_id, user_id, p.first, p.second), user_id=user_id,
        pattern=f"When {user_id} talks about {names[p.first]}, {names[p.second]} comes up too",
        support_count=p.support, source_ids=list(p.event_ids),
        confidence=pattern_confidence(p.support, h.extract.max_confidence), created_at=as_of)
        for p in found if p.first in names and p.second in names]


def _recurring(clients: Clients, world_id: str, user_id: str, h: Heuristics,
               as_of: datetime) -> list[ProceduralMemory]:
    """"Acme's invoices are always paid late": a fact stated again in separate conversations, with the episodes
    (and events) it was stated in."""
    store = clients.store
    found = recurring_facts(store.user_fact_sightings(world_id, user_id, h.consolidation.procedure_conversations),
                            h.consolidation.procedure_min_support)[: h.consolidation.procedure_max_per_user]
    if not found:
        return []
    facts = {f.memory_id: f for f in store.get_semantic(world_id, [r.memory_id for r in found])}
    names = {e.entity_id: e.name for e in store.get_entities(world_id, sorted({
        f.subject_entity_id for f in facts.values()}))}
    return [ProceduralMemory(
        world_id=world_id, memory_id=stable_id("proc", world_id, user_id, "recurring", r.memory_id),
        user_id=user_id, pattern=f"Again and again: {fact.statement(names.get(fact.subject_entity_id, fact.subject_entity_id))}",
        support_count=r.support, source_ids=list(r.sources),
        confidence=pattern_confidence(r.support, h.extract.max_confidence), created_at=as_of)
        for r in found if (fact := facts.get(r.memory_id)) is not None]


# ---------------------------------------------------------------- a world's upkeep
def _upkeep(clients: Clients, scope: Scope, h: Heuristics, as_of: datetime, decay_at: datetime) -> ScopeResult:
    settled = _settle_conflicts(clients, scope.world_id, h, as_of, decay_at)
    archived = _forget(clients, scope.world_id, h, decay_at)
    return ScopeResult(world_id=scope.world_id, scope_kind=scope.scope_kind, scope_id=scope.scope_id,
                       conflicts_settled=settled, archived=archived)


def _settle_conflicts(clients: Clients, world_id: str, h: Heuristics, as_of: datetime, decay_at: datetime) -> int:
    """Open conflicts the rules (engram.rules.conflicts) can now settle, read with each side's effective
    confidence as of now: a side left unconfirmed decays, one restated or confirmed holds. The loser is
    superseded, never deleted, and the conflict records the strategy and why; the rest stay open for the user."""
    store = clients.store
    settled = 0
    for conflict in store.list_conflicts(world_id, "open"):
        sides = {f.memory_id: f for f in store.get_semantic(world_id, [conflict.memory_id,
                                                                       conflict.conflicting_memory_id])}
        old, new = sides.get(conflict.memory_id), sides.get(conflict.conflicting_memory_id)
        if old is None or new is None or old.status != "active" or new.status != "active":
            continue
        decision = decide(_side(old, h, decay_at), _side(new, h, decay_at), confidence_gap=h.extract.conflict_confidence_gap,
                          recency_gap_days=h.extract.conflict_recency_gap_days)
        if decision.winner is None:
            continue
        winner, loser = (new, old) if decision.winner == "new" else (old, new)
        loser.status = "superseded"
        loser.valid_to = winner.valid_from if loser is old and winner.valid_from else as_of
        what = f"'{old.predicate} {old.object_value}' and '{new.predicate} {new.object_value}'"
        done = conflict.model_copy(update={
            "status": "resolved", "strategy": decision.strategy, "winner_memory_id": winner.memory_id,
            "resolved_by": "rules", "resolved_at": as_of,
            "reason": f"{what}: {decision.reason} (settled at consolidation)"})
        if store.settle_conflict(done, [loser]):
            store.drop_relationship_source(world_id, loser.memory_id)
            settled += 1
    return settled


def _side(fact: SemanticMemory, h: Heuristics, as_of: datetime) -> Side:
    return Side(confidence=explained(fact, h, as_of).effective_confidence,
                source=fact.factors.source if fact.factors else "user", valid_at=fact.valid_from or fact.created_at)


def _forget(clients: Clients, world_id: str, h: Heuristics, as_of: datetime) -> int:
    """Archive the facts whose effective confidence decayed below the threshold as of the world's clock: kept,
    out of retrieval and of the keyword index, their edges gone from the graph; the events they came from are
    untouched."""
    oldest = clients.store.facts_least_validated(world_id, h.consolidation.consolidation_forget_batch)
    faded = [f.memory_id for f in oldest if explained(f, h, as_of).effective_confidence
             < h.consolidation.archive_below_confidence]
    for memory_id in faded:  # the edge first: a retry after a failure finds the fact still active
        clients.store.drop_relationship_source(world_id, memory_id)
    return len(clients.store.archive_facts(world_id, faded))


