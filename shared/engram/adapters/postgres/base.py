"""Connection pool, world-scoped transactions and error translation shared by the repositories."""

from __future__ import annotations

import time
import weakref
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
import psycopg
from pgvector.psycopg import register_vector
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb
from psycopg_pool import ConnectionPool

from engram.errors import TransientStoreError
from engram.observability import logger

APP_ROLE = "engram_app"  # the roles of migration 0008
MAINTENANCE_ROLE = "engram_maintenance"
RECHECK_IDLE_S = 10.0  # a pooled connection idle longer than this is checked before it is lent out
PREPARE_AFTER = 5  # with `prepare`, a statement is prepared on a connection once it has run this many times there

Row = dict[str, Any]


def normalize_name(text: str) -> str:
    """The form names and aliases are matched on: lowercased, inner whitespace collapsed."""
    return " ".join(text.lower().split())


class PostgresBase:
    """Owns the pool. Repositories (mixins) use `self.tx(world_id)` for every statement."""

    def __init__(self, url: str, *, min_size: int = 1, max_size: int = 8, prepare: bool = False) -> None:
        """`prepare`: psycopg prepares on the server a statement a connection has run five times, and PostgreSQL then
        skips parsing it and, where its generic plan is as good, planning it (a search at 100,000 events: about 2 ms
        less CPU in PostgreSQL). Off behind RDS Proxy, which pins to its client a session that prepares, and PgBouncer
        in transaction mode before 1.21, which cannot carry prepared statements (`Settings.database_prepare`)."""
        self.url = url
        # `check` replaces a connection the server closed while the process slept (Aurora closes idle
        # sessions so that an idle cluster can pause) instead of lending it out broken.
        self._returned: weakref.WeakKeyDictionary[psycopg.Connection[Any], float] = weakref.WeakKeyDictionary()
        self.pool = ConnectionPool(
            url, min_size=min_size, max_size=max_size, open=False, configure=self._configure,
            kwargs={"autocommit": False, "prepare_threshold": PREPARE_AFTER if prepare else None}, check=self._check,
            reset=self._returned_now,
        )
        try:
            self.pool.open(wait=True, timeout=30)
        except psycopg_pool_errors() as exc:
            raise unavailable(UNREACHABLE, exc) from exc

    @staticmethod
    def _configure(conn: psycopg.Connection[Any]) -> None:
        register_vector(conn)
        # Filtered HNSW searches keep scanning until they have enough rows (pgvector >= 0.8).
        conn.execute("SET hnsw.iterative_scan = relaxed_order")
        # Every statement of the session runs as the application role (migration 0008): no superuser, no owner,
        # no BYPASSRLS, so the world policies hold even for a query that forgot its `world_id =` filter. The
        # login (the embedded server's superuser, Aurora's schema owner) is only the way in.
        conn.execute("SELECT set_config('role', %s, false)", (APP_ROLE,))
        conn.commit()

    def _check(self, conn: psycopg.Connection[Any]) -> None:
        # Only a connection that sat idle: checking every one costs a round trip per transaction, a search's
        # dozen of them included, while one returned moments ago is as alive as it was then.
        if time.monotonic() - self._returned.get(conn, float("-inf")) > RECHECK_IDLE_S:
            ConnectionPool.check_connection(conn)

    def _returned_now(self, conn: psycopg.Connection[Any]) -> None:
        self._returned[conn] = time.monotonic()

    @contextmanager
    def tx(self, world_id: str | None) -> Iterator[psycopg.Cursor[Row]]:
        """One transaction with the world set (`engram.world_id`, read by row-level security): it sees and
        writes that world's rows only. None sets no world, and row-level security then shows no row at all
        (a health check); a path that must span worlds says so with `all_worlds_tx`."""
        with self._transaction() as cur:
            if world_id is not None:
                # The role again, for this transaction: behind RDS Proxy a session's state is only as safe as its
                # pinning, and one statement sets both. (None issues no statement, so that a caller may still
                # open with SET TRANSACTION: the session's role, set at connect, applies.)
                cur.execute("SELECT set_config('role', %s, true), set_config('engram.world_id', %s, true)",
                            (APP_ROLE, world_id))
            yield cur

    def read_once(self, world_id: str, statements: Sequence[tuple[str, dict[str, Any]]], *,
                  binary: bool = False) -> list[list[Row]]:
        """Read-only statements in one round trip, each one's rows: the world's settings (as `tx`) and the
        statements sent together in a pipeline with one Sync, which makes them one transaction (the extended
        protocol's implicit one) and ends it. A `tx` pays four round trips (BEGIN, the settings, the statement,
        COMMIT), each a wait for the interpreter beside the other brains: the search's entity path reads so."""
        with _translated(), self.pool.connection() as conn:
            conn.autocommit = True  # no BEGIN of psycopg's (a round trip of its own): the Sync ends the reads
            try:
                cursors = []
                with conn.pipeline():  # leaving it sends the Sync and reads every result
                    # If this fails, the server skips every statement up to the Sync: none runs without the world.
                    conn.execute("SELECT set_config('role', %s, true), set_config('engram.world_id', %s, true)",
                                 (APP_ROLE, world_id))
                    for sql, params in statements:
                        cur = conn.cursor(row_factory=dict_row)
                        cur.execute(sql, params, binary=binary)
                        cursors.append(cur)
                return [cur.fetchall() for cur in cursors]
            finally:
                if not conn.closed:  # a broken connection is discarded by the pool as it is
                    conn.autocommit = False

    @contextmanager
    def all_worlds_tx(self) -> Iterator[psycopg.Cursor[Row]]:
        """One transaction across every world, as the maintenance role (its policy admits every row).

        Only for work that is about no world in particular and is reviewed as such: draining the index outbox,
        the stalled-enrichment sweep and the consolidation plan when no world is named. Everything a request of
        a world does goes through `tx(world_id)`."""
        with self._transaction() as cur:
            cur.execute("SELECT set_config('role', %s, true)", (MAINTENANCE_ROLE,))
            yield cur

    @contextmanager
    def world_or_all_tx(self, world_id: str | None) -> Iterator[psycopg.Cursor[Row]]:
        """`tx(world_id)` for one world, `all_worlds_tx()` when a maintenance path names none."""
        with (self.tx(world_id) if world_id is not None else self.all_worlds_tx()) as cur:
            yield cur

    @contextmanager
    def _transaction(self) -> Iterator[psycopg.Cursor[Row]]:
        with _translated(), self.pool.connection() as conn, conn.transaction(), \
                conn.cursor(row_factory=dict_row) as cur:
            yield cur

    def ping(self) -> None:
        with self.tx(None) as cur:
            cur.execute("SELECT 1")

    def world_config(self, world_id: str) -> dict[str, Any]:
        with self.tx(world_id) as cur:
            cur.execute("SELECT key, value FROM system_config WHERE world_id = %s", (world_id,))
            return {r["key"]: r["value"] for r in cur.fetchall()}

    def set_world_config(self, world_id: str, config: dict[str, Any]) -> None:
        with self.tx(world_id) as cur:
            cur.execute("DELETE FROM system_config WHERE world_id = %s AND NOT (key = ANY(%s))",
                        (world_id, list(config)))
            for key, value in config.items():
                cur.execute("INSERT INTO system_config (world_id, key, value) VALUES (%s, %s, %s) ON CONFLICT "
                            "(world_id, key) DO UPDATE SET value = EXCLUDED.value, updated_at = now()",
                            (world_id, key, Jsonb(value)))

    def close(self) -> None:
        self.pool.close()


