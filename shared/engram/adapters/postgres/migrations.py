"""Applies the numbered SQL migrations shipped in `engram/migrations`, once each, in order.

Each applied migration's checksum is recorded; the runner refuses, before applying anything, a migration changed
after being applied, one numbered below the latest applied, and a database that applied one this code lacks."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from importlib import resources
from typing import Any

import psycopg
from psycopg import sql

from engram.adapters.postgres.base import APP_ROLE, MAINTENANCE_ROLE
from engram.errors import ConfigurationError

_MIGRATION = re.compile(r"^(\d{4})_[a-z0-9_]+\.sql$")
_LOCK_KEY = 0x656E6772616D  # "engram": one migrator at a time across processes
# Numbers no shipped migration ever took (gaps in the history): never reused, so a version always names one file.
RETIRED_VERSIONS = frozenset({9, 12, 19})

Migration = tuple[int, str, str]  # (version, file name, SQL as shipped)


def migration_files() -> list[Migration]:
    """(version, name, sql) for every shipped migration, by version."""
    found = []
    for entry in resources.files("engram.migrations").iterdir():
        m = _MIGRATION.match(entry.name)
        if m:
            found.append((int(m.group(1)), entry.name, entry.read_text(encoding="utf-8")))
    return sorted(found)


def migration_checksum(script: str) -> str:
    """The sha256 of a migration's text as shipped (before `{{EMBEDDING_DIM}}` is filled in), as recorded."""
    return hashlib.sha256(script.encode("utf-8")).hexdigest()


def check_numbering(files: Sequence[Migration]) -> None:
    """Refuse migrations that share a number or take a retired one: each version names one file for good."""
    latest = max((v for v, _, _ in files), default=0)
    names: dict[int, str] = {}
    for version, name, _ in sorted(files):
        if version in names:
            raise ConfigurationError(f"migrations {names[version]} and {name} share the number {version:04d}: "
                                     f"give one of them a number after {latest:04d}")
        if version in RETIRED_VERSIONS:
            raise ConfigurationError(f"migration {name} takes the retired number {version:04d}: "
                                     f"give it a number after {latest:04d}")
        names[version] = name


def apply_migrations(url: str, embedding_dim: int, files: Sequence[Migration] | None = None) -> list[str]:
    """Apply pending migrations; returns the names applied. Refuses a changed embedding dimension and, before
    applying anything, a migration changed after being applied, one added out of order, or a database newer than
    this code. `files` stands in for the shipped migrations (tests only)."""
    shipped = migration_files() if files is None else sorted(files)
    check_numbering(shipped)
    applied: list[str] = []
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SELECT pg_advisory_lock(%s)", (_LOCK_KEY,))
        try:
            _bootstrap(conn, embedding_dim)
            recorded: dict[int, tuple[str, str | None]] = {
                v: (n, c) for v, n, c in conn.execute("SELECT version, name, checksum FROM schema_migrations")}
            refusals = _refusals(shipped, recorded)
            if refusals:
                raise ConfigurationError("; ".join(refusals))
            for version, name, script in shipped:
                checksum = migration_checksum(script)
                if version in recorded:
                    if recorded[version][1] is None:  # applied before checksums were kept: the shipped file vouches
                        conn.execute("UPDATE schema_migrations SET checksum = %s WHERE version = %s",
                                     (checksum, version))
                    continue
                with conn.transaction():
                    conn.execute(script.replace("{{EMBEDDING_DIM}}", str(int(embedding_dim))).encode())
                    conn.execute("INSERT INTO schema_migrations (version, name, checksum) VALUES (%s, %s, %s)",
                                 (version, name, checksum))
                applied.append(name)
            conn.execute(
                "INSERT INTO engram_meta (key, value) VALUES ('embedding_dim', %s) ON CONFLICT (key) DO NOTHING",
                (str(embedding_dim),),
            )
            with conn.transaction():
                secure_world_tables(conn)
        finally:
            conn.execute("SELECT pg_advisory_unlock(%s)", (_LOCK_KEY,))
    return applied


def _bootstrap(conn: psycopg.Connection[Any], embedding_dim: int) -> None:
    """The runner's own tables (they predate any numbered migration), and the embedding dimension check."""
    conn.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations ("
        " version int PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())"
    )
    # Databases migrated before checksums were kept lack the column; their rows are backfilled from the shipped files.
    conn.execute("ALTER TABLE schema_migrations ADD COLUMN IF NOT EXISTS checksum text")
    conn.execute("CREATE TABLE IF NOT EXISTS engram_meta (key text PRIMARY KEY, value text NOT NULL)")
    row = conn.execute("SELECT value FROM engram_meta WHERE key = 'embedding_dim'").fetchone()
    if row is not None and int(row[0]) != embedding_dim:
        raise ConfigurationError(
            f"the database holds {row[0]}-dimensional embeddings but the embedder makes "
            f"{embedding_dim}: use the same embedder or a new database"
        )


