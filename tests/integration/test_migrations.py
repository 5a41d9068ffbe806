import hashlib
import itertools
import os
import re

import numpy as np
import psycopg
import pytest

from engram.adapters.postgres import migrations
from engram.adapters.postgres.migrations import RETIRED_VERSIONS, apply_migrations, migration_files
from engram.errors import ConfigurationError

pytestmark = pytest.mark.integration

DATA_TABLES = {
    "chat_events", "canonical_entities", "entity_aliases", "entity_mentions", "entity_relationships",
    "episodic_memories", "semantic_memories", "procedural_memories", "memory_summaries", "domain_ontology",
    "memory_conflicts", "signals", "world_queries", "query_contexts", "system_config", "index_outbox",
    "consolidation_runs", "signal_cursors",
    "insight_states", "inflections", "interventions",
}
_databases = itertools.count()


@pytest.fixture
def fresh_url(pg_server: object) -> str:
    """An empty database of its own, for a test that migrates it step by step."""
    from engram.adapters.postgres.embedded import ensure_database

    return ensure_database(pg_server, f"migrate_{os.getpid()}_{next(_databases)}")


def recorded(url: str) -> list[tuple[int, str, str | None]]:
    """(version, name, checksum) of every migration the database records, by version."""
    with psycopg.connect(url) as conn:
        return conn.execute("SELECT version, name, checksum FROM schema_migrations ORDER BY version").fetchall()


def table_exists(url: str, table: str) -> bool:
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT to_regclass(%s) IS NOT NULL", (table,)).fetchone()
    return row == (True,)


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


def test_applying_twice_applies_nothing_and_changes_no_record_the_second_time(pg_url: str) -> None:
    with psycopg.connect(pg_url) as conn:
        before = conn.execute("SELECT * FROM schema_migrations ORDER BY version").fetchall()
    assert apply_migrations(pg_url, 384) == []
    assert len(migration_files()) >= 1
    with psycopg.connect(pg_url) as conn:
        assert conn.execute("SELECT * FROM schema_migrations ORDER BY version").fetchall() == before


def test_each_applied_migration_records_the_sha256_of_its_file_as_shipped(pg_url: str) -> None:
    shipped = [(v, n, hashlib.sha256(s.encode()).hexdigest()) for v, n, s in migration_files()]
    assert recorded(pg_url) == shipped
    assert any("{{EMBEDDING_DIM}}" in s for _, _, s in migration_files())  # the text before substitution


def test_shipped_migrations_are_numbered_from_one_to_the_latest_except_the_retired_numbers() -> None:
    versions = [v for v, _, _ in migration_files()]
    assert {9, 12, 19} == RETIRED_VERSIONS
    assert versions == [v for v in range(1, max(versions) + 1) if v not in RETIRED_VERSIONS]


def test_two_migrations_sharing_a_number_are_refused_before_the_database_is_touched(fresh_url: str) -> None:
    twins = [(1, "0001_schema.sql", "SELECT 1"), (1, "0001_other.sql", "SELECT 1")]
    with pytest.raises(ConfigurationError, match=re.escape("0001_other.sql and 0001_schema.sql share the number 0001")):
        apply_migrations(fresh_url, 384, files=twins)
    assert not table_exists(fresh_url, "schema_migrations")


def test_a_migration_taking_a_retired_number_is_refused(fresh_url: str) -> None:
    files = [*migration_files(), (19, "0019_late.sql", "SELECT 1")]
    with pytest.raises(ConfigurationError, match=re.escape("0019_late.sql takes the retired number 0019")):
        apply_migrations(fresh_url, 384, files=files)
    assert not table_exists(fresh_url, "schema_migrations")


def test_a_migration_changed_after_being_applied_is_refused_and_nothing_is_applied(fresh_url: str) -> None:
    shipped = migration_files()
    apply_migrations(fresh_url, 384, files=[m for m in shipped if m[0] < 18])
    before = recorded(fresh_url)
    edited = [(v, n, s + "\nCREATE TABLE sneaked_in (id int);\n" if v == 10 else s) for v, n, s in shipped]
    changed = "0010_query_signals.sql was changed after being applied: write a new migration instead"
    with pytest.raises(ConfigurationError, match=re.escape(changed)):
        apply_migrations(fresh_url, 384, files=edited)
    assert recorded(fresh_url) == before
    assert not table_exists(fresh_url, "sneaked_in")