@contextmanager
def _translated() -> Iterator[None]:
    """The driver's and the pool's errors as the store's: a conflict or an unreachable or busy database."""
    try:
        yield
    except (psycopg.errors.SerializationFailure, psycopg.errors.DeadlockDetected) as exc:
        raise unavailable(CONCURRENT, exc) from exc
    except psycopg.OperationalError as exc:
        raise unavailable(UNREACHABLE, exc) from exc
    except psycopg_pool_errors() as exc:
        raise unavailable(BUSY, exc) from exc


def to_vector(embedding: Sequence[float] | None) -> Any:
    """An embedding as pgvector's adapter expects it (None stays NULL)."""
    return None if embedding is None else np.asarray(embedding, dtype=np.float32)


# What a client is told when the database fails a request: what happened and that a retry may succeed. The driver's
# own message (process ids, SQL, relation names) is logged for the operator, never sent.
UNREACHABLE = "the database is unreachable or ended the request; retry shortly"
CONCURRENT = "the database gave up the request in favour of a concurrent one; retry it"
BUSY = "the database is busy; retry shortly"


def unavailable(message: str, exc: Exception) -> TransientStoreError:
    """A driver or pool error as the domain's transient error, its details in the log only."""
    logger.warning("database error", extra={"error": f"{exc.__class__.__name__}: {exc}", "told": message})
    return TransientStoreError(message)


def psycopg_pool_errors() -> tuple[type[Exception], ...]:
    from psycopg_pool import PoolTimeout

    return (PoolTimeout,)