def _refusals(shipped: Sequence[Migration], recorded: dict[int, tuple[str, str | None]]) -> list[str]:
    """Why the shipped migrations cannot run against a database that recorded `recorded`; empty when they can."""
    by_version = {v: (n, s) for v, n, s in shipped}
    latest = max(recorded, default=0)
    refusals = [f"the database applied migration {v:04d} ({recorded[v][0]}), which this code does not ship: "
                "the database is newer than this code" for v in sorted(set(recorded) - set(by_version))]
    for version, (name, script) in sorted(by_version.items()):
        if version not in recorded:
            if version < latest:
                refusals.append(f"migration {name} was added out of order: give it a number after {latest:04d}")
        elif recorded[version][1] not in (None, migration_checksum(script)):
            refusals.append(f"migration {name} was changed after being applied: write a new migration instead")
    return refusals


# Row-level security (roles from migration 0008). Every table with a world_id column gets these three policies;
# run after every batch, so a table a later migration adds is covered without a migration of its own.
DEFINER_ROLE = "engram_definer"
WORLD_POLICIES = {
    # The application: the rows of the world its transaction set, for reading and for writing.
    "engram_world": f"FOR ALL TO {APP_ROLE} USING (world_id = current_setting('engram.world_id', true)) "
                    "WITH CHECK (world_id = current_setting('engram.world_id', true))",
    # The reviewed all-worlds paths (PostgresBase.all_worlds_tx) and the migrator.
    "engram_all_worlds": f"FOR ALL TO {MAINTENANCE_ROLE} USING (true) WITH CHECK (true)",
    # The SECURITY DEFINER lookups of 0008, which pin the world themselves.
    "engram_definer_reads": f"FOR SELECT TO {DEFINER_ROLE} USING (true)",
}


def world_tables(conn: psycopg.Connection[Any]) -> list[str]:
    """The tables (plain and partitioned) of the current schema that carry a world_id column."""
    rows = conn.execute(
        "SELECT c.relname FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid "
        "WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'p') "
        "AND a.attname = 'world_id' AND NOT a.attisdropped ORDER BY c.relname"
    ).fetchall()
    return [r[0] for r in rows]


def secure_world_tables(conn: psycopg.Connection[Any]) -> None:
    """Enable and force row-level security with engram's policies on every world_id table that lacks them,
    and grant the roles what they use: the app reads and writes the world tables and reads the others."""
    world = set(world_tables(conn))
    for table in sorted(world):
        name = sql.Identifier(table)
        conn.execute(sql.SQL("ALTER TABLE {} ENABLE ROW LEVEL SECURITY").format(name))
        conn.execute(sql.SQL("ALTER TABLE {} FORCE ROW LEVEL SECURITY").format(name))
        present = {r[0] for r in conn.execute("SELECT policyname FROM pg_policies WHERE schemaname = current_schema() "
                                              "AND tablename = %s", (table,)).fetchall()}
        for policy, body in WORLD_POLICIES.items():
            if policy not in present:
                conn.execute(sql.SQL("CREATE POLICY {} ON {} ").format(sql.Identifier(policy), name) + sql.SQL(body))
        conn.execute(sql.SQL("GRANT SELECT, INSERT, UPDATE, DELETE ON {} TO {}").format(name, sql.Identifier(APP_ROLE)))
    others = conn.execute(
        "SELECT c.relname FROM pg_class c WHERE c.relnamespace = current_schema()::regnamespace "
        "AND c.relkind IN ('r', 'p', 'v', 'm')").fetchall()
    for (table,) in others:
        if table not in world:  # bookkeeping (schema_migrations, engram_meta): readable, never written by the app
            conn.execute(sql.SQL("GRANT SELECT ON {} TO {}").format(sql.Identifier(table), sql.Identifier(APP_ROLE)))
    conn.execute(sql.SQL("GRANT SELECT ON ALL TABLES IN SCHEMA {} TO {}").format(
        sql.Identifier(_current_schema(conn)), sql.Identifier(DEFINER_ROLE)))
    conn.execute(sql.SQL("GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA {} TO {}").format(
        sql.Identifier(_current_schema(conn)), sql.Identifier(APP_ROLE)))


def _current_schema(conn: psycopg.Connection[Any]) -> str:
    row = conn.execute("SELECT current_schema()").fetchone()
    assert row is not None
    return str(row[0])
