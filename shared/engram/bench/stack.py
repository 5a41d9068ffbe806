"""An embedded stack in one process for benchmarks: embedded PostgreSQL and tantivy under a data
directory, the configured embedder, the offline model, and workflows that run each step inline in the
order the state machines run them (resolve, extract, index; consolidation's plan and scopes)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from engram.config import Settings
from engram.ports.clients import Clients


class InlineWorkflows:
    """The Workflows port without a workflow engine: enrichment runs at once, in the caller's thread."""

    def __init__(self) -> None:
        self.clients: Clients | None = None

    def start_enrichment(self, world_id: str, event_ids: Sequence[str], enrichment_id: str) -> str:
        from engram.enrichment.extract import extract_events
        from engram.enrichment.indexing import index_pending
        from engram.enrichment.resolve import resolve_events

        assert self.clients is not None
        world = self.clients.world(world_id)
        resolve_events(self.clients, world, event_ids)
        extract_events(self.clients, world, event_ids)
        index_pending(self.clients, world_id, event_ids)
        return f"inline-{enrichment_id}"

    def run_query(self, world_id: str, query_id: str) -> dict[str, Any]:
        raise NotImplementedError("benchmarks search; they do not run the query loop")

    def start_query(self, world_id: str, query_id: str) -> str:
        raise NotImplementedError("benchmarks search; they do not run the query loop")

    def start_consolidation(self, world_id: str | None) -> str:
        from engram.consolidation.run import consolidate_scope, finish_run, plan

        assert self.clients is not None
        clients = self.clients
        run = plan(clients, clients.world(world_id) if world_id else None)
        results = [consolidate_scope(clients, clients.world(scope.world_id), scope) for scope in run.scopes]
        finish_run(self.clients, run.run_id, results)
        from engram.enrichment.indexing import index_pending

        for world in {s.world_id for s in run.scopes}:
            index_pending(self.clients, world)
        return f"inline-{run.run_id}"


@contextmanager
def embedded_clients(data_dir: Path, *, embedder: str = "minilm") -> Iterator[Clients]:
    """Clients over an embedded stack whose data lives in `data_dir` (kept when the block ends)."""
    from engram.adapters.embedders import build_embedder
    from engram.adapters.offline.llm import OfflineLLM
    from engram.adapters.postgres.embedded import ensure_database, start_embedded_postgres
    from engram.adapters.postgres.migrations import apply_migrations
    from engram.adapters.postgres.store import PostgresStore
    from engram.adapters.tantivy_index import TantivyIndex

    settings = Settings(data_dir=data_dir, embedder=embedder, llm="offline")  # type: ignore[arg-type]
    vectors = build_embedder(settings)
    server = start_embedded_postgres(data_dir)
    url = ensure_database(server, "engram")
    apply_migrations(url, vectors.dim)
    store = PostgresStore(url, max_size=4)
    index = TantivyIndex(data_dir / "index")
    workflows = InlineWorkflows()
    clients = Clients(settings=settings, store=store, index=index, embedder=vectors, llm=OfflineLLM(),
                      workflows=workflows)
    workflows.clients = clients
    try:
        yield clients
    finally:
        index.close()
        store.close()
        server.cleanup()
