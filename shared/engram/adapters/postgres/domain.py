"""The DomainDatabase port over an external PostgreSQL: the world's own records (customers, products...)
searched by name in the tables `domain_ontology` describes. Read-only; engram never writes there.

A world writes its own ontology (an import), so an ontology row is no authority over what is read: only the
tables and columns the operator allows (`ENGRAM_DOMAIN_TABLES`) are, and only their rows of the asking world."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import psycopg
from psycopg import sql
from psycopg_pool import ConnectionPool, PoolTimeout

from engram.adapters.postgres.base import normalize_name
from engram.config import DomainTable, DomainTables
from engram.errors import ConfigurationError, TransientStoreError
from engram.model.entities import DomainMatch, DomainSource
from engram.observability import logger


class PostgresDomainDatabase:
    """Each allowed table is searched with `<world column> = <world> AND lower(name_column) = <normalized
    mention>`: index `(world column, lower(name_column))` in the domain database for large tables."""

    def __init__(self, url: str, tables: DomainTables, *, max_size: int = 2, timeout_s: float = 5.0) -> None:
        # Opened on first use: a cold start that never meets an unknown name never connects.
        self.pool = ConnectionPool(url, min_size=0, max_size=max_size, open=False, timeout=timeout_s,
                                   kwargs={"autocommit": True, "prepare_threshold": None})
        self.tables = tables
        self._opened = False
        self._ignored: set[tuple[str, DomainSource]] = set()  # logged once per process
        self._lock = threading.Lock()

    def find(self, world_id: str, sources: Sequence[DomainSource], name: str, limit: int) -> list[DomainMatch]:
        wanted = normalize_name(name)
        found: list[DomainMatch] = []
        for source in sources:
            table = self.tables.table_for(source.source_table, source.key_column, source.name_column)
            if table is None:
                self._ignore(world_id, source)
                continue
            for row in self._rows(source, table, world_id, wanted, limit):
                found.append(DomainMatch(entity_type=source.entity_type, name=" ".join(str(row[1]).split()),
                                         external_ref=f"{source.source_table}:{row[0]}"))
        return found[:limit]

    def ping(self) -> None:
        self._execute(sql.SQL("SELECT 1"), ())

    def _rows(self, source: DomainSource, table: DomainTable, world_id: str, wanted: str,
              limit: int) -> list[tuple[Any, ...]]:
        query = sql.SQL("SELECT {key}::text AS key, {name}::text AS name FROM {table} "
                        "WHERE {world} = %s AND lower({name}) = %s ORDER BY {key} LIMIT %s").format(
            key=sql.Identifier(source.key_column), name=sql.Identifier(source.name_column),
            world=sql.Identifier(table.world_column), table=sql.Identifier(*source.source_table.split(".", 1)))
        try:
            return self._execute(query, (world_id, wanted, limit))
        except psycopg.ProgrammingError as exc:  # the operator allowed what the domain database lacks
            logger.error("domain table lookup failed", extra={"source": source.described, "error": str(exc)})
            raise ConfigurationError(
                f"domain_ontology names {source.described}, which ENGRAM_DOMAIN_TABLES allows, but the domain "
                f"database lacks that table, one of its columns, or its world column {table.world_column}") from exc

    def _execute(self, query: sql.Composed | sql.SQL, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        try:
            if not self._opened:
                self.pool.open(wait=False)
                self._opened = True
            with self.pool.connection() as conn:
                return conn.execute(query, params).fetchall()
        except (psycopg.OperationalError, PoolTimeout) as exc:
            logger.warning("domain database error", extra={"error": f"{exc.__class__.__name__}: {exc}"})
            raise TransientStoreError("the domain database is unreachable or busy; retry shortly") from exc

    def _ignore(self, world_id: str, source: DomainSource) -> None:
        """An ontology row outside the allow-list (written before it, or in another deployment) is never read."""
        with self._lock:
            if (world_id, source) in self._ignored:
                return
            self._ignored.add((world_id, source))
        logger.warning("domain_ontology row ignored: ENGRAM_DOMAIN_TABLES does not allow it",
                       extra={"world_id": world_id, "source": source.described})

    def close(self) -> None:
        if self._opened:
            self.pool.close()
