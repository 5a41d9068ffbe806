"""A dropped database connection, on demand: an owner connection holds a table lock so that the next
statement on that table waits, and the waiting backend is then terminated (`pg_terminate_backend`), as a
failover, a proxy restart or a network cut would end it mid-statement."""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

import psycopg

T = TypeVar("T")
_WAIT_S = 20.0


def drop_connection_during(url: str, table: str, mode: str, work: Callable[[], T]) -> tuple[T, int]:
    """Run `work` while `table` is locked in `mode`; terminate the first backend of the database that waits
    on a lock, then release the lock. Returns what `work` returned and how many backends were terminated."""
    with psycopg.connect(url) as owner, ThreadPoolExecutor(1) as pool:
        owner.execute(f"LOCK TABLE {table} IN {mode} MODE")
        pending = pool.submit(work)
        dropped = _terminate_waiting(url, owner.info.backend_pid, pending)
        owner.rollback()  # releases the lock: what runs after the drop (a retry) goes through
        return pending.result(timeout=120), dropped


def _terminate_waiting(url: str, owner_pid: int, pending: Future[Any]) -> int:
    deadline = time.monotonic() + _WAIT_S
    with psycopg.connect(url, autocommit=True) as watcher:
        while time.monotonic() < deadline and not pending.done():
            rows = watcher.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() "
                "AND wait_event_type = 'Lock' AND pid NOT IN (pg_backend_pid(), %s)", (owner_pid,)).fetchall()
            if rows:
                return len(rows)
            time.sleep(0.02)
    return 0
