"""The embedded PostgreSQL server's own settings: a restarted server reads back the pages it held in shared
buffers (pg_prewarm's autoprewarm), and the libraries a data directory already preloads are kept beside it; and the
store's prepared statements, on for the embedded server and off elsewhere."""

from __future__ import annotations

import time
from pathlib import Path

import psycopg
import pytest

from engram.adapters.postgres.embedded import PRELOAD, ensure_database, start_embedded_postgres

pytestmark = pytest.mark.integration

_BUFFERED = ("SELECT count(*) FROM pg_buffercache b JOIN pg_database d ON d.oid = b.reldatabase "
             "WHERE d.datname = current_database() AND b.relfilenode = pg_relation_filenode('pages')")


def _buffered(url: str) -> int:
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(_BUFFERED).fetchone()
        return int(row[0]) if row else 0


def _preloaded(server: object) -> str:
    with psycopg.connect(server.get_uri("postgres"), autocommit=True) as conn:  # type: ignore[attr-defined]
        row = conn.execute("SELECT current_setting('shared_preload_libraries')").fetchone()
        return str(row[0]) if row else ""


def test_a_restarted_server_reads_back_the_pages_it_held_in_shared_buffers(tmp_path: Path) -> None:
    server = start_embedded_postgres(tmp_path)
    try:
        assert "pg_prewarm" in _preloaded(server)
        url = ensure_database(server, "warm")
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("CREATE EXTENSION pg_buffercache")
            # About 1,400 pages: a table under a quarter of shared buffers is read into them, not through a ring.
            conn.execute("CREATE TABLE pages AS SELECT g, repeat('x', 500) AS filler FROM generate_series(1, 20000) g")
            conn.execute("SELECT count(*) FROM pages").fetchone()
        held = _buffered(url)
        assert held > 1000
    finally:
        server.cleanup()  # stops it: the autoprewarm worker writes down the pages as it goes
    assert (tmp_path / "pg" / "autoprewarm.blocks").exists()

    server = start_embedded_postgres(tmp_path)
    try:
        url = ensure_database(server, "warm")
        deadline = time.monotonic() + 30
        while (back := _buffered(url)) < held and time.monotonic() < deadline:  # the worker reads them in the background
            time.sleep(0.2)
        assert back >= held  # nothing read the table since the start: only the worker can have brought it back
    finally:
        server.cleanup()


def test_the_libraries_a_data_directory_preloads_already_are_kept_beside_pg_prewarm(tmp_path: Path) -> None:
    server = start_embedded_postgres(tmp_path)
    try:
        with psycopg.connect(server.get_uri("postgres"), autocommit=True) as conn:
            conn.execute("ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'")
    finally:
        server.cleanup()
    # The next start finds pg_prewarm missing, adds it to pg_stat_statements and restarts: a list written as one
    # string would name a single library "pg_stat_statements, pg_prewarm", and the server would not come back.
    server = start_embedded_postgres(tmp_path)
    try:
        libraries = [name.strip() for name in _preloaded(server).split(",")]
        assert libraries == ["pg_stat_statements", *PRELOAD]
    finally:
        server.cleanup()


@pytest.mark.parametrize("prepare", [True, False])
def test_a_store_that_prepares_keeps_a_statement_run_five_times_prepared_on_its_connection(
        pg_url: str, prepare: bool) -> None:
    from engram.adapters.postgres.base import PREPARE_AFTER, PostgresBase

    db = PostgresBase(pg_url, max_size=1, prepare=prepare)  # one connection: every statement runs on it
    try:
        for _ in range(PREPARE_AFTER + 1):
            with db.tx("w1") as cur:
                cur.execute("SELECT count(*) FROM chat_events WHERE world_id = %s", ("w1",))
        with db.tx("w1") as cur:
            cur.execute("SELECT count(*) AS n FROM pg_prepared_statements WHERE statement LIKE %s",
                        ("%FROM chat_events WHERE world_id%",))
            row = cur.fetchone()
        assert row is not None and (row["n"] == 1) is prepare
    finally:
        db.pool.close()
