"""PostgreSQL repository: the per-conversation insight state, inflections and interventions. Every write
that a cooldown or a checkpoint guards is one conditional statement, so concurrent extract steps on the
same conversation cannot both pass the guard."""

from __future__ import annotations

from collections.abc import Sequence

from engram.adapters.postgres.base import PostgresBase
from engram.adapters.postgres.events import EVENT_COLUMNS
from engram.adapters.postgres.evidence import existing, live_events
from engram.adapters.postgres.signals import _SIGNAL
from engram.model.events import StoredEvent
from engram.model.insights import Inflection, InsightState, Intervention
from engram.model.signals import Signal

_STATE = "world_id, conversation_id, turns, checked_turn, inflection_turn, intervention_turn"
_INFLECTION = ("world_id, inflection_id, conversation_id, turn, kind, confidence, suggested_topic, rationale, "
               "signal_ids, event_ids, model, created_at")
_INTERVENTION = ("world_id, intervention_id, conversation_id, kind, status, message, signal_ids, turn, created_at, "
                 "dismissed_at")


class InsightRepo(PostgresBase):
    def sync_insight_states(self, world_id: str, conversation_ids: Sequence[str],
                            roles: Sequence[str]) -> dict[str, InsightState]:
        """Count each conversation's turns (its stored `roles` messages) into its state and return the
        states; a conversation without a turn has none. Counting, not incrementing: a re-run counts
        the same."""
        with self.tx(world_id) as cur:
            cur.execute(
                "INSERT INTO insight_states (world_id, conversation_id, turns) "
                "SELECT %s, conversation_id, count(*) FROM chat_events WHERE world_id = %s "
                "AND conversation_id = ANY(%s) AND role = ANY(%s) GROUP BY conversation_id "
                "ON CONFLICT (world_id, conversation_id) DO UPDATE SET turns = EXCLUDED.turns, updated_at = now() "
                "WHERE insight_states.turns IS DISTINCT FROM EXCLUDED.turns",
                (world_id, world_id, list(conversation_ids), list(roles)),
            )
            cur.execute(f"SELECT {_STATE} FROM insight_states WHERE world_id = %s AND conversation_id = ANY(%s)",
                        (world_id, list(conversation_ids)))
            return {r["conversation_id"]: InsightState.model_validate(r) for r in cur.fetchall()}

    def insight_state(self, world_id: str, conversation_id: str) -> InsightState | None:
        with self.tx(world_id) as cur:
            cur.execute(f"SELECT {_STATE} FROM insight_states WHERE world_id = %s AND conversation_id = %s",
                        (world_id, conversation_id))
            row = cur.fetchone()
        return InsightState.model_validate(row) if row else None

    def turn_window(self, world_id: str, conversation_id: str, roles: Sequence[str], turn: int,
                    limit: int) -> list[StoredEvent]:
        """The last `limit` messages (every role) up to and including the conversation's `turn`-th turn
        (1-based, turns being its `roles` messages in time order), oldest first."""
        with self.tx(world_id) as cur:
            cur.execute(
                "WITH turn AS (SELECT occurred_at AS turn_at, event_id AS turn_id FROM chat_events "
                "WHERE world_id = %s AND conversation_id = %s AND role = ANY(%s) "
                "ORDER BY occurred_at, event_id OFFSET %s LIMIT 1) "
                f"SELECT {EVENT_COLUMNS} FROM chat_events JOIN turn ON (occurred_at, event_id) <= (turn_at, turn_id) "
                "WHERE world_id = %s AND conversation_id = %s ORDER BY occurred_at DESC, event_id DESC LIMIT %s",
                (world_id, conversation_id, list(roles), max(0, turn - 1), world_id, conversation_id, limit),
            )
            return [StoredEvent.model_validate(r) for r in reversed(cur.fetchall())]

    def recent_signals(self, world_id: str, conversation_id: str, limit: int) -> list[Signal]:
        """A conversation's latest `limit` non-dismissed signals, in the order they were said."""
        with self.tx(world_id) as cur:
            cur.execute(
                f"SELECT {_SIGNAL} FROM (SELECT {_SIGNAL} FROM signals WHERE world_id = %s AND conversation_id = %s "
                "AND dismissed_at IS NULL ORDER BY occurred_at DESC, event_id DESC, position DESC LIMIT %s) AS latest "
                "ORDER BY occurred_at, event_id, position",
                (world_id, conversation_id, limit),
            )
            return [Signal.model_validate(r) for r in cur.fetchall()]

    def record_inflection_check(self, world_id: str, conversation_id: str, turn: int,
                                inflection: Inflection | None) -> bool:
        """Mark checkpoint `turn` checked and store its inflection (None: none counted), in one
        transaction. False, storing nothing, when that checkpoint or a later one was checked already."""
        if inflection is not None and (inflection.world_id, inflection.conversation_id, inflection.turn) != (
                world_id, conversation_id, turn):
            raise ValueError("the inflection belongs to another checkpoint")
        with self.tx(world_id) as cur:
            if inflection is not None and live_events(cur, world_id, inflection.event_ids) != set(inflection.event_ids):
                return False  # read from a turn erased meanwhile: checked again on a later batch, without it
            cur.execute(
                "INSERT INTO insight_states (world_id, conversation_id, checked_turn, inflection_turn) "
                "VALUES (%s, %s, %s, %s) ON CONFLICT (world_id, conversation_id) DO UPDATE SET "
                "checked_turn = EXCLUDED.checked_turn, "
                "inflection_turn = COALESCE(EXCLUDED.inflection_turn, insight_states.inflection_turn), "
                "updated_at = now() WHERE insight_states.checked_turn < EXCLUDED.checked_turn "
                "RETURNING conversation_id",
                (world_id, conversation_id, turn, turn if inflection is not None else None),
            )
            if cur.fetchone() is None:
                return False
            if inflection is not None:
                cur.execute(
                    f"INSERT INTO inflections ({_INFLECTION}) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) "
                    "ON CONFLICT DO NOTHING",
                    tuple(getattr(inflection, c) for c in _INFLECTION.split(", ")),
                )
            return True

    def current_inflection(self, world_id: str, conversation_id: str) -> Inflection | None:
        """The inflection of the conversation's latest check, when one counted there."""
        with self.tx(world_id) as cur:
            cur.execute(
                f"SELECT {', '.join('i.' + c for c in _INFLECTION.split(', '))} FROM insight_states s "
                "JOIN inflections i ON i.world_id = s.world_id AND i.conversation_id = s.conversation_id "
                "AND i.turn = s.checked_turn WHERE s.world_id = %s AND s.conversation_id = %s",
                (world_id, conversation_id),
            )
            row = cur.fetchone()
        return Inflection.model_validate(row) if row else None

    def offer_intervention(self, intervention: Intervention, cooldown_turns: int) -> bool:
        """Store an intervention when the conversation's cooldown has passed at its turn, and start the
        cooldown again there; one statement, so two steps cannot both pass. False when it was not offered."""
        i = intervention
        with self.tx(i.world_id) as cur:
            if existing(cur, i.world_id, "signals", "signal_id", i.signal_ids) != set(i.signal_ids):
                return False  # a signal it rests on was erased meanwhile
            cur.execute(
                "WITH slot AS (INSERT INTO insight_states (world_id, conversation_id, intervention_turn) "
                "VALUES (%s, %s, %s) ON CONFLICT (world_id, conversation_id) DO UPDATE SET "
                "intervention_turn = EXCLUDED.intervention_turn, updated_at = now() "
                "WHERE insight_states.intervention_turn IS NULL "
                "OR insight_states.intervention_turn <= EXCLUDED.intervention_turn - %s RETURNING 1) "
                f"INSERT INTO interventions ({_INTERVENTION}) "
                "SELECT %s, %s, %s, %s, %s, %s, %s, %s, %s, %s FROM slot "
                "ON CONFLICT DO NOTHING RETURNING intervention_id",
                (i.world_id, i.conversation_id, i.turn, cooldown_turns,
                 *(getattr(i, c) for c in _INTERVENTION.split(", "))),
            )
            return cur.fetchone() is not None

    def list_interventions(self, world_id: str, conversation_id: str,
                           status: str | None = None) -> list[Intervention]:
        """A conversation's interventions, newest first, optionally of one status."""
        with self.tx(world_id) as cur:
            cur.execute(
                f"SELECT {_INTERVENTION} FROM interventions WHERE world_id = %s AND conversation_id = %s "
                "AND (%s::text IS NULL OR status = %s) ORDER BY created_at DESC, turn DESC, intervention_id",
                (world_id, conversation_id, status, status),
            )
            return [Intervention.model_validate(r) for r in cur.fetchall()]

    def dismiss_intervention(self, world_id: str, conversation_id: str, intervention_id: str) -> Intervention | None:
        """Dismiss an intervention (again: a no-op that keeps the first dismissal's time); None when the
        conversation has no intervention of that id."""
        with self.tx(world_id) as cur:
            cur.execute(
                "UPDATE interventions SET status = 'dismissed', dismissed_at = COALESCE(dismissed_at, now()) "
                f"WHERE world_id = %s AND conversation_id = %s AND intervention_id = %s RETURNING {_INTERVENTION}",
                (world_id, conversation_id, intervention_id),
            )
            row = cur.fetchone()
        return Intervention.model_validate(row) if row else None
