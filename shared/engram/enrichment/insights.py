"""Insights, part of the extract step right after signals: every few turns of a conversation, whether
its last messages are at an inflection point (research in depth, critique assumptions, synthesise and
decide), and whether its signals call for an intervention (organise questions, validate assumptions,
structure a case, organise signals), at most one every few turns and never one the user dismissed.

Idempotent: the turn count is derived from the stored events, a checkpoint is checked once and the
cooldown guards the offer, so a re-run of the step stores nothing new."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

from engram.enrichment.signals import event_signals
from engram.errors import ExtractionRejected, LLMUnavailable, NotFound
from engram.model.common import stable_id, utcnow
from engram.model.events import StoredEvent
from engram.model.heuristics import Heuristics
from engram.model.insights import ConversationInsights, Inflection, InsightState, Intervention, SuggestedResearch
from engram.model.signals import SIGNAL_TYPES, AssumptionStatus, Signal, SignalCursor, SignalType
from engram.model.world import World
from engram.observability import logger
from engram.ports import LLM, InsightStore, SignalStore, WindowEvent
from engram.rules.insights import (
    detect_intervention,
    inflection_checkpoint,
    inflection_counts,
    intervention_due,
)


class InsightReadStore(InsightStore, SignalStore, Protocol):
    """What insights read: the insight state, and the signals with the cursors of their extraction."""


class InsightPorts(Protocol):
    """The ports insights use: the insight store and the (fast) model that reads an inflection."""

    @property
    def store(self) -> InsightReadStore: ...
    def llm_for(self, world_id: str) -> LLM:
        """The model as the world may use it today (metered, the offline engine once its budget is spent)."""
        ...


ASSUMPTION_STATUSES: tuple[AssumptionStatus, ...] = ("untested", "confirmed", "challenged", "refuted")


def update_insights(clients: InsightPorts, world: World, events: Sequence[StoredEvent], *,
                    now: datetime | None = None) -> dict[str, int]:
    """Check the batch's conversations for an inflection (on a checkpoint turn) and an intervention
    (once the cooldown has passed); returns how many of each were newly stored."""
    world_id, h = world.world_id, world.heuristics
    now = now or utcnow()
    counts = {"inflections": 0, "interventions": 0}
    conversations = sorted({e.conversation_id for e in events if e.world_id == world_id})
    if not conversations:
        return counts
    states = clients.store.sync_insight_states(world_id, conversations, h.signals.signal_roles)
    cursors = clients.store.signal_cursors(world_id, conversations)
    for conversation_id in conversations:
        state = states.get(conversation_id)
        if state is None:  # no turn yet (only assistant or tool messages)
            continue
        checkpoint = inflection_checkpoint(state.turns, state.checked_turn, h)
        due = intervention_due(state.turns, state.intervention_turn, h)
        if checkpoint is None and not due:
            continue
        recent = clients.store.turn_window(world_id, conversation_id, h.signals.signal_roles, state.turns,
                                           h.insights.inflection_window_messages)
        signals = clients.store.recent_signals(world_id, conversation_id, h.insights.insight_max_signals)
        if checkpoint is not None:
            counts["inflections"] += _check_inflection(clients, state, checkpoint, recent, signals,
                                                       cursors.get(conversation_id), h, now)
        if due:
            counts["interventions"] += _offer_intervention(clients, state, recent, signals, h, now)
    return counts


def _check_inflection(clients: InsightPorts, state: InsightState, checkpoint: int, recent: list[StoredEvent],
                      stored: list[Signal], cursor: SignalCursor | None, h: Heuristics, now: datetime) -> int:
    """Read the last messages up to the checkpoint turn with the fast model; store the inflection when
    it counts. The checkpoint is marked checked either way, unless the model failed (then a later
    batch or a re-run checks it again: an insight never fails the enrichment)."""
    world_id, conversation_id = state.world_id, state.conversation_id
    window = recent if checkpoint == state.turns else clients.store.turn_window(
        world_id, conversation_id, h.signals.signal_roles, checkpoint, h.insights.inflection_window_messages)
    if not window:
        return 0
    signals = _signals_until(stored, window, cursor, h, now)
    try:
        reply = clients.llm_for(world_id).detect_inflection(
            [WindowEvent(event_id=e.event_id, role=e.role, content=e.content, occurred_at=e.occurred_at,
                         speaker=e.user_id) for e in window], signals, h=h)
    except (LLMUnavailable, ExtractionRejected) as exc:
        logger.warning("inflection check skipped", extra={"world_id": world_id, "conversation_id": conversation_id,
                                                          "turn": checkpoint, "error": exc.message})
        return 0
    assessment = reply.value
    inflection = None
    if inflection_counts(assessment, h) and assessment.kind is not None:
        known = {s.signal_id for s in signals}  # a model cannot rest a reading on a signal it invented
        inflection = Inflection(
            world_id=world_id, inflection_id=stable_id("inf", world_id, conversation_id, str(checkpoint)),
            conversation_id=conversation_id, turn=checkpoint, kind=assessment.kind,
            confidence=assessment.confidence, suggested_topic=assessment.suggested_topic,
            rationale=assessment.rationale, signal_ids=[i for i in dict.fromkeys(assessment.signal_ids) if i in known],
            event_ids=[e.event_id for e in window], model=reply.model, created_at=now)
    recorded = clients.store.record_inflection_check(world_id, conversation_id, checkpoint, inflection)
    return int(recorded and inflection is not None)


def _signals_until(stored: Sequence[Signal], window: Sequence[StoredEvent], cursor: SignalCursor | None,
                   h: Heuristics, now: datetime) -> list[Signal]:
    """The conversation's non-dismissed signals up to the window's last message. The window's turns extraction has
    not read yet (waiting for their trigger) are read by the signal rules too and count at their checkpoint, under
    the id extraction will store them with, unless a stored signal holds their dedup key (it carries the
    assumption's status). A turn already read counts by what was stored of it: a dismissed signal stays out."""
    end = (window[-1].occurred_at, window[-1].event_id)
    found = {s.content_hash: s for s in stored if (s.occurred_at, s.event_id) <= end}
    for event in window:
        if event.role in h.signals.signal_roles and (cursor is None or not cursor.has_read(event.event_id,
                                                                                            event.occurred_at)):
            for signal in event_signals(event.world_id, event, h, now):
                found.setdefault(signal.content_hash, signal)
    return sorted(found.values(), key=lambda s: (s.occurred_at, s.event_id, s.position))


def _offer_intervention(clients: InsightPorts, state: InsightState, recent: Sequence[StoredEvent],
                        signals: Sequence[Signal], h: Heuristics, now: datetime) -> int:
    """Offer the first intervention the stored signals call for, if the cooldown allows it at this turn."""
    if not signals:
        return 0
    world_id, conversation_id = state.world_id, state.conversation_id
    past = clients.store.list_interventions(world_id, conversation_id)
    turn_ids = [e.event_id for e in recent if e.role in h.signals.signal_roles]
    candidate = detect_intervention(signals, past, turn_ids, h)
    if candidate is None:
        return 0
    intervention = Intervention(
        world_id=world_id,
        intervention_id=stable_id("itv", world_id, conversation_id, candidate.kind, *sorted(candidate.signal_ids)),
        conversation_id=conversation_id, kind=candidate.kind, message=candidate.message(h),
        signal_ids=list(candidate.signal_ids), turn=state.turns, created_at=now)
    return int(clients.store.offer_intervention(intervention, h.insights.intervention_cooldown_turns))



# ---------------------------------------------------------------- the routes
def conversation_insights(clients: InsightPorts, world: World, conversation_id: str) -> ConversationInsights:
    """The current inflection, the open interventions and the signals by type with the assumptions'
    statuses. An unknown conversation has none of them."""
    world_id, h = world.world_id, world.heuristics
    state = clients.store.insight_state(world_id, conversation_id)
    signals = clients.store.recent_signals(world_id, conversation_id, h.insights.insight_max_signals)
    by_type: dict[SignalType, list[Signal]] = {t: [] for t in SIGNAL_TYPES}
    for s in signals:
        by_type[s.signal_type].append(s)
    statuses = Counter(s.assumption_status for s in by_type["Assumption"])
    inflection = clients.store.current_inflection(world_id, conversation_id)
    research = (SuggestedResearch(question=inflection.suggested_topic, conversation_id=conversation_id,
                                  inflection_id=inflection.inflection_id)
                if inflection is not None and inflection.kind == "research_depth" and inflection.suggested_topic
                else None)
    return ConversationInsights(
        world_id=world_id, conversation_id=conversation_id, turns=state.turns if state else 0,
        inflection=inflection, interventions=clients.store.list_interventions(world_id, conversation_id, "open"),
        signals=by_type, assumptions={status: statuses[status] for status in ASSUMPTION_STATUSES},
        suggested_research=research)


def dismiss_intervention(clients: InsightPorts, world_id: str, conversation_id: str,
                         intervention_id: str) -> Intervention:
    """Dismiss an intervention for good: it stays stored, dismissed, and is never offered again."""
    dismissed = clients.store.dismiss_intervention(world_id, conversation_id, intervention_id)
    if dismissed is None:
        raise NotFound(f"no intervention {intervention_id!r} in conversation {conversation_id!r} of world {world_id!r}")
    return dismissed
