"""Research mode of engram-query: after `init`, the model plans sub-questions, `gather` runs their
capability requests, `evaluate` checks completeness (and may send the research back to gather, at most
`max_research_iterations` rounds in all), and `synthesize` answers with citations, naming the
conflicting evidence among the sources.

Like the loop's steps, each takes and returns a small state; the plan and its progress live in the
WorldQuery (`research`), the gathered items in the QueryContext, both under the query id. Each step is
idempotent on (query id, iteration): Express workflows run at least once.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any, Literal, Protocol

from pydantic import BaseModel

from engram.errors import CapabilityRejected, ExtractionRejected, LLMUnavailable
from engram.model.context import QueryContext
from engram.model.heuristics import Heuristics
from engram.model.memories import SemanticMemory
from engram.model.queries import Answer, Source, WorldQuery
from engram.model.research import EvidenceConflict, PlannedSubQuestion, ResearchReport, SubQuestion
from engram.model.world import World
from engram.observability import logger
from engram.ports import ContextDigest, LLMReply
from engram.query import budget, capabilities
from engram.query import offer as offers
from engram.query.loop import (
    LoopPorts,
    LoopState,
    LoopStore,
    _done,
    _grounded,
    _load,
    _model_wait,
    _record_usage,
    _traced,
    offline_labelled,
)

ResearchOutcome = Literal["planned", "gathered", "incomplete", "complete", "answer"]


class ResearchStore(LoopStore, Protocol):
    """What research reads and writes: the loop's, and the facts on either side of a conflict (of `MemoryStore`)."""

    def get_semantic(self, world_id: str, memory_ids: Sequence[str]) -> list[SemanticMemory]: ...


class ResearchPorts(LoopPorts, Protocol):
    """The ports the research steps use: the loop's, with a store that also reads facts by id."""

    @property
    def store(self) -> ResearchStore: ...


class ResearchState(BaseModel):
    world_id: str
    query_id: str
    iteration: int = 0  # gathering rounds run
    outcome: ResearchOutcome | None = None  # the completeness Choice routes on "incomplete"
    remaining_iterations: int = 0  # further gathering rounds the completeness check may still start


def _load_research(clients: ResearchPorts, state: ResearchState | LoopState
                   ) -> tuple[WorldQuery, QueryContext, ResearchReport]:
    query, context = _load(clients, LoopState(world_id=state.world_id, query_id=state.query_id))
    assert context is not None, "init stores the context before the research starts"
    return query, context, query.research or ResearchReport()


def _state(query: WorldQuery, iteration: int, outcome: ResearchOutcome) -> ResearchState:
    report = query.research or ResearchReport()
    return ResearchState(world_id=query.world_id, query_id=query.query_id, iteration=iteration, outcome=outcome,
                         remaining_iterations=report.remaining_iterations)


def plan(clients: ResearchPorts, world: World, state: ResearchState | LoopState) -> ResearchState:
    """The model breaks the question into sub-questions, each with the capability requests to answer it."""
    query, context, _ = _load_research(clients, state)
    if _done(query, 0, "plan"):
        return _state(query, 0, "planned")
    h = world.heuristics
    with _traced(query, 0, "plan") as record:
        with _model_wait(record):
            reply = clients.llm_for(query.world_id).plan_research(
                context, max_sub_questions=h.query.research_max_sub_questions)
        _record_usage(query, record, reply.usage, reply.model, reply.fallback)
        planned = reply.value.sub_questions[: h.query.research_max_sub_questions]
        query.research = ResearchReport(sub_questions=_numbered(planned, 1, 1),
                                        max_iterations=query.config.max_research_iterations,
                                        budgets=budget.research_budgets(h))
        record["outcome"] = "planned"
        record["detail"].update(sub_questions=[s.question for s in planned], rationale=reply.value.rationale)
    clients.store.save_query(query)
    return _state(query, 0, "planned")


