"""Layer 1: chat events as agents send them and as they are stored (immutable)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import Field, field_validator

from engram.model.common import Frozen, Identifier, Record
from engram.model.jsonvalues import JSON_MAX_DEPTH, METADATA_MAX_BYTES, Metadata
from engram.model.search import DocKind

Role = Literal["user", "assistant", "system", "tool"]
ContentType = Literal[
    "userpreference", "factuallearning", "contextualfact", "default", "userinput", "assistantresponse"
]
EnrichmentStatus = Literal["pending", "enriching", "enriched", "failed"]

CONTENT_TYPE_BY_ROLE: dict[str, ContentType] = {
    "user": "userinput",
    "assistant": "assistantresponse",
    "system": "default",
    "tool": "default",
}


class EventIn(Frozen):
    """One event as an agent sends it."""

    event_id: Identifier | None = Field(default=None, description="Idempotency key; generated when absent")
    user_id: Identifier
    conversation_id: Identifier
    role: Role
    content: str = Field(min_length=1, max_length=32_000)
    content_type: ContentType | None = Field(default=None, description="Inferred from the role when absent")
    occurred_at: datetime | None = Field(default=None, description="Defaults to the time of receipt")
    metadata: Metadata = Field(default_factory=dict, description=f"any JSON object, objects and arrays nested at most "
                               f"{JSON_MAX_DEPTH} deep, at most {METADATA_MAX_BYTES:,} bytes as JSON")

    @field_validator("occurred_at")
    @classmethod
    def _in_utc(cls, value: datetime | None) -> datetime | None:
        """Stored in UTC: any offset a client sends (PostgreSQL takes none beyond 15:59), none read as UTC."""
        if value is None:
            return None
        try:
            return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
        except OverflowError as exc:
            raise ValueError("the time is out of range once in UTC") from exc


class IngestRequest(Frozen):
    events: list[EventIn] = Field(min_length=1, max_length=100)


class StoredEvent(Record):
    world_id: str
    event_id: str
    user_id: str
    conversation_id: str
    role: Role
    content: str
    content_type: ContentType
    occurred_at: datetime
    received_at: datetime
    metadata: dict[str, Any] = Field(default_factory=dict)
    importance: float = Field(ge=0.0, le=1.0)
    tags: list[str] = Field(default_factory=list)
    enrichment_status: EnrichmentStatus = "pending"
    enrichment_id: str | None = None
    enrichment_error: str | None = None


class IngestedEvent(Frozen):
    event_id: str
    importance: float
    tags: list[str]
    duplicate: bool
    enrichment_id: str | None
    enrichment_status: EnrichmentStatus | None = Field(default=None, description="with `wait`: the event's "
                                                       "enrichment status when the answer was sent")


class IngestResponse(Frozen):
    world_id: str
    accepted: int
    duplicates: int
    enrichment_id: str | None
    events: list[IngestedEvent]
    enrichment_status: EnrichmentStatus | None = Field(default=None, description=(
        "with `wait`: the batch's enrichment, `enriched` (every event), `failed` (some event failed, the others "
        "enriched), or `pending`/`enriching` when the wait timed out first (202)"))


class SweepRequest(Frozen):
    """Restart enrichment for a world's stalled events."""

    include_failed: bool = Field(default=False, description="also retry events whose enrichment failed")


class SweepResult(Frozen):
    events: int = Field(description="stalled events found")
    enrichment_ids: list[str] = Field(description="one enrichment started per batch of at most 100 events")
    not_started: int = Field(description="events whose enrichment could not be started (still pending)")


class WorldUser(Frozen):
    user_id: str
    events: int
    conversations: int
    last_event_at: datetime


class WorldSummary(Frozen):
    """A world that holds events: how many, from how many users and conversations, and the latest one's time."""

    world_id: str
    events: int
    users: int
    conversations: int
    last_event_at: datetime


def same_event(a: StoredEvent, b: StoredEvent) -> bool:
    """Whether two events of one event_id are one event sent twice: the same user, conversation, role and content
    (the time and metadata a client fills anew on a retry are not compared)."""
    return (a.user_id, a.conversation_id, a.role, a.content) == (b.user_id, b.conversation_id, b.role, b.content)


def conflicting_ids(sent: Sequence[StoredEvent], stored: Mapping[str, StoredEvent]) -> list[str]:
    """The event ids of `sent`, once each in the order sent, whose event differs from the one `stored` holds for
    that id, or from an earlier event of `sent` with that id (the first occurrence is the one kept)."""
    first: dict[str, StoredEvent] = {}
    found: list[str] = []
    for e in sent:
        kept = stored.get(e.event_id) or first.setdefault(e.event_id, e)
        if not same_event(e, kept) and e.event_id not in found:
            found.append(e.event_id)
    return found


class Erasure(Frozen):
    """What erasing a user removed: rows by table, and documents from the keyword index; the other users' rows that
    held something of the erased user's and were rebuilt without it; and when. Events the same user id sends after
    `erased_at` are a new start: they are kept and enriched."""

    world_id: str
    user_id: str
    deleted: dict[str, int]
    index_documents: int
    rebuilt: dict[str, int] = Field(default_factory=dict, description="other users' rows rebuilt without the "
                                                                      "erased user's, by table")
    erased_at: datetime | None = None


class ErasedRows(Frozen):
    """What the database erased in its one transaction, and what the domain rebuilds after it: the keyword-index
    documents to delete, the other users' facts that lose the erased user's restatements (their confidence is
    derived again) or that the erased user's words had overturned (active again: their edges come back), the
    other users' events whose vectors in context were read after an erased turn, and those whose episode (or
    fact) held the erased user's words (enriched again, so their memory is rebuilt from their own words)."""

    deleted: dict[str, int] = Field(default_factory=dict)
    rebuilt: dict[str, int] = Field(default_factory=dict)
    documents: list[tuple[DocKind, str]] = Field(default_factory=list)  # (kind, doc_id)
    facts_restated: list[str] = Field(default_factory=list)
    facts_restored: list[str] = Field(default_factory=list)
    events_to_embed: list[str] = Field(default_factory=list)
    events_to_enrich: list[str] = Field(default_factory=list)
    erased_at: datetime
