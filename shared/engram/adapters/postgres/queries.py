"""PostgreSQL repository: world queries and query contexts (H5)."""

from __future__ import annotations

from engram.adapters.postgres.base import PostgresBase


class QueryRepo(PostgresBase):
    pass
