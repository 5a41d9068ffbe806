import os
import re

import psycopg
import pytest

from engram.adapters.postgres import migrations
from engram.adapters.postgres.migrations import apply_migrations, migration_files
from engram.errors import ConfigurationError

pytestmark = pytest.mark.integration

DATA_TABLES = {
    "chat_events", "canonical_entities", "entity_aliases", "entity_mentions", "entity_relationships",
    "episodic_memories", "semantic_memories", "procedural_memories", "memory_summaries", "domain_ontology",
    "memory_conflicts", "signals", "world_queries", "query_contexts", "system_config", "index_outbox",
    "consolidation_runs", "signal_cursors",
    "insight_states", "inflections", "interventions",
}


def test_every_data_table_exists_and_carries_world_id_first_in_its_key(pg_url: str) -> None:
    with psycopg.connect(pg_url) as conn:
        rows = conn.execute(
            "SELECT c.relname, a.attname FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid "
            "JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = i.indkey[0] "
            "WHERE i.indisprimary AND c.relnamespace = 'public'::regnamespace"
        ).fetchall()
    first_key_column = dict(rows)
    assert set(first_key_column) >= DATA_TABLES
    assert all(first_key_column[t] == "world_id" for t in DATA_TABLES)


def test_embeddings_have_the_configured_dimension_and_an_hnsw_index(pg_url: str) -> None:
    with psycopg.connect(pg_url) as conn:
        dims = conn.execute(
            "SELECT DISTINCT format_type(atttypid, atttypmod) FROM pg_attribute "
            "WHERE attname = 'embedding' AND attrelid::regclass::text NOT LIKE 'pg_%' AND attnum > 0"
        ).fetchall()
        hnsw = conn.execute("SELECT count(*) FROM pg_indexes WHERE indexdef LIKE '%USING hnsw%'").fetchone()
    assert dims == [("vector(384)",)]
    assert hnsw is not None and hnsw[0] == 6


def test_applying_twice_applies_nothing_the_second_time(pg_url: str) -> None:
    assert apply_migrations(pg_url, 384) == []
    assert len(migration_files()) >= 1


def test_a_different_embedding_dimension_is_refused_with_a_clear_error(pg_url: str) -> None:
    with pytest.raises(ConfigurationError, match="384-dimensional"):
        apply_migrations(pg_url, 1024)


def test_mentions_stored_before_migration_0018_get_opaque_ids_and_new_ones_do_too(
        pg_server: object, monkeypatch: pytest.MonkeyPatch) -> None:
    from engram.adapters.postgres.embedded import ensure_database

    url = ensure_database(pg_server, f"mentions_{os.getpid()}")
    with monkeypatch.context() as before:
        before.setattr(migrations, "migration_files", lambda: [m for m in migration_files() if m[0] < 18])
        apply_migrations(url, 384)
    mention = ("INSERT INTO entity_mentions (world_id, event_id, mention, kind, span_start, span_end, method, "
               "confidence) VALUES (%s, 'e1', 'Ana', 'name', %s, %s, 'created', 1)")
    with psycopg.connect(url, autocommit=True) as conn:
        for world, start in [("w-a", 0), ("w-b", 0), ("w-a", 5)]:
            conn.execute(mention, (world, start, start + 3))
        assert conn.execute("SELECT array_agg(mention_id ORDER BY mention_id) FROM entity_mentions").fetchone() == (
            [1, 2, 3],)

    apply_migrations(url, 384)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(mention, ("w-b", 9, 12))
        rows = conn.execute("SELECT world_id, span_start, mention_id FROM entity_mentions").fetchall()
    assert sorted((w, s) for w, s, _ in rows) == [("w-a", 0), ("w-a", 5), ("w-b", 0), ("w-b", 9)]
    assert all(re.fullmatch(r"men_[0-9a-f]{32}", i) for _, _, i in rows) and len({i for _, _, i in rows}) == 4