def gather(clients: ResearchPorts, world: World, state: ResearchState) -> ResearchState:
    """Run the pending sub-questions' requests (each validated against what the context holds; a rejected
    one is noted and skipped), bring in both sides of any conflicting evidence, then thin to the budgets."""
    query, context, report = _load_research(clients, state)
    iteration = state.iteration + 1
    if _done(query, iteration, "gather"):
        return _state(query, iteration, "gathered")
    h = world.heuristics
    with _traced(query, iteration, "gather") as record:
        served = rejected = added = 0
        gathered: dict[str, SubQuestion] = {}
        for sub in report.pending():
            evidence, refused = list(sub.evidence), list(sub.rejected)
            for request in sub.requests:
                try:  # the offer is rebuilt per request: an earlier request may have brought the id in
                    typed = offers.offer(context).validate(request)
                except CapabilityRejected as exc:
                    refused.append(exc.message)
                    rejected += 1
                    continue
                items = offers.execute(clients, world, context, query.user_id, typed)
                added += context.merge(items)
                for entity_id in capabilities.expanded_ids(typed):
                    context.mark_expanded(entity_id)
                evidence += [i.id for i in items]
                served += 1
            gathered[sub.sub_id] = sub.model_copy(update={"status": "gathered", "rejected": refused,
                                                          "evidence": list(dict.fromkeys(evidence))})
        conflicts = conflicting_evidence(clients, query, context, h)
        protected = {i for c in conflicts for i in c.ids}
        protected |= {s.evidence[0] for s in gathered.values() if s.evidence}
        digests: list[LLMReply[ContextDigest]] = []
        tokens, measures = budget.thin_research(context, h, frozenset(protected),
                                                digest=_digester(clients, query, record, h, digests))
        sent = context.stats(h.query.chars_per_token).estimated_tokens
        report = report.model_copy(update={
            "sub_questions": [gathered.get(s.sub_id, s) for s in report.sub_questions], "iterations": iteration,
            "conflicts": conflicts, "peak_gathered_tokens": max(report.peak_gathered_tokens, tokens),
            "peak_sent_tokens": max(report.peak_sent_tokens, sent),
            "thinned": list(dict.fromkeys([*report.thinned, *measures]))})
        query.research = report
        record["outcome"] = "gathered"
        record["detail"] = {"sub_questions": list(gathered), "served": served, "rejected": rejected,
                            "items_added": added, "conflicts": len(conflicts), "gathered_tokens": tokens,
                            "estimated_tokens": sent, "budget": h.query.research_drop_tokens}
        if measures:
            record["detail"]["thinned"] = measures
        for reply in digests:  # the compaction digest's model call, counted with the query's
            _record_usage(query, record, reply.usage, reply.model, reply.fallback)
            record["detail"]["digest_model"] = reply.model
    clients.store.save_context(context)
    clients.store.save_query(query)
    return _state(query, iteration, "gathered")


def _digester(clients: ResearchPorts, query: WorldQuery, record: dict[str, Any], h: Heuristics,
              replies: list[LLMReply[ContextDigest]]) -> budget.Digester:
    """The model's compaction digest for `thin_research` (its reply kept in `replies`); None when the call
    failed, and the context is compacted by rules: thinning never fails the research."""
    def digest(context: QueryContext) -> ContextDigest | None:
        try:
            with _model_wait(record):
                reply = clients.llm_for(query.world_id).digest(context, keep_lines=h.query.context_compact_conversation)
        except (LLMUnavailable, ExtractionRejected) as exc:
            logger.warning("research context digest failed, compacted by rules", extra={"query_id": query.query_id,
                                                                                        "error": exc.message})
            return None
        replies.append(reply)
        return reply.value
    return digest


def evaluate(clients: ResearchPorts, world: World, state: ResearchState) -> ResearchState:
    """The completeness check: mark the sub-questions the context answers; when the model finds the research
    incomplete and rounds remain, its follow-up sub-questions are the next round's."""
    query, context, report = _load_research(clients, state)
    iteration = state.iteration
    previous = _done(query, iteration, "evaluate")
    if previous is not None:
        return _state(query, iteration, "incomplete" if previous.outcome == "incomplete" else "complete")
    h = world.heuristics
    can_continue = report.remaining_iterations > 0
    with _traced(query, iteration, "evaluate") as record:
        with _model_wait(record):
            reply = clients.llm_for(query.world_id).evaluate_research(
                context, report.sub_questions, can_continue=can_continue,
                max_follow_ups=h.query.research_max_follow_ups)
        _record_usage(query, record, reply.usage, reply.model, reply.fallback)
        verdict = reply.value
        answered = set(verdict.answered)
        subs = [s.model_copy(update={"status": "answered" if s.sub_id in answered else "unanswered"})
                if s.status in ("gathered", "unanswered") else s for s in report.sub_questions]
        follow_ups = _numbered(verdict.follow_ups[: h.query.research_max_follow_ups], len(subs) + 1, iteration + 1)
        complete = verdict.complete or all(s.status == "answered" for s in subs)
        # A follow-up round that gathered nothing new leaves the next check where this one is: stop spending.
        stalled = iteration > 1 and any(t.step == "gather" and t.iteration == iteration
                                        and t.detail.get("items_added") == 0 for t in query.trace)
        more = not complete and can_continue and bool(follow_ups) and not stalled
        query.research = report.model_copy(update={
            "sub_questions": subs + (follow_ups if more else []), "complete": complete,
            "notes": [*report.notes, verdict.notes] if verdict.notes else report.notes})
        record["outcome"] = "incomplete" if more else "complete"
        record["detail"].update(answered=sorted(answered), complete=complete,
                                follow_ups=[s.question for s in follow_ups] if more else [],
                                estimated_tokens=context.stats(h.query.chars_per_token).estimated_tokens)
        if not complete and not can_continue:
            record["detail"]["stopped"] = "no research iterations left"
        elif not complete and stalled:
            record["detail"]["stopped"] = "the last round gathered nothing new"
    clients.store.save_query(query)
    return _state(query, iteration, "incomplete" if more else "complete")


