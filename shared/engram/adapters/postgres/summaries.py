"""PostgreSQL repository: summaries and consolidation runs (H6)."""

from __future__ import annotations

from engram.adapters.postgres.base import PostgresBase


class SummaryRepo(PostgresBase):
    pass
