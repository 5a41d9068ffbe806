"""Domain errors.

Their class names are part of the contract: the state machines retry and catch on them
(`TransientStoreError`, `LLMUnavailable`, ...), and the API maps them to HTTP statuses.
Adapters translate driver and SDK errors into these once, at the edge.
"""

from __future__ import annotations

from typing import Any


class EngramError(Exception):
    """Base of every error engram raises on purpose."""

    code = "internal_error"
    status = 500

    def __init__(self, message: str, details: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.details = details


class InvalidInput(EngramError):
    code = "invalid_input"
    status = 422


class NotFound(EngramError):
    code = "not_found"
    status = 404


class Conflict(EngramError):
    code = "conflict"
    status = 409


class EventIdConflict(Conflict):
    """A batch sent an event_id the world holds (or the batch repeats) with other content: the batch is refused
    whole. `details` names the event ids."""

    code = "event_id_conflict"

    @classmethod
    def of(cls, event_ids: list[str]) -> EventIdConflict:
        """The refusal naming each event id sent again with other content."""
        return cls(f"event ids already used for other content: {', '.join(event_ids)}; nothing of the batch "
                   "was stored (send a new event_id, or the event exactly as first sent)", {"event_ids": event_ids})


class UnknownWorld(NotFound):
    """A world that holds no event: nothing can be asked of it."""

    code = "unknown_world"


class Unauthorized(EngramError):
    code = "unauthorized"
    status = 401


class Forbidden(EngramError):
    code = "forbidden"
    status = 403


class PayloadTooLarge(EngramError):
    code = "payload_too_large"
    status = 413


class MalformedBody(EngramError):
    """The body cannot be read at all (not UTF-8, nested beyond any use)."""

    code = "malformed_json"
    status = 400


class UnsupportedMediaType(EngramError):
    code = "unsupported_media_type"
    status = 415


class ConfigurationError(EngramError):
    """A setting is missing or contradicts another; raised at cold start."""

    code = "configuration_error"


class TransientStoreError(EngramError):
    """The database or index could not be reached; retrying may succeed."""

    code = "store_unavailable"
    status = 503


class LLMUnavailable(EngramError):
    """The model provider refused or failed (rate limit, overload, timeout); retry later."""

    code = "llm_unavailable"
    status = 503


class ExtractionRejected(EngramError):
    """The model's structured output failed validation twice; the window is marked failed."""

    code = "extraction_rejected"


class CapabilityRejected(EngramError):
    """An info request named a capability or parameters outside what the context allows."""

    code = "capability_rejected"
    status = 422
