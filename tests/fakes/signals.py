"""In-memory SignalStore and InsightStore: signals (deduplicated among a conversation's non-dismissed ones, with their
vectors) and their cursors, the
per-conversation insight state, inflections and interventions, with the guarded writes of PostgreSQL (a cursor
written only at the version it was read, a checkpoint checked once, the intervention cooldown)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from datetime import datetime

from engram.model.common import utcnow
from engram.model.events import StoredEvent
from engram.model.insights import Inflection, InsightState, Intervention
from engram.model.signals import AssumptionStatus, Signal, SignalCursor
from tests.fakes.memories import cosine
from tests.fakes.tables import Tables, copy


class InMemorySignalStore:
    t: Tables

    def _signals(self, world_id: str, conversation_id: str) -> list[Signal]:
        return sorted((s for s in self.t.of_world(self.t.signals, world_id) if s.conversation_id == conversation_id),
                      key=lambda s: (s.occurred_at, s.event_id, s.position))

    def insert_signals(self, world_id: str, signals: Sequence[Signal],
                       embeddings: Mapping[str, Sequence[float]] | None = None) -> list[str]:
        stored = []
        for s in signals:
            held = {x.content_hash for x in self._signals(world_id, s.conversation_id) if x.dismissed_at is None}
            key = (world_id, s.signal_id)
            if s.content_hash not in held and key not in self.t.signals and (world_id, s.event_id) in self.t.events:
                self.t.signals[key] = copy(s)
                if embeddings and s.signal_id in embeddings:
                    self.t.signal_vectors[key] = list(embeddings[s.signal_id])
                stored.append(s.signal_id)
        return stored

    def get_signal(self, world_id: str, signal_id: str) -> Signal | None:
        signal = self.t.signals.get((world_id, signal_id))
        return copy(signal) if signal else None

    def list_signals(self, world_id: str, conversation_id: str, signal_type: str | None = None,
                     limit: int = 200, *, include_dismissed: bool = False,
                     near: Sequence[float] | None = None) -> list[Signal]:
        found = [s for s in self._signals(world_id, conversation_id)
                 if signal_type in (None, s.signal_type) and (include_dismissed or s.dismissed_at is None)]
        if near is not None:  # the closest first, as pgvector's cosine distance orders them; no vector last
            def distance(s: Signal) -> float:
                v = self.t.signal_vectors.get((world_id, s.signal_id))
                return math.inf if v is None else 1.0 - cosine(v, near)
            found.sort(key=distance)
        return [copy(s) for s in found][:limit]

    def dismiss_signal(self, world_id: str, signal_id: str, at: datetime) -> Signal | None:
        signal = self.t.signals.get((world_id, signal_id))
        if signal is None:
            return None
        if signal.dismissed_at is None:
            signal.dismissed_at, signal.updated_at = at, utcnow()
        return copy(signal)

    def set_assumption_status(self, world_id: str, signal_id: str, status: AssumptionStatus) -> Signal | None:
        signal = self.t.signals.get((world_id, signal_id))
        if signal is None or signal.signal_type != "Assumption":
            return None
        signal.assumption_status, signal.updated_at = status, utcnow()
        return copy(signal)

    def signal_cursors(self, world_id: str, conversation_ids: Sequence[str]) -> dict[str, SignalCursor]:
        return {c: self.t.cursors[(world_id, c)] for c in conversation_ids if (world_id, c) in self.t.cursors}

    def save_signal_cursors(self, world_id: str, cursors: Sequence[SignalCursor]) -> set[str]:
        written = set()
        for c in cursors:
            stored = self.t.cursors.get((world_id, c.conversation_id))
            if (stored.version if stored else 0) == c.version:  # not moved by another writer since it was read
                self.t.cursors[(world_id, c.conversation_id)] = c.model_copy(update={"version": c.version + 1})
                written.add(c.conversation_id)
        return written


class InMemoryInsightStore:
    t: Tables

    def _turns(self, world_id: str, conversation_id: str, roles: Sequence[str]) -> list[StoredEvent]:
        return sorted((e for e in self.t.of_world(self.t.events, world_id)
                       if e.conversation_id == conversation_id and e.role in roles),
                      key=lambda e: (e.occurred_at, e.event_id))

    def _state(self, world_id: str, conversation_id: str) -> InsightState:
        return self.t.insight_states.get((world_id, conversation_id),
                                         InsightState(world_id=world_id, conversation_id=conversation_id))

    def sync_insight_states(self, world_id: str, conversation_ids: Sequence[str],
                            roles: Sequence[str]) -> dict[str, InsightState]:
        for c in conversation_ids:
            turns = len(self._turns(world_id, c, roles))
            if turns:
                self.t.insight_states[(world_id, c)] = self._state(world_id, c).model_copy(update={"turns": turns})
        return {c: self.t.insight_states[(world_id, c)] for c in conversation_ids
                if (world_id, c) in self.t.insight_states}

    def insight_state(self, world_id: str, conversation_id: str) -> InsightState | None:
        return self.t.insight_states.get((world_id, conversation_id))

    def turn_window(self, world_id: str, conversation_id: str, roles: Sequence[str], turn: int,
                    limit: int) -> list[StoredEvent]:
        turns = self._turns(world_id, conversation_id, roles)
        if not turns:
            return []
        last = turns[min(max(turn, 1), len(turns)) - 1]
        messages = sorted((e for e in self.t.of_world(self.t.events, world_id) if e.conversation_id == conversation_id
                           and (e.occurred_at, e.event_id) <= (last.occurred_at, last.event_id)),
                          key=lambda e: (e.occurred_at, e.event_id))
        return [copy(e) for e in messages[-limit:]]

    def recent_signals(self, world_id: str, conversation_id: str, limit: int) -> list[Signal]:
        signals = sorted((s for s in self.t.of_world(self.t.signals, world_id)
                          if s.conversation_id == conversation_id and s.dismissed_at is None),
                         key=lambda s: (s.occurred_at, s.event_id, s.position))
        return [copy(s) for s in signals[-limit:]] if limit > 0 else []

    def record_inflection_check(self, world_id: str, conversation_id: str, turn: int,
                                inflection: Inflection | None) -> bool:
        state = self._state(world_id, conversation_id)
        if state.checked_turn >= turn:
            return False
        self.t.insight_states[(world_id, conversation_id)] = state.model_copy(update={
            "checked_turn": turn, "inflection_turn": turn if inflection is not None else state.inflection_turn})
        if inflection is not None:
            self.t.inflections.setdefault((world_id, inflection.inflection_id), inflection)
        return True

    def current_inflection(self, world_id: str, conversation_id: str) -> Inflection | None:
        state = self.t.insight_states.get((world_id, conversation_id))
        return next((i for i in self.t.of_world(self.t.inflections, world_id) if state is not None
                     and i.conversation_id == conversation_id and i.turn == state.checked_turn), None)

    def offer_intervention(self, intervention: Intervention, cooldown_turns: int) -> bool:
        i = intervention
        if any((i.world_id, s) not in self.t.signals for s in i.signal_ids):
            return False  # a signal it rests on was erased meanwhile
        state = self._state(i.world_id, i.conversation_id)
        if state.intervention_turn is not None and state.intervention_turn > i.turn - cooldown_turns:
            return False
        self.t.insight_states[(i.world_id, i.conversation_id)] = state.model_copy(update={"intervention_turn": i.turn})
        if (i.world_id, i.intervention_id) in self.t.interventions:
            return False
        self.t.interventions[(i.world_id, i.intervention_id)] = i
        return True

    def list_interventions(self, world_id: str, conversation_id: str,
                           status: str | None = None) -> list[Intervention]:
        found = [i for i in self.t.of_world(self.t.interventions, world_id)
                 if i.conversation_id == conversation_id and status in (None, i.status)]
        return sorted(found, key=lambda i: (i.created_at, i.turn), reverse=True)

    def dismiss_intervention(self, world_id: str, conversation_id: str, intervention_id: str) -> Intervention | None:
        known = self.t.interventions.get((world_id, intervention_id))
        if known is None or known.conversation_id != conversation_id:
            return None
        dismissed = known.model_copy(update={"status": "dismissed", "dismissed_at": known.dismissed_at or utcnow()})
        self.t.interventions[(world_id, intervention_id)] = dismissed
        return dismissed
