"""The insight store: inflections and interventions per conversation."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from engram.model.events import StoredEvent
from engram.model.insights import Inflection, InsightState, Intervention
from engram.model.signals import Signal


class InsightStore(Protocol):
    """Per-conversation insight state, inflections and interventions. Guarded writes (a checkpoint
    checked once, the intervention cooldown) are single conditional statements."""

    def sync_insight_states(self, world_id: str, conversation_ids: Sequence[str],
                            roles: Sequence[str]) -> dict[str, InsightState]:
        """Count each conversation's turns (stored `roles` messages) into its state; the states of the
        conversations that have a turn."""
        ...
    def insight_state(self, world_id: str, conversation_id: str) -> InsightState | None: ...
    def turn_window(self, world_id: str, conversation_id: str, roles: Sequence[str], turn: int,
                    limit: int) -> list[StoredEvent]:
        """The last `limit` messages up to and including the `turn`-th turn (1-based), oldest first."""
        ...
    def recent_signals(self, world_id: str, conversation_id: str, limit: int) -> list[Signal]:
        """A conversation's latest `limit` non-dismissed signals, in the order they were said."""
        ...
    def record_inflection_check(self, world_id: str, conversation_id: str, turn: int,
                                inflection: Inflection | None) -> bool:
        """Mark checkpoint `turn` checked with its inflection, if one counted; False (nothing stored)
        when it or a later checkpoint was checked already."""
        ...
    def current_inflection(self, world_id: str, conversation_id: str) -> Inflection | None: ...
    def offer_intervention(self, intervention: Intervention, cooldown_turns: int) -> bool:
        """Store it if the conversation's cooldown has passed at its turn; False when not offered."""
        ...
    def list_interventions(self, world_id: str, conversation_id: str,
                           status: str | None = None) -> list[Intervention]: ...
    def dismiss_intervention(self, world_id: str, conversation_id: str, intervention_id: str) -> Intervention | None:
        """The dismissed intervention (dismissing again changes nothing), None when unknown."""
        ...
