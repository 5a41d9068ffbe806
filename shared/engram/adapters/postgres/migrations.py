"""Applies the numbered SQL migrations shipped in `engram/migrations`, once each, in order."""

from __future__ import annotations

import re
from importlib import resources

import psycopg

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
            for version, name, sql in migration_files():
                if version in done:
                    continue
                with conn.transaction():
                    conn.execute(sql.replace("{{EMBEDDING_DIM}}", str(int(embedding_dim))).encode())
                    conn.execute("INSERT INTO schema_migrations (version, name) VALUES (%s, %s)", (version, name))
                applied.append(name)
            conn.execute(
                "INSERT INTO engram_meta (key, value) VALUES ('embedding_dim', %s) ON CONFLICT (key) DO NOTHING",
                (str(embedding_dim),),
            )
        finally:
            conn.execute("SELECT pg_advisory_unlock(%s)", (_LOCK_KEY,))
    return applied
