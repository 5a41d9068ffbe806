"""Applies the numbered SQL migrations shipped in `engram/migrations`, once each, in order."""

from __future__ import annotations

import re
from importlib import resources
from typing import Any

import psycopg
from psycopg import sql

from engram.adapters.postgres.base import APP_ROLE, MAINTENANCE_ROLE
from engram.errors import ConfigurationError

_MIGRATION = re.compile(r"^(\d{4})_[a-z0-9_]+\.sql$")
_LOCK_KEY = 0x656E6772616D  # "engram": one migrator at a time across processes


def migration_files() -> list[tuple[int, str, str]]:
    """(version, name, sql) for every shipped migration, by version."""
    found = []
    for entry in resources.files("engram.migrations").iterdir():
        m = _MIGRATION.match(entry.name)
        if m:
            found.append((int(m.group(1)), entry.name, entry.read_text(encoding="utf-8")))
    return sorted(found)


def apply_migrations(url: str, embedding_dim: int) -> list[str]:
    """Apply pending migrations; returns the names applied. Refuses a changed embedding dimension."""
    applied: list[str] = []
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SELECT pg_advisory_lock(%s)", (_LOCK_KEY,))
        try:
            conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations ("
                " version int PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())"
            )
            conn.execute(
                "CREATE TABLE IF NOT EXISTS engram_meta (key text PRIMARY KEY, value text NOT NULL)"
            )
            row = conn.execute("SELECT value FROM engram_meta WHERE key = 'embedding_dim'").fetchone()
            if row is not None and int(row[0]) != embedding_dim:
                raise ConfigurationError(
                    f"the database holds {row[0]}-dimensional embeddings but the embedder makes "
                    f"{embedding_dim}: use the same embedder or a new database"
                )
            done = {r[0] for r in conn.execute("SELECT version FROM schema_migrations").fetchall()}
            for version, name, script in migration_files():
                if version in done:
                    continue
                with conn.transaction():
                    conn.execute(script.replace("{{EMBEDDING_DIM}}", str(int(embedding_dim))).encode())
                    conn.execute("INSERT INTO schema_migrations (version, name) VALUES (%s, %s)", (version, name))
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
