"""PostgreSQL repository: semantic search and index documents (H5)."""

from __future__ import annotations

from engram.adapters.postgres.base import PostgresBase


class SearchRepo(PostgresBase):
    pass
