"""Connection pool, world-scoped transactions and error translation shared by the repositories."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
import psycopg
from pgvector.psycopg import register_vector
from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool

from engram.errors import TransientStoreError

Row = dict[str, Any]


def normalize_name(text: str) -> str:
    """The form names and aliases are matched on: lowercased, inner whitespace collapsed."""
    return " ".join(text.lower().split())


class PostgresBase:
    """Owns the pool. Repositories (mixins) use `self.tx(world_id)` for every statement."""

    def __init__(self, url: str, *, min_size: int = 1, max_size: int = 8) -> None:
        self.url = url
        # `check` replaces a connection the server closed while the process slept (Aurora closes idle
        # sessions so that an idle cluster can pause) instead of lending it out broken.
        self.pool = ConnectionPool(
            url, min_size=min_size, max_size=max_size, open=False, configure=self._configure,
            kwargs={"autocommit": False, "prepare_threshold": None}, check=ConnectionPool.check_connection,
        )
        try:
            self.pool.open(wait=True, timeout=30)
        except psycopg_pool_errors() as exc:
            raise TransientStoreError(f"database unreachable: {exc}") from exc

    @staticmethod
    def _configure(conn: psycopg.Connection[Any]) -> None:
        register_vector(conn)
        # Filtered HNSW searches keep scanning until they have enough rows (pgvector >= 0.8).
        conn.execute("SET hnsw.iterative_scan = relaxed_order")
        conn.commit()

    @contextmanager
    def tx(self, world_id: str | None) -> Iterator[psycopg.Cursor[Row]]:
        """One transaction with the world set (`engram.world_id`, read by row-level security)."""
        try:
            with self.pool.connection() as conn, conn.transaction(), conn.cursor(row_factory=dict_row) as cur:
                if world_id is not None:
                    cur.execute("SELECT set_config('engram.world_id', %s, true)", (world_id,))
                yield cur
        except (psycopg.OperationalError, psycopg.errors.SerializationFailure,
                psycopg.errors.DeadlockDetected) as exc:
            raise TransientStoreError(f"database error: {exc.__class__.__name__}: {exc}") from exc
        except psycopg_pool_errors() as exc:
            raise TransientStoreError(f"database pool exhausted: {exc}") from exc

    def ping(self) -> None:
        with self.tx(None) as cur:
            cur.execute("SELECT 1")

    def world_config(self, world_id: str) -> dict[str, Any]:
        with self.tx(world_id) as cur:
            cur.execute("SELECT key, value FROM system_config WHERE world_id = %s", (world_id,))
            return {r["key"]: r["value"] for r in cur.fetchall()}

    def close(self) -> None:
        self.pool.close()


def to_vector(embedding: Sequence[float] | None) -> Any:
    """An embedding as pgvector's adapter expects it (None stays NULL)."""
    return None if embedding is None else np.asarray(embedding, dtype=np.float32)


def psycopg_pool_errors() -> tuple[type[Exception], ...]:
    from psycopg_pool import PoolTimeout

    return (PoolTimeout,)
