"""The request Powertools' resolver is serving, kept per thread.

Lambda serves one request per process, and Powertools' resolver keeps the request it is serving in class
attributes of `BaseRouter` (`current_event`, `lambda_context`) and in each resolver's `context` dict. The local
server runs the same handlers for many requests at once, each in a worker thread: with those attributes shared,
one request's route could read another's event (its body, its caller's worlds). `serve_per_thread()` makes each of
them per thread, once per process, before the first request."""

from __future__ import annotations

import threading
from abc import ABCMeta
from typing import Any

from aws_lambda_powertools.event_handler import api_gateway

_state = threading.local()
_lock = threading.Lock()


class _PerThread:
    """An attribute whose value is the calling thread's own: one per class (`current_event`), or one per instance
    (`context`, a dict that starts empty in each thread)."""

    def __init__(self, name: str, *, per_instance: bool = False, default: Any = None) -> None:
        self.name, self.per_instance, self.default = name, per_instance, default

    def _key(self, owner: object) -> tuple[str, int]:
        return (self.name, id(owner) if self.per_instance else 0)

    def __get__(self, obj: object, owner: type | None = None) -> Any:
        values = _values()
        key = self._key(obj)
        if key not in values:
            if self.name == "context":
                values[key] = {}
            else:
                return self.default
        return values[key]

    def __set__(self, obj: object, value: Any) -> None:
        _values()[self._key(obj)] = value


def _values() -> dict[tuple[str, int], Any]:
    """The calling thread's values."""
    values: dict[tuple[str, int], Any] | None = getattr(_state, "values", None)
    if values is None:
        values = _state.values = {}
    return values


class _RouterType(ABCMeta):
    """BaseRouter's metaclass made to route `BaseRouter.current_event = ...` (a class attribute) to the thread."""

    current_event = _PerThread("current_event")
    lambda_context = _PerThread("lambda_context")


def serve_per_thread() -> None:
    """Make the resolver's request state per thread (idempotent)."""
    with _lock:
        base = api_gateway.BaseRouter
        if isinstance(base, _RouterType):
            return
        # Instance reads and writes (`self.current_event`, `self.context = {}`) find these data descriptors first;
        # class writes (`BaseRouter.current_event = ...`) go through the metaclass's.
        base.current_event = _PerThread("current_event")  # type: ignore[assignment]
        base.lambda_context = _PerThread("lambda_context")  # type: ignore[assignment]
        base.context = _PerThread("context", per_instance=True)  # type: ignore[assignment]
        base.__class__ = _RouterType  # type: ignore[method-assign,assignment]
