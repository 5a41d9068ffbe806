"""What both clients share: the retry policy, the request's arguments and headers, reading a response, and a
correction's body."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

import httpx

from engram.sdk.routes import RETRY_STATUSES, Call, T, _error

ValidTime = Literal["valid_from", "valid_to"]


@dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff with full jitter; a `Retry-After` header wins when the server sends one."""

    max_retries: int = 3
    base_delay_s: float = 0.5
    max_delay_s: float = 20.0

    def delay(self, attempt: int, response: httpx.Response | None) -> float:
        after = response.headers.get("retry-after") if response is not None else None
        if after is not None:
            try:
                return min(self.max_delay_s, max(0.0, float(after)))
            except ValueError:
                pass
        return random.uniform(0, min(self.max_delay_s, self.base_delay_s * 2 ** attempt))


def headers(token: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"} if token else {}


def read(call: Call[T], response: httpx.Response) -> T:
    if response.status_code >= 400:
        raise _error(response)
    return call.parse(response if call.raw else response.json() if response.content else None)


def request_args(call: Call[Any]) -> dict[str, Any]:
    """The arguments of `httpx.Client.request` for a call."""
    return {"params": dict(call.params), "json": call.json, "content": call.content,
            "headers": dict(call.headers) or None}


def retryable(response: httpx.Response | None) -> bool:
    return response is None or response.status_code in RETRY_STATUSES


def correction(clear: Sequence[ValidTime], **fields: Any) -> dict[str, Any]:
    """A PATCH body of the fields given (datetimes as ISO 8601), and null for each valid time to clear."""
    body = {k: v.isoformat() if isinstance(v, datetime) else v for k, v in fields.items() if v is not None}
    return {**body, **{name: None for name in clear}}
