"""PostgreSQL repository: keyword-index outbox (H4)."""

from __future__ import annotations

from engram.adapters.postgres.base import PostgresBase


class OutboxRepo(PostgresBase):
    pass