def test_migrations_applied_before_checksums_were_kept_get_theirs_from_the_shipped_files(fresh_url: str) -> None:
    apply_migrations(fresh_url, 384)
    expected = recorded(fresh_url)
    with psycopg.connect(fresh_url, autocommit=True) as conn:  # the table as the runner made it before checksums
        conn.execute("ALTER TABLE schema_migrations DROP COLUMN checksum")
    assert apply_migrations(fresh_url, 384) == []
    assert recorded(fresh_url) == expected and all(c is not None for _, _, c in expected)


def test_a_migration_added_out_of_order_is_refused_and_nothing_is_applied(fresh_url: str) -> None:
    shipped = migration_files()
    last, last_name = shipped[-1][0], shipped[-1][1]  # left out, then shipped after a later one was applied
    later = (last + 1, f"{last + 1:04d}_later.sql", "CREATE TABLE later_things (id int)")
    apply_migrations(fresh_url, 384, files=[*(m for m in shipped if m[0] != last), later])
    before = recorded(fresh_url)
    following = (last + 2, f"{last + 2:04d}_following.sql", "CREATE TABLE following_things (id int)")
    out_of_order = f"{last_name} was added out of order: give it a number after {last + 1:04d}"
    with pytest.raises(ConfigurationError, match=re.escape(out_of_order)):
        apply_migrations(fresh_url, 384, files=[*shipped, later, following])
    assert recorded(fresh_url) == before
    assert not table_exists(fresh_url, "following_things")


def test_a_database_that_applied_a_migration_this_code_does_not_ship_is_refused(fresh_url: str) -> None:
    n = migration_files()[-1][0] + 1
    future = (n, f"{n:04d}_from_a_newer_release.sql", "SELECT 1")
    apply_migrations(fresh_url, 384, files=[*migration_files(), future])
    before = recorded(fresh_url)
    following = (n + 1, f"{n + 1:04d}_following.sql", "CREATE TABLE following_things (id int)")
    newer = (f"applied migration {n:04d} ({n:04d}_from_a_newer_release.sql), which this code does not ship: "
             "the database is newer than this code")
    with pytest.raises(ConfigurationError, match=re.escape(newer)):
        apply_migrations(fresh_url, 384, files=[*migration_files(), following])
    assert recorded(fresh_url) == before
    assert not table_exists(fresh_url, "following_things")


def test_a_different_embedding_dimension_is_refused_with_a_clear_error(pg_url: str) -> None:
    with pytest.raises(ConfigurationError, match="384-dimensional"):
        apply_migrations(pg_url, 1024)


def test_mentions_stored_before_migration_0018_get_opaque_ids_and_new_ones_do_too(
        pg_server: object, monkeypatch: pytest.MonkeyPatch) -> None:
    url = _migrated_before(18, pg_server, monkeypatch, "mentions")
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


