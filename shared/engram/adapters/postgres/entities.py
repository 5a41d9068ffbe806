"""PostgreSQL repository: entities, aliases, mentions, relationships (H4)."""

from __future__ import annotations

from engram.adapters.postgres.base import PostgresBase


class EntityRepo(PostgresBase):
    pass
