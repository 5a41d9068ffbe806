"""The connection string of the database on AWS: Aurora's credentials from their Secrets Manager secret."""

from __future__ import annotations

from psycopg.conninfo import make_conninfo

from engram.adapters.secrets import secret_json


def url_from_secret(secret_arn: str, host: str | None) -> str:
    """A TLS connection string from the secret RDS generated (`host` overrides its host: the proxy's endpoint)."""
    secret = secret_json(secret_arn)
    return make_conninfo(
        host=host or secret["host"], port=secret.get("port", 5432), user=secret["username"],
        password=secret["password"], dbname=secret.get("dbname", "engram"), sslmode="require",
    )
