"""An embedded stack in one process for benchmarks: embedded PostgreSQL and tantivy under a data
directory, the configured embedder, the offline model, the language engine (as every mode has it), and the
inline workflows (engram.app.inline: each state machine's steps run in the caller's thread, in the state
machine's order)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from engram.app.inline import InlineWorkflows
from engram.config import Settings
from engram.ports.clients import Clients


@contextmanager
def embedded_clients(data_dir: Path, *, embedder: str = "minilm") -> Iterator[Clients]:
    """Clients over an embedded stack whose data lives in `data_dir` (kept when the block ends)."""
    from engram.adapters.embedders import build_embedder
    from engram.adapters.offline.llm import OfflineLLM
    from engram.adapters.postgres.embedded import ensure_database, start_embedded_postgres
    from engram.adapters.postgres.migrations import apply_migrations
    from engram.adapters.postgres.store import PostgresStore
    from engram.adapters.tantivy_index import TantivyIndex
    from engram.app.factory import build_language

    settings = Settings(data_dir=data_dir, embedder=embedder, llm="offline")  # type: ignore[arg-type]
    vectors = build_embedder(settings)
    server = start_embedded_postgres(data_dir)
    url = ensure_database(server, "engram")
    apply_migrations(url, vectors.dim)
    store = PostgresStore(url, max_size=4, prepare=True)  # the embedded server's, as `build_store` opens it
    index = TantivyIndex(data_dir / "index")
    workflows = InlineWorkflows()
    clients = Clients(settings=settings, store=store, index=index, embedder=vectors, llm=OfflineLLM(),
                      workflows=workflows, language=build_language(settings))
    workflows.clients = clients
    try:
        yield clients
    finally:
        index.close()
        store.close()
        server.cleanup()
