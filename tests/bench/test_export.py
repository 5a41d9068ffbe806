"""Export and import throughput (records per second) on the LoCoMo development worlds: each world exported
whole, then imported into a fresh embedded stack (validation, one transaction, keyword index), next to the
bare floor measured in the same run: reading the same rows as JSON with one SELECT per table (export), and
inserting the already-parsed rows with the same SQL and nothing else into another fresh database (import).

The worlds are the retrieval bench's (ENGRAM_BENCH_CACHE, default `.engram/bench`): its cache for the current
code when there is one, else the newest cached ingest (its rows are as good for throughput), else they are
ingested here first (minutes)."""

from __future__ import annotations

import json
import os
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from engram.bench.locomo import load, world_of
from engram.bench.progress import ConsoleProgress
from engram.memory.portability import export_page, import_document, parse_document
from engram.model.portability import KINDS, RECORD_KINDS
from engram.ports.clients import Clients
from tests.bench.conftest import LOCOMO, REPO, BenchReport

CACHE = Path(os.environ.get("ENGRAM_BENCH_CACHE", REPO / ".engram" / "bench"))


@contextmanager
def _locomo_worlds() -> Iterator[tuple[Clients, list[str], str]]:
    """Clients over the cached LoCoMo stack, its worlds, and which cache it is."""
    from engram.bench import retrieval
    from engram.bench.stack import embedded_clients

    conversations = load(LOCOMO)
    worlds = [world_of(c) for c in conversations]
    current = CACHE / f"locomo-{retrieval._fingerprint(LOCOMO, 'minilm')}"
    cached = sorted((d for d in CACHE.glob("locomo-*") if (d / "ingested.json").exists()
                     and set(json.loads((d / "ingested.json").read_text())) >= set(worlds)),
                    key=lambda d: (d != current, -d.stat().st_mtime))
    if cached:
        with embedded_clients(cached[0]) as clients:
            yield clients, worlds, "current" if cached[0] == current else f"earlier ({cached[0].name})"
        return
    with retrieval._data_dir(CACHE, current.name.removeprefix("locomo-")) as data_dir, \
            embedded_clients(data_dir) as clients:
        retrieval._ingest_all(clients, data_dir, conversations, ConsoleProgress())
        yield clients, worlds, "ingested now"


@contextmanager
def _fresh_stack(data_dir: Path) -> Iterator[tuple[Clients, object]]:
    """A fresh embedded stack, and a store over a second empty database on its server (for the floor)."""
    from engram.adapters.postgres.embedded import ensure_database, start_embedded_postgres
    from engram.adapters.postgres.migrations import apply_migrations
    from engram.adapters.postgres.store import PostgresStore
    from engram.bench.stack import embedded_clients

    with embedded_clients(data_dir) as clients:
        url = ensure_database(start_embedded_postgres(data_dir), "floor")
        apply_migrations(url, clients.embedder.dim)
        floor = PostgresStore(url, max_size=2)
        try:
            yield clients, floor
        finally:
            floor.close()


def _bare_read(clients: Clients, world: str) -> int:
    """Every exported table's rows of the world as JSON text, one SELECT each: the floor of reading them."""
    read = 0
    with clients.store.tx(world) as cur:  # type: ignore[attr-defined]
        for kind in RECORD_KINDS:
            cur.execute(f"SELECT row_to_json(t)::text AS j FROM {kind.table} t WHERE world_id = %s", (world,))
            read += len(cur.fetchall())
    return read


@pytest.mark.bench
@pytest.mark.skipif(not LOCOMO.exists(), reason="the LoCoMo development split is not on this machine")
def test_export_and_import_throughput_on_the_locomo_worlds(bench_report: BenchReport) -> None:
    documents: dict[str, list[str]] = {}
    export_s = floor_read_s = 0.0
    records = floor_records = 0
    with _locomo_worlds() as (source, worlds, cache):
        for world in worlds:
            started = time.perf_counter()
            page = export_page(source, world)
            export_s += time.perf_counter() - started
            documents[world] = page.lines
            records += len(page.lines) - 1
            started = time.perf_counter()
            floor_records += _bare_read(source, world)
            floor_read_s += time.perf_counter() - started
        lean_bytes = sum(len(export_page(source, w, vectors=False).text.encode()) for w in worlds)
    assert floor_records == records  # the floor read the very rows the export wrote
    size = sum(len(line.encode()) + 1 for lines in documents.values() for line in lines)

    import_s = floor_write_s = 0.0
    with tempfile.TemporaryDirectory(prefix="engram-bench-import-") as tmp, _fresh_stack(Path(tmp)) as (target, floor):
        for world, lines in documents.items():
            started = time.perf_counter()
            result = import_document(target, world, lines)
            import_s += time.perf_counter() - started
            assert result.records == len(lines) - 1 and result.skipped == {} and result.vectors == "imported"
            rows = parse_document(lines, schema_version=floor.schema_version()).rows  # type: ignore[attr-defined]
            started = time.perf_counter()
            floor.import_rows(world, [(KINDS[name], kind_rows) for name, kind_rows in rows.items()])  # type: ignore[attr-defined]
            floor_write_s += time.perf_counter() - started
        again = time.perf_counter()
        for world, lines in documents.items():
            assert import_document(target, world, lines).inserted == {}
        again_s = time.perf_counter() - again

    bench_report.context.update({"worlds": worlds, "records": records, "cache": cache,
                                 "document_mb": round(size / 1e6, 2), "document_mb_without_vectors":
                                 round(lean_bytes / 1e6, 2)})
    bench_report.add("export (records/s)", records / export_s, "records/s", baseline="bare SELECT row_to_json",
                     baseline_value=floor_records / floor_read_s)
    bench_report.add("import into a fresh stack (records/s)", records / import_s, "records/s",
                     baseline="bare INSERT of parsed rows", baseline_value=records / floor_write_s)
    bench_report.add("import again, all skipped (records/s)", records / again_s, "records/s")
    bench_report.add("records exported", records, "records")
    bench_report.add("document size with vectors", size / 1e6, "MB", baseline="without vectors",
                     baseline_value=lean_bytes / 1e6)
    assert records > 1000
