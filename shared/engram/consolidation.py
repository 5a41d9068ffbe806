"""Consolidation: distil what accumulated into summaries, without touching the raw events.

The state machine runs `plan` once, `consolidate_scope` per scope (a Map), then `finish_run`.
"""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field

from engram.ingest import sweep_stalled
from engram.model.common import new_id, utcnow
from engram.model.memories import MemorySummary
from engram.service import Clients


class Scope(BaseModel):
    world_id: str
    scope_kind: str = "conversation"
    scope_id: str
    user_id: str | None = None


class Plan(BaseModel):
    run_id: str
    scopes: list[Scope] = Field(default_factory=list)
    enrichments_restarted: int = 0


class ScopeResult(BaseModel):
    world_id: str
    scope_kind: str
    scope_id: str
    summarized: bool
    sources: int = 0


def plan(clients: Clients, world_id: str | None, *, now: datetime | None = None) -> Plan:
    """The scopes with new material since their last summary, bounded per run. The schedule also
    sweeps events whose enrichment start was lost, so nothing stays unenriched for long."""
    now = now or utcnow()
    run_id = new_id("run")
    swept = sweep_stalled(clients, world_id, now=now)
    limit = clients.heuristics.consolidation_max_scopes
    stale = clients.store.stale_conversations(world_id, limit)
    scopes = [Scope(world_id=w, scope_id=c, user_id=u) for w, u, c in stale]
    for w in sorted({s.world_id for s in scopes}):
        clients.store.start_run(w, run_id, now)
    return Plan(run_id=run_id, scopes=scopes, enrichments_restarted=len(swept.enrichment_ids))


def consolidate_scope(clients: Clients, scope: Scope, *, now: datetime | None = None) -> ScopeResult:
    """Summarize one conversation from its most important events and the facts drawn from it."""
    now = now or utcnow()
    h = clients.heuristics_for(scope.world_id)
    events = clients.store.conversation_events(scope.world_id, scope.scope_id, limit=200)
    if not events:
        return ScopeResult(world_id=scope.world_id, scope_kind=scope.scope_kind, scope_id=scope.scope_id,
                           summarized=False)
    facts = clients.store.conversation_facts(scope.world_id, scope.scope_id, h.summary_max_items)
    key_facts = [f"{f['subject']} {f['predicate'].replace('_', ' ')} {f['object_value']}" for f in facts]
    ranked = sorted(events, key=lambda e: (-e.importance, e.occurred_at))[: h.summary_max_items]
    items = key_facts + [e.content for e in sorted(ranked, key=lambda e: e.occurred_at)]
    reply = clients.llm.summarize(f"conversation {scope.scope_id}", items)
    existing = clients.store.get_summary(scope.world_id, "conversation", scope.scope_id)
    summary = MemorySummary(
        world_id=scope.world_id,
        summary_id=existing.summary_id if existing else new_id("sum"),
        user_id=scope.user_id or events[-1].user_id,
        scope_kind="conversation",
        scope_id=scope.scope_id,
        content=reply.value,
        key_facts=key_facts,
        source_ids=[e.event_id for e in ranked] + [f["memory_id"] for f in facts],
        confidence=min(h.max_confidence, max((f["confidence"] for f in facts), default=0.6)),
        created_at=now,
    )
    [embedding] = clients.embedder.embed([summary.content])
    clients.store.upsert_summary(summary, embedding)
    return ScopeResult(world_id=scope.world_id, scope_kind=scope.scope_kind, scope_id=scope.scope_id,
                       summarized=True, sources=len(summary.source_ids))


def finish_run(clients: Clients, run_id: str, results: list[ScopeResult], *, now: datetime | None = None) -> dict:
    """Record the run's counts per world."""
    now = now or utcnow()
    by_world: dict[str, int] = {}
    for r in results:
        by_world[r.world_id] = by_world.get(r.world_id, 0) + int(r.summarized)
    for world_id, summarized in by_world.items():
        clients.store.finish_run(world_id, run_id, now, {"summaries": summarized})
    return {"run_id": run_id, "scopes": len(results), "summaries": sum(by_world.values())}
