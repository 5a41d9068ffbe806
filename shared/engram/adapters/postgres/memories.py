"""PostgreSQL repository: episodic and semantic memories, conflicts, procedural (H4)."""

from __future__ import annotations

from engram.adapters.postgres.base import PostgresBase


class MemoryRepo(PostgresBase):
    pass
