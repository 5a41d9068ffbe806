"""Connections outside the store's pool: the connection string on AWS (Aurora's credentials from their Secrets
Manager secret), and a connection as the schema owner for bulk loads."""

from __future__ import annotations

from typing import Any

import psycopg
from pgvector.psycopg import register_vector
from psycopg.conninfo import make_conninfo

from engram.adapters.secrets import secret_json


def url_from_secret(secret_arn: str, host: str | None) -> str:
    """A TLS connection string from the secret RDS generated (`host` overrides its host: the proxy's endpoint)."""
    secret = secret_json(secret_arn)
    return make_conninfo(
        host=host or secret["host"], port=secret.get("port", 5432), user=secret["username"],
        password=secret["password"], dbname=secret.get("dbname", "engram"), sslmode="require",
    )


def owner_connection(url: str) -> Any:
    """A connection with the URL's own role (the migrator's: the store's pool runs as the application role), with
    pgvector's types registered; for bulk loads and index builds that are a migration of their own."""
    conn = psycopg.connect(url)
    register_vector(conn)
    return conn
