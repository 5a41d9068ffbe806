"""Fixtures shared by every suite: the embedded PostgreSQL server and fresh databases on it."""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")
os.environ.setdefault("POWERTOOLS_TRACE_DISABLED", "true")
os.environ.setdefault("POWERTOOLS_SERVICE_NAME", "engram")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

REPO = Path(__file__).resolve().parent.parent
TEST_EMBEDDING_DIM = 384
_db_counter = itertools.count()


@pytest.fixture(scope="session")
def pg_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    """One embedded PostgreSQL server for the whole session."""
    from engram.adapters.postgres.embedded import start_embedded_postgres

    server = start_embedded_postgres(tmp_path_factory.mktemp("engram-pg"))
    yield server
    server.cleanup()


@pytest.fixture(scope="module")
def pg_url(pg_server: object) -> str:
    """A fresh, migrated database per test module."""
    from engram.adapters.postgres.embedded import ensure_database
    from engram.adapters.postgres.migrations import apply_migrations

    url = ensure_database(pg_server, f"test_{os.getpid()}_{next(_db_counter)}")
    apply_migrations(url, TEST_EMBEDDING_DIM)
    return url


@pytest.fixture(scope="module")
def pg_store(pg_url: str) -> Iterator[object]:
    """A PostgresStore over the module's fresh database."""
    from engram.adapters.postgres.store import PostgresStore

    store = PostgresStore(pg_url, max_size=4, prepare=True)  # as the embedded default opens it
    yield store
    store.close()


@pytest.fixture(scope="module")
def clients(pg_store: object, tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    """Real parts for domain integration tests: PostgreSQL, tantivy, the hash embedder, the offline
    model, the language engine, and a workflows fake that records starts (the pipelines are driven by the test)."""
    from engram.adapters.embedders import HashEmbedder
    from engram.adapters.offline.llm import OfflineLLM
    from engram.adapters.spacy_engine import shared_engine
    from engram.adapters.tantivy_index import TantivyIndex
    from engram.config import Settings
    from engram.ports.clients import Clients
    from tests.fakes.workflows import RecordingWorkflows

    index = TantivyIndex(tmp_path_factory.mktemp("index"))
    yield Clients(settings=Settings(), store=pg_store, index=index, embedder=HashEmbedder(TEST_EMBEDDING_DIM),  # type: ignore[arg-type]
                  llm=OfflineLLM(), workflows=RecordingWorkflows(), language=shared_engine())
    index.close()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "bench: a benchmark (make bench), never part of make test")
    # Powertools warns on every handler call that emitted no metric; metrics are disabled in tests.
    config.addinivalue_line("filterwarnings", "ignore:No application metrics to publish:UserWarning")
    config.addinivalue_line("filterwarnings", "ignore:XDG_RUNTIME_DIR is not set")
