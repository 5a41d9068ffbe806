"""Ingest throughput on real conversation turns (LoCoMo), batches of 100: engram's ingest (validate,
score, tag, store with the index outbox, start one enrichment) next to the raw insert of the same
rows in the same run; then ingest plus enrichment with the hash and the MiniLM embedders."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from psycopg.types.json import Jsonb

from engram.adapters.postgres.events import EVENT_COLUMNS
from engram.enrichment.ingest import ingest_events
from engram.model.events import IngestRequest, StoredEvent
from engram.ports.clients import Clients
from tests import builder
from tests.bench.conftest import LOCOMO, BenchReport

BATCH = 100
INGEST_EVENTS = 2_000
ENRICH_EVENTS = 300


def _turns(limit: int) -> list[dict[str, Any]]:
    """LoCoMo turns as events (a synthetic stand-in when the data set is absent)."""
    events: list[dict[str, Any]] = []
    start = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    if LOCOMO.exists():
        for sample in json.loads(LOCOMO.read_text()):
            conv = sample["conversation"]
            for key, turns in conv.items():
                if not key.startswith("session_") or not isinstance(turns, list):
                    continue
                for turn in turns:
                    text = turn["text"] + (f" [image: {turn['blip_caption']}]" if turn.get("blip_caption") else "")
                    events.append({"event_id": f"{sample['sample_id']}:{turn['dia_id']}",
                                   "user_id": turn["speaker"].lower(), "conversation_id": f"{sample['sample_id']}-{key}",
                                   "role": "user", "content": text,
                                   "occurred_at": (start + timedelta(minutes=len(events))).isoformat()})
    while len(events) < limit:
        n = len(events)
        events.append({"event_id": f"syn-{n}", "user_id": "u", "conversation_id": f"c{n // 20}", "role": "user",
                       "content": f"I went hiking with my friend number {n} and we talked about the weather.",
                       "occurred_at": (start + timedelta(minutes=n)).isoformat()})
    return events[:limit]


def _batches(events: list[dict[str, Any]]) -> list[IngestRequest]:
    return [IngestRequest.model_validate({"events": events[i:i + BATCH]}) for i in range(0, len(events), BATCH)]


def _raw_insert_rate(clients: Clients, world_id: str, batches: list[IngestRequest]) -> float:
    """The same rows, already scored, inserted with one executemany per batch: the database's own cost."""
    now = datetime.now(UTC)
    rows = [[StoredEvent(world_id=world_id, event_id=e.event_id or "", user_id=e.user_id,
                         conversation_id=e.conversation_id, role=e.role, content=e.content, content_type="userinput",
                         occurred_at=e.occurred_at or now, received_at=now, importance=0.4) for e in b.events]
            for b in batches]
    store: Any = clients.store
    started = time.perf_counter()
    for batch in rows:
        with store.tx(world_id) as cur:
            cur.executemany(
                f"INSERT INTO chat_events ({EVENT_COLUMNS}) VALUES "
                "(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                [(world_id, e.event_id, e.user_id, e.conversation_id, e.role, e.content, e.content_type,
                  e.occurred_at, e.received_at, Jsonb(e.metadata), e.importance, e.tags, e.enrichment_status,
                  e.enrichment_id, e.enrichment_error) for e in batch])
    return sum(len(b) for b in rows) / (time.perf_counter() - started)


def _ingest_rate(clients: Clients, world_id: str, batches: list[IngestRequest], *, enrich: bool) -> float:
    started = time.perf_counter()
    for batch in batches:
        response = ingest_events(clients, clients.world(world_id), batch)
        if enrich:
            ids = [e.event_id for e in response.events if not e.duplicate]
            builder.enrich(clients, world_id, ids)
    return sum(len(b.events) for b in batches) / (time.perf_counter() - started)


@pytest.mark.bench
def test_ingest_throughput_next_to_the_raw_insert_rate(clients: Clients, bench_report: BenchReport) -> None:
    batches = _batches(_turns(INGEST_EVENTS))
    raw = _raw_insert_rate(clients, "bench-raw", batches)
    ingest = _ingest_rate(clients, "bench-ingest", batches, enrich=False)
    replay = _ingest_rate(clients, "bench-ingest", batches, enrich=False)  # every event a duplicate
    bench_report.context.update({"events": INGEST_EVENTS, "batch": BATCH,
                                 "dataset": LOCOMO.name if LOCOMO.exists() else "synthetic"})
    bench_report.add("ingest (store, score, tag, outbox)", ingest, "events/s", baseline="raw executemany insert",
                     baseline_value=raw)
    bench_report.add("replayed batches (all duplicates)", replay, "events/s", baseline="raw executemany insert",
                     baseline_value=raw)

    from engram.adapters.embedders import MiniLMEmbedder

    enrich_batches = _batches(_turns(ENRICH_EVENTS))
    hashed = _ingest_rate(clients, "bench-enrich-hash", enrich_batches, enrich=True)
    bench_report.add("ingest + enrichment, hash embedder", hashed, "events/s", baseline="raw executemany insert",
                     baseline_value=raw)
    original = clients.embedder
    clients.embedder = MiniLMEmbedder()
    try:
        clients.embedder.embed(["warm up"])
        minilm = _ingest_rate(clients, "bench-enrich-minilm", enrich_batches, enrich=True)
    finally:
        clients.embedder = original
    bench_report.add("ingest + enrichment, MiniLM embedder", minilm, "events/s", baseline="raw executemany insert",
                     baseline_value=raw)
    assert ingest > 0 and raw > 0