def synthesize(clients: ResearchPorts, world: World, state: ResearchState) -> ResearchState:
    """The answer: cites the items it rests on, names each conflicting pair of sources (both cited)."""
    query, context, report = _load_research(clients, state)
    iteration = state.iteration
    if _done(query, iteration, "synthesize"):
        return _state(query, iteration, "answer")
    h = world.heuristics
    with _traced(query, iteration, "synthesize") as record:
        with _model_wait(record):
            reply = clients.llm_for(query.world_id).synthesize(context, report.sub_questions, report.conflicts,
                                                               temperature=query.config.temperature)
        _record_usage(query, record, reply.usage, reply.model, reply.fallback)
        query.answer = _grounded(offline_labelled(_citing_conflicts(reply.value, report.conflicts, context),
                                                  reply.fallback), context, h)
        record["outcome"] = "answer"
        record["detail"].update(confidence=query.answer.confidence, sources=len(query.answer.sources),
                                conflicts=len(report.conflicts),
                                estimated_tokens=context.stats(h.query.chars_per_token).estimated_tokens)
    clients.store.save_query(query)
    return _state(query, iteration, "answer")


def conflicting_evidence(clients: ResearchPorts, query: WorldQuery, context: QueryContext,
                         h: Heuristics) -> list[EvidenceConflict]:
    """The recorded conflicts touching the context's facts or entities, and the context's facts that
    contradict each other unrecorded (one subject, a single-valued predicate, two values). Both sides of
    each are merged into the context, so the synthesis can cite them."""
    store, world_id = clients.store, query.world_id
    fact_ids = [i.id for i in context.items if i.kind == "semantic"]
    recorded = store.conflicts_touching(world_id, query.user_id, fact_ids, context.all_entity_ids(),
                                        h.query.research_max_conflicts)
    wanted = list(dict.fromkeys([*fact_ids, *(i for c in recorded for i in (c.memory_id, c.conflicting_memory_id))]))
    facts = {f.memory_id: f for f in store.get_semantic(world_id, wanted) if f.user_id == query.user_id}
    context.merge(capabilities.fact_items(clients, world_id, [facts[i] for i in wanted if i in facts]))
    text = {i.id: i.text for i in context.items}
    found: list[EvidenceConflict] = []
    pairs: set[frozenset[str]] = set()
    for c in recorded:
        if c.memory_id in facts and c.conflicting_memory_id in facts:
            pairs.add(frozenset((c.memory_id, c.conflicting_memory_id)))
            found.append(EvidenceConflict(kind="memory_conflict", ids=(c.memory_id, c.conflicting_memory_id),
                                          statements=(text[c.memory_id], text[c.conflicting_memory_id]),
                                          status="open" if c.status == "open" else "resolved",
                                          conflict_id=c.conflict_id, winner_id=c.winner_memory_id))
    for a, b in _contradicting([facts[i] for i in fact_ids if i in facts], h):
        if frozenset((a.memory_id, b.memory_id)) not in pairs:
            found.append(EvidenceConflict(kind="contradicting_facts", ids=(a.memory_id, b.memory_id),
                                          statements=(text[a.memory_id], text[b.memory_id]), status="unrecorded"))
    return found[: h.query.research_max_conflicts]


def _contradicting(facts: list[SemanticMemory], h: Heuristics) -> list[tuple[SemanticMemory, SemanticMemory]]:
    """Pairs of facts of one subject and single-valued predicate with different values, both still held."""
    by_slot: dict[tuple[str, str], list[SemanticMemory]] = defaultdict(list)
    for fact in facts:
        if h.extract.single_valued(fact.predicate) and fact.status == "active":
            by_slot[(fact.subject_entity_id, fact.predicate)].append(fact)
    pairs = []
    for slot in by_slot.values():
        for n, a in enumerate(slot):
            pairs += [(a, b) for b in slot[n + 1:] if a.object_value.strip().lower() != b.object_value.strip().lower()]
    return pairs


def _numbered(planned: list[PlannedSubQuestion], first: int, iteration: int) -> list[SubQuestion]:
    return [SubQuestion(sub_id=f"s{n}", question=p.question, requests=list(p.requests), iteration=iteration)
            for n, p in enumerate(planned, first)]


def _citing_conflicts(answer: Answer, conflicts: list[EvidenceConflict], context: QueryContext) -> Answer:
    """Both sides of every conflict among the sources: a synthesis that names a conflict cites it whole."""
    cited = {s.id for s in answer.sources}
    by_id = {i.id: i for i in context.items}
    missing = [i for c in conflicts for i in c.ids if i not in cited and i in by_id]
    # Named, not relied on: a side the model left out carries no share of the answer.
    extra = [Source(kind="semantic", id=i, excerpt=by_id[i].text[:200], score=by_id[i].score, contribution=0.0)
             for i in dict.fromkeys(missing)]
    return answer.model_copy(update={"sources": [*answer.sources, *extra]}) if extra else answer
