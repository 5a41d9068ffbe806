"""The DomainDatabase port over an external PostgreSQL: the world's own records (customers, products...)
searched by name in the tables `domain_ontology` describes. Read-only; engram never writes there."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import psycopg
from psycopg import sql
from psycopg_pool import ConnectionPool, PoolTimeout

from engram.adapters.postgres.base import normalize_name
from engram.errors import ConfigurationError, TransientStoreError
from engram.model.entities import DomainMatch, DomainSource


class PostgresDomainDatabase:
    """Each described table is searched with `lower(name_column) = <normalized mention>`: index
    `lower(name_column)` in the domain database for large tables."""

    def __init__(self, url: str, *, max_size: int = 2, timeout_s: float = 5.0) -> None:
        # Opened on first use: a cold start that never meets an unknown name never connects.
        self.pool = ConnectionPool(url, min_size=0, max_size=max_size, open=False, timeout=timeout_s,
                                   kwargs={"autocommit": True, "prepare_threshold": None})
        self._opened = False

    def find(self, world_id: str, sources: Sequence[DomainSource], name: str, limit: int) -> list[DomainMatch]:
        wanted = normalize_name(name)
        found: list[DomainMatch] = []
        for source in sources:
            query = sql.SQL("SELECT {key}::text AS key, {name}::text AS name FROM {table} "
                            "WHERE lower({name}) = %s ORDER BY {key} LIMIT %s").format(
                key=sql.Identifier(source.key_column), name=sql.Identifier(source.name_column),
                table=sql.Identifier(*source.source_table.split(".", 1)))
            for row in self._rows(query, (wanted, limit)):
                found.append(DomainMatch(entity_type=source.entity_type, name=" ".join(str(row[1]).split()),
                                         external_ref=f"{source.source_table}:{row[0]}"))
        return found[:limit]

    def ping(self) -> None:
        self._rows(sql.SQL("SELECT 1"), ())

    def _rows(self, query: sql.Composed | sql.SQL, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        try:
            if not self._opened:
                self.pool.open(wait=False)
                self._opened = True
            with self.pool.connection() as conn:
                return conn.execute(query, params).fetchall()
        except (psycopg.OperationalError, PoolTimeout) as exc:
            raise TransientStoreError(f"domain database unavailable: {exc.__class__.__name__}: {exc}") from exc
        except psycopg.ProgrammingError as exc:  # a table or column domain_ontology names is not there
            raise ConfigurationError(f"domain_ontology describes what the domain database lacks: {exc}") from exc

    def close(self) -> None:
        if self._opened:
            self.pool.close()
