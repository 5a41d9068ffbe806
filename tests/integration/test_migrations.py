import psycopg
import pytest

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
