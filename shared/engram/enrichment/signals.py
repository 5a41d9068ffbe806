"""Signal extraction, part of the extract step: each conversation's new turns are counted against the
trigger rule, the windows it cuts are read for typed signals by the offline rules, and the signals are
stored with their vectors once among each conversation's non-dismissed signals (one embedding call and one
deduplicating insert per batch). Then the assumption lifecycle, dismissal, and the conversation's signals
listed in order or ranked by meaning."""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

from engram.errors import InvalidInput, NotFound, TransientStoreError
from engram.model.common import utcnow
from engram.model.events import StoredEvent
from engram.model.heuristics import Heuristics
from engram.model.signals import AssumptionStatus, Signal
from engram.model.world import World
from engram.observability import logger
from engram.ports.embedder import Embedder
from engram.ports.events import EventStore
from engram.ports.signals import SignalStore
from engram.rules.signals import SignalPlan, classify_signals, plan_signals, signal_key


class SignalExtractStore(EventStore, SignalStore, Protocol):
    """What signal extraction reads and writes: the turns waiting since an earlier batch, the signals and cursors."""


class SignalPorts(Protocol):
    """The ports signal extraction and the signal routes use."""

    @property
    def store(self) -> SignalExtractStore: ...
    @property
    def embedder(self) -> Embedder: ...

# A cursor another extract step moved meanwhile is re-read and the conversation planned again;
# past this many rounds the step fails as transient and the state machine retries it.
CURSOR_ROUNDS = 3


def extract_signals(clients: SignalPorts, world: World, events: Sequence[StoredEvent], *,
                    now: datetime | None = None) -> dict[str, int]:
    """Read a batch's conversations for signals; returns counts (`signals` newly stored). Idempotent:
    a re-run finds its events behind the watermark, reads them again and stores nothing new."""
    world_id, h = world.world_id, world.heuristics
    now = now or utcnow()
    by_conversation: dict[str, list[StoredEvent]] = defaultdict(list)
    for e in events:
        if e.world_id == world_id and e.role in h.signals.signal_roles:
            by_conversation[e.conversation_id].append(e)
    counts = {"signal_windows": 0, "signals_found": 0, "signals": 0}
    vectors: dict[str, list[float]] = {}  # by content: a round planned again embeds nothing twice
    todo = sorted(by_conversation)
    for _round in range(CURSOR_ROUNDS):
        if not todo:
            return counts
        cursors = clients.store.signal_cursors(world_id, todo)
        plans = [plan_signals(world_id, c, cursors.get(c), by_conversation[c], h) for c in todo]
        signals = _read(clients, world_id, plans, {e.event_id: e for e in events}, h, now)
        counts["signal_windows"] += sum(len(p.windows) for p in plans)
        counts["signals_found"] += len(signals)
        missing = [c for c in dict.fromkeys(s.content for s in signals) if c not in vectors]
        if missing:
            vectors.update(zip(missing, clients.embedder.embed(missing), strict=True))
        stored = clients.store.insert_signals(world_id, signals, {s.signal_id: vectors[s.content] for s in signals})
        counts["signals"] += len(stored)
        moved = [p.cursor for p in plans if p.cursor is not None]
        saved = clients.store.save_signal_cursors(world_id, moved)
        todo = sorted(c.conversation_id for c in moved if c.conversation_id not in saved)
        if todo:
            logger.info("signal cursors moved concurrently; planning again",
                        extra={"world_id": world_id, "conversations": todo})
    if todo:
        raise TransientStoreError(f"signal cursors of {todo} kept moving; retry the step")
    return counts


def _read(clients: SignalPorts, world_id: str, plans: Sequence[SignalPlan], known: dict[str, StoredEvent],
          h: Heuristics, now: datetime) -> list[Signal]:
    """The signals of every window and revisited event, each conversation's first occurrence kept."""
    wanted = [i for p in plans for w in p.windows for i in w.event_ids] + [i for p in plans for i in p.revisit]
    missing = [i for i in dict.fromkeys(wanted) if i not in known]  # turns waiting since an earlier batch
    by_id = {**known, **{e.event_id: e for e in clients.store.get_events(world_id, missing)}} if missing else known
    found: dict[tuple[str, str], Signal] = {}
    for event_id in wanted:
        event = by_id.get(event_id)
        if event is None:
            continue
        for signal in event_signals(world_id, event, h, now):
            found.setdefault((event.conversation_id, signal.content_hash), signal)
    return sorted(found.values(), key=lambda s: (s.occurred_at, s.event_id, s.position))


def event_signals(world_id: str, event: StoredEvent, h: Heuristics, now: datetime) -> list[Signal]:
    """The signals the offline rules read in one event, as extraction stores them (same ids)."""
    signals = []
    for candidate in classify_signals(event.content, h):
        key = signal_key(candidate.signal_type, candidate.content, casefold=h.signals.signal_key_casefold)
        signals.append(Signal(
            world_id=world_id, signal_id=signal_id(world_id, event.conversation_id, key, event.event_id),
            conversation_id=event.conversation_id, user_id=event.user_id, event_id=event.event_id,
            signal_type=candidate.signal_type, content=candidate.content, content_hash=key,
            confidence=candidate.confidence,
            assumption_status="untested" if candidate.signal_type == "Assumption" else None,
            occurred_at=event.occurred_at, position=candidate.position, created_at=now, updated_at=now,
        ))
    return signals


def signal_id(world_id: str, conversation_id: str, content_hash: str, event_id: str) -> str:
    """Derived from the dedup key and the turn that said it, so the same signal has the same id on every run and,
    said again after a dismissal, is stored under a new one."""
    return "sig_" + hashlib.sha256(
        f"{world_id}\x1f{conversation_id}\x1f{content_hash}\x1f{event_id}".encode()).hexdigest()[:32]


def list_signals(clients: SignalPorts, world_id: str, conversation_id: str, signal_type: str | None = None,
                 limit: int = 200, *, include_dismissed: bool = False, q: str | None = None) -> list[Signal]:
    """A conversation's signals in the order they were said, optionally of one type, the dismissed ones only when
    asked; with `q`, the closest in meaning to it first (cosine similarity of the signals' stored vectors)."""
    near = clients.embedder.embed([q])[0] if q else None
    return clients.store.list_signals(world_id, conversation_id, signal_type, limit,
                                      include_dismissed=include_dismissed, near=near)


def dismiss_signal(clients: SignalPorts, world_id: str, signal_id: str, *, now: datetime | None = None) -> Signal:
    """Dismiss a signal: it stays stored, leaves the conversation's lists and insights, and no longer holds its dedup
    key (said again, it is stored anew). Dismissing twice keeps the first time."""
    dismissed = clients.store.dismiss_signal(world_id, signal_id, now or utcnow())
    if dismissed is None:
        raise NotFound(f"no signal {signal_id!r} in world {world_id!r}")
    return dismissed


def set_assumption_status(clients: SignalPorts, world_id: str, signal_id: str, status: AssumptionStatus) -> Signal:
    """Move an assumption through its lifecycle (untested, confirmed, challenged, refuted)."""
    updated = clients.store.set_assumption_status(world_id, signal_id, status)
    if updated is not None:
        return updated
    signal = clients.store.get_signal(world_id, signal_id)
    if signal is None:
        raise NotFound(f"no signal {signal_id!r} in world {world_id!r}")
    raise InvalidInput(f"signal {signal_id!r} is a {signal.signal_type}: only an Assumption has a status",
                       details={"signal_type": signal.signal_type})
