"""PostgreSQL repository: chat events (H4)."""

from __future__ import annotations

from engram.adapters.postgres.base import PostgresBase


class EventRepo(PostgresBase):
    pass
