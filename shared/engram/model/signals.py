"""Signals: what a conversation decides, claims, aims at, is bound by, assumes, asks and cites."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field

from engram.model.common import Frozen, Record

SignalType = Literal["DecisionIntent", "Claim", "Goal", "Constraint", "Assumption", "Question", "EvidenceMention"]
SIGNAL_TYPES: tuple[SignalType, ...] = (
    "DecisionIntent", "Claim", "Goal", "Constraint", "Assumption", "Question", "EvidenceMention",
)
AssumptionStatus = Literal["untested", "confirmed", "challenged", "refuted"]


class Signal(Record):
    """One signal read from one event. Only an Assumption has a status, and it starts untested. A dismissed
    signal stays stored but leaves the conversation's lists and insights; said again later, it is stored anew."""

    world_id: str
    signal_id: str
    conversation_id: str
    user_id: str
    event_id: str
    signal_type: SignalType
    content: str
    content_hash: str = Field(description="sha256 of type:lowercased content, unique among the conversation's "
                                          "non-dismissed signals")
    confidence: float = Field(ge=0.0, le=1.0)
    assumption_status: AssumptionStatus | None = None
    occurred_at: datetime
    position: int = Field(default=0, ge=0, description="the sentence's place in its event")
    created_at: datetime
    updated_at: datetime
    dismissed_at: datetime | None = None


class AssumptionStatusChange(Frozen):
    """The body of `POST .../signals/{id}/status`."""

    status: AssumptionStatus


class SignalCursor(Frozen):
    """Where signal extraction stands in one conversation: the last event counted (the watermark),
    the events counted since the last extraction, and their characters. `version` guards the write
    against a concurrent extract step on the same conversation."""

    world_id: str
    conversation_id: str
    last_event_id: str
    last_occurred_at: datetime
    pending_event_ids: tuple[str, ...] = ()
    chars_since: int = 0
    version: int = 0

    @property
    def turns_since(self) -> int:
        return len(self.pending_event_ids)

    def has_read(self, event_id: str, occurred_at: datetime) -> bool:
        """Whether extraction has read this turn: behind the watermark and not waiting for a trigger."""
        return (occurred_at, event_id) <= (self.last_occurred_at, self.last_event_id) and \
            event_id not in self.pending_event_ids