def test_names_stored_before_migration_0025_become_the_documents_names(
        pg_server: object, monkeypatch: pytest.MonkeyPatch) -> None:
    url = _migrated_before(25, pg_server, monkeypatch, "names")
    mentions = [("Ana", "name", "created"), ("she", "pronoun", "coreference"), ("Acme", "name", "domain"),
                ("Zed", "name", "unresolved"), ("they", "pronoun", "unresolved"), ("my boss", "description", "unresolved"),
                ("Bo", "name", "disambiguation_required"), ("Cy", "name", "exact")]
    conflicts = [("c1", "same_predicate", "recency_gap"), ("c2", "same_predicate", "trust_domain_database"),
                 ("c3", "cross_predicate", "ask_user"), ("c4", "same_predicate", "confidence_gap"),
                 ("c5", "same_predicate", None)]
    with psycopg.connect(url, autocommit=True) as conn:
        for n, (text, kind, method) in enumerate(mentions):
            conn.execute("INSERT INTO entity_mentions (world_id, event_id, mention, kind, span_start, span_end, "
                         "method, confidence) VALUES ('w', 'e1', %s, %s, %s, %s, %s, 0)",
                         (text, kind, n * 10, n * 10 + 3, method))
        conn.execute("INSERT INTO canonical_entities (world_id, entity_id, name, normalized_name) "
                     "VALUES ('w', 'ent_1', 'Acme', 'acme')")
        for alias, source in [("acme", "domain"), ("acme co", "fuzzy"), ("the customer", "coreference")]:
            conn.execute("INSERT INTO entity_aliases (world_id, entity_id, alias, normalized_alias, confidence, "
                         "source) VALUES ('w', 'ent_1', %s, %s, 0.9, %s)", (alias, alias, source))
        for conflict_id, kind, strategy in conflicts:
            conn.execute("INSERT INTO memory_conflicts (world_id, conflict_id, memory_id, conflicting_memory_id, "
                         "kind, strategy) VALUES ('w', %s, 'm1', 'm2', %s, %s)", (conflict_id, kind, strategy))
        conn.execute("""INSERT INTO system_config (world_id, key, value) VALUES ('w', 'rank_source_weights',
                        '{"domain": 0.5, "user": 1.0}')""")

    apply_migrations(url, 384)
    with psycopg.connect(url, autocommit=True) as conn:
        methods = dict(conn.execute("SELECT mention, method FROM entity_mentions").fetchall())
        sources = dict(conn.execute("SELECT alias, source FROM entity_aliases").fetchall())
        settled = conn.execute("SELECT conflict_id, kind, strategy FROM memory_conflicts ORDER BY 1").fetchall()
        weights = conn.execute("SELECT value FROM system_config WHERE key = 'rank_source_weights'").fetchone()
        with pytest.raises(psycopg.errors.CheckViolation):
            conn.execute("INSERT INTO memory_conflicts (world_id, conflict_id, memory_id, conflicting_memory_id, "
                         "kind) VALUES ('w', 'c9', 'm1', 'm2', 'same_predicate')")
        conn.execute("INSERT INTO memory_conflicts (world_id, conflict_id, memory_id, conflicting_memory_id) "
                     "VALUES ('w', 'c8', 'm1', 'm2')")
        default = conn.execute("SELECT kind FROM memory_conflicts WHERE conflict_id = 'c8'").fetchone()
    assert methods == {"Ana": "created", "she": "llm_coreference", "Acme": "domain_db", "Zed": "not_found",
                       "they": "no_candidates", "my boss": "no_candidates", "Bo": "disambiguation_required",
                       "Cy": "exact"}
    assert sources == {"acme": "domain_db", "acme co": "fuzzy", "the customer": "coreference"}
    assert settled == [("c1", "memory_vs_memory", "trust_recent"), ("c2", "memory_vs_db", "trust_db"),
                       ("c3", "semantic_conflict", "ask_user"), ("c4", "memory_vs_memory", "confidence_gap"),
                       ("c5", "memory_vs_memory", None)]
    assert weights == ({"domain_db": 0.5, "user": 1.0},) and default == ("memory_vs_memory",)


def _migrated_before(number: int, pg_server: object, monkeypatch: pytest.MonkeyPatch, name: str) -> str:
    """A new database with the migrations before `number` applied: the state a release before it left."""
    from engram.adapters.postgres.embedded import ensure_database

    url = ensure_database(pg_server, f"{name}_{os.getpid()}")
    with monkeypatch.context() as before:
        before.setattr(migrations, "migration_files", lambda: [m for m in migration_files() if m[0] < number])
        apply_migrations(url, 384)
    return url


def test_an_events_own_vector_stays_in_its_row_and_its_in_context_one_leaves_it(fresh_url: str) -> None:
    apply_migrations(fresh_url, 384)
    rng = np.random.default_rng(3)  # vectors as embedders make them: nothing to compress
    own, context = (rng.standard_normal(384).round(6).tolist() for _ in range(2))
    with psycopg.connect(fresh_url, autocommit=True) as conn:
        conn.execute("INSERT INTO chat_events (world_id, event_id, user_id, conversation_id, role, content, "
                     "content_type, occurred_at, importance, embedding, context_embedding) VALUES ('w', 'e1', 'u', "
                     "'c', 'user', 'hello', 'userinput', now(), 0.5, %s::vector, %s::vector)", (str(own), str(context)))
        stored = conn.execute("SELECT pg_column_toast_chunk_id(embedding) IS NULL, "
                              "pg_column_toast_chunk_id(context_embedding) IS NOT NULL FROM chat_events").fetchone()
    assert stored == (True, True)  # ordering the turns by the own vector reads no TOAST
