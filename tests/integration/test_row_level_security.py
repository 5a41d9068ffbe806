"""Row-level security on world_id: every world table is covered, the application runs as a role that cannot
bypass it, and with one world set no statement of the application reads or writes another world's rows."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import psycopg
import pytest
from psycopg import sql

from engram.adapters.postgres.migrations import WORLD_POLICIES, secure_world_tables, world_tables
from engram.ports.clients import Clients
from tests.builder import remember

pytestmark = pytest.mark.integration
GHOST = "rls-ghost"  # a world no application call ever names: a copy of a row of every table lives there


@pytest.fixture(scope="module")
def populated(clients: Clients, pg_url: str) -> Clients:
    """World rls-a through the real pipeline, and in world rls-ghost a copy of one row of every world table that
    holds any (written by the owner, as a migration or an import would)."""
    events = [{"event_id": f"rls-{i}", "user_id": "ana", "conversation_id": "c1", "role": "user", "content": text,
               "occurred_at": datetime(2026, 3, 1, 9, i, tzinfo=UTC).isoformat()}
              for i, text in enumerate(["My name is Ana and I live in Lisbon.", "My boss Rui prefers tea.",
                                        "I decided to move to Porto next year. What do you think?"])]
    remember(clients, "rls-a", events)
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("SET session_replication_role = replica")  # copies of single rows: no foreign keys to satisfy
        for table in world_tables(conn):
            columns = [r[0] for r in conn.execute(
                "SELECT attname FROM pg_attribute WHERE attrelid = %s::regclass AND attnum > 0 AND NOT attisdropped "
                "AND attgenerated = '' AND attidentity = '' ORDER BY attnum", (table,)).fetchall()]
            listed = sql.SQL(", ").join(sql.Identifier(c) for c in columns)
            chosen = sql.SQL(", ").join(sql.Literal(GHOST) if c == "world_id" else sql.Identifier(c) for c in columns)
            conn.execute(sql.SQL("INSERT INTO {t} ({c}) SELECT {v} FROM {t} WHERE world_id <> {g} LIMIT 1 "
                                 "ON CONFLICT DO NOTHING").format(t=sql.Identifier(table), c=listed, v=chosen,
                                                                  g=sql.Literal(GHOST)))
    return clients


@pytest.fixture
def owner(pg_url: str) -> Iterator[psycopg.Connection[Any]]:
    with psycopg.connect(pg_url, autocommit=True) as conn:
        yield conn


def test_every_table_with_a_world_id_has_row_level_security_enabled_forced_and_the_world_policy(
        owner: psycopg.Connection[Any]) -> None:
    tables = world_tables(owner)
    assert {"chat_events", "canonical_entities", "entity_aliases", "semantic_memories", "keyword_documents",
            "index_outbox", "world_queries", "system_config"} <= set(tables)
    for table in tables:
        enabled, forced = owner.execute("SELECT relrowsecurity, relforcerowsecurity FROM pg_class "
                                        "WHERE oid = %s::regclass", (table,)).fetchone()  # type: ignore[misc]
        policies = {r[0]: (r[1], r[2]) for r in owner.execute(
            "SELECT policyname, roles::text[], qual FROM pg_policies WHERE tablename = %s", (table,)).fetchall()}
        assert enabled and forced, table
        assert set(WORLD_POLICIES) <= set(policies), table
        roles, qual = policies["engram_world"]
        assert roles == ["engram_app"] and "current_setting('engram.world_id'::text, true)" in qual, table


def test_a_table_a_later_migration_adds_is_secured_by_the_step_after_the_batch(owner: psycopg.Connection[Any]) -> None:
    owner.execute("CREATE TABLE later_things (world_id text NOT NULL, thing text)")
    try:
        secure_world_tables(owner)
        policies = {r[0] for r in owner.execute("SELECT policyname FROM pg_policies WHERE tablename = 'later_things'")}
        assert set(WORLD_POLICIES) <= policies
        secure_world_tables(owner)  # idempotent: the step runs after every batch
    finally:
        owner.execute("DROP TABLE later_things")


def test_the_application_runs_as_a_role_that_is_no_superuser_no_owner_and_cannot_bypass_rls(
        clients: Clients) -> None:
    store: Any = clients.store
    with store.tx("rls-a") as cur:
        cur.execute("SELECT current_user AS who, r.rolsuper, r.rolbypassrls, "
                    "(SELECT count(*) FROM pg_tables WHERE schemaname = 'public' AND tableowner = current_user) AS owns "
                    "FROM pg_roles r WHERE r.rolname = current_user")
        row = cur.fetchone()
    assert row == {"who": "engram_app", "rolsuper": False, "rolbypassrls": False, "owns": 0}


def test_with_a_world_set_every_world_table_shows_that_world_only(populated: Clients, owner: psycopg.Connection[Any]
                                                                  ) -> None:
    store: Any = populated.store
    ghosts = {t for t in world_tables(owner)
              if owner.execute(sql.SQL("SELECT count(*) FROM {} WHERE world_id = %s").format(sql.Identifier(t)),
                               (GHOST,)).fetchone()[0]}  # type: ignore[index]
    assert len(ghosts) >= 10, ghosts  # the pipeline filled most tables: the check below has rows to leak
    for table in world_tables(owner):
        with store.tx("rls-a") as cur:
            # No world filter in the statement: the policy alone decides.
            cur.execute(sql.SQL("SELECT DISTINCT world_id FROM {}").format(sql.Identifier(table)))
            seen = {r["world_id"] for r in cur.fetchall()}
        assert seen <= {"rls-a"}, (table, seen)
    with store.tx(None) as cur:  # no world set: nothing at all
        cur.execute("SELECT count(*) AS n FROM chat_events")
        assert cur.fetchone()["n"] == 0
    with store.all_worlds_tx() as cur:  # the reviewed maintenance scope: every world
        cur.execute("SELECT count(DISTINCT world_id) AS n FROM chat_events")
        assert cur.fetchone()["n"] >= 2


def test_with_a_world_set_no_statement_writes_another_worlds_rows(populated: Clients) -> None:
    store: Any = populated.store
    with store.tx("rls-a") as cur:
        cur.execute("UPDATE chat_events SET content = 'overwritten' WHERE world_id = %s", (GHOST,))
        assert cur.rowcount == 0
        cur.execute("DELETE FROM chat_events WHERE world_id = %s", (GHOST,))
        assert cur.rowcount == 0
    with pytest.raises(psycopg.errors.InsufficientPrivilege), store.tx("rls-a") as cur:  # moving a row out
        cur.execute("UPDATE chat_events SET world_id = %s WHERE world_id = 'rls-a'", (GHOST,))
    with pytest.raises(psycopg.errors.InsufficientPrivilege), store.tx("rls-a") as cur:  # writing into another
        cur.execute("INSERT INTO system_config (world_id, key, value) VALUES (%s, 'k', '{}')", (GHOST,))
    with store.all_worlds_tx() as cur:
        cur.execute("SELECT count(*) AS n FROM chat_events WHERE world_id = %s AND content <> 'overwritten'",
                    (GHOST,))
        assert cur.fetchone()["n"] == 1


def test_the_index_backed_lookups_read_the_world_of_the_transaction_not_a_parameter(
        populated: Clients, owner: psycopg.Connection[Any]) -> None:
    owner.execute("INSERT INTO canonical_entities (world_id, entity_id, name, normalized_name, entity_type) "
                  "VALUES (%s, 'ghost_ent', 'Zorvath Quill', 'zorvath quill', 'person') ON CONFLICT DO NOTHING", (GHOST,))
    owner.execute("INSERT INTO entity_aliases (world_id, entity_id, alias, normalized_alias, user_id, confidence, source) "
                  "VALUES (%s, 'ghost_ent', 'Zorvath Quill', 'zorvath quill', '', 1.0, 'created') ON CONFLICT DO NOTHING",
                  (GHOST,))
    owner.execute("INSERT INTO keyword_documents (world_id, doc_id, kind, text) VALUES (%s, 'ghost_doc', 'event', "
                  "'zorvath quill was here') ON CONFLICT DO NOTHING", (GHOST,))
    owner.execute("INSERT INTO episodic_memories (world_id, memory_id, user_id, conversation_id, content, event_ids, "
                  "entity_ids, importance, occurred_at) VALUES (%s, 'ghost_ep', 'u', 'c', 'Zorvath Quill visited', "
                  "'{}', '{ghost_ent}', 0.5, now()) ON CONFLICT DO NOTHING", (GHOST,))
    store: Any = populated.store
    found: dict[str | None, tuple[int, int, int, int]] = {}
    for world in (GHOST, "rls-a", None):
        with store.tx(world) as cur:
            cur.execute("SELECT set_config('pg_trgm.similarity_threshold', '0.5', true)")
            cur.execute("SELECT count(*) AS n FROM engram_fuzzy_aliases('zorvath quil', '', 0.5, 10)")
            fuzzy = cur.fetchone()["n"]
            cur.execute("SELECT count(*) AS n FROM engram_entities_named('zorvath quil', '%%zorvath%%')")
            named = cur.fetchone()["n"]
            cur.execute("SELECT count(*) AS n FROM engram_keyword_matches(to_tsquery('english', 'zorvath'), NULL, NULL)")
            keyword = cur.fetchone()["n"]
            cur.execute("SELECT count(*) AS n FROM engram_episodes_naming('{ghost_ent}')")
            found[world] = (fuzzy, named, keyword, cur.fetchone()["n"])
    assert found == {GHOST: (1, 1, 1, 1), "rls-a": (0, 0, 0, 0), None: (0, 0, 0, 0)}
