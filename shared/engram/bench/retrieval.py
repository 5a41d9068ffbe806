"""`engram bench retrieval`: engram's fused search on LoCoMo next to plain BM25 and plain dense retrieval
computed in the same run.

Each conversation is a world of its own; every turn is ingested through the real pipeline (ingest,
resolve, extract, index, then consolidation) as an event: `event_id` its dia_id, `user_id` its speaker,
`conversation_id` its session, `occurred_at` the session's date and time, the image caption appended to
the content. Every question of categories 1 to 4 is searched over the whole world; the ranked hits are
mapped to the events they come from (a fact or summary counts as its source events), deduplicated in
order, and scored against the evidence turns: Recall@1/5/10/20 and NDCG@10, overall, per category, and
on the tuning and held-out conversations separately, with the Recall@k curve for k = 1..20 of each. The
JSON goes to `retrieval.json`, the curves and the Recall@10 bars to PNG files beside it.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import statistics
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from engram.bench import metrics
from engram.bench.baselines import BM25Baseline, DenseBaseline, reciprocal_rank_fusion
from engram.bench.locomo import CATEGORIES, Conversation, ingest_conversation, load, world_of
from engram.bench.progress import ConsoleProgress, Progress
from engram.model.heuristics import DEFAULT_HEURISTICS
from engram.model.search import SearchHit
from engram.ports.clients import Clients

HELD_OUT = ("conv-42", "conv-43")  # never looked at while tuning: reported apart
DEPTH = 20  # events scored per question and system (the deepest cutoff)
HITS = 50  # hits asked of engram: an entity hit stands for no event, a memory for several
SYSTEMS = ("engram", "bm25", "dense", "bm25+dense rrf")
# Modules whose code decides what an ingested world holds: a cached world is reused only while they are unchanged.
_INGEST_MODULES = ("enrichment", "consolidation", "memory", "rules", "model", "migrations", "app",
                   "adapters/offline", "adapters/spacy_engine.py", "adapters/engine_first.py",
                   "adapters/staged_llm.py", "adapters/structured.py", "adapters/embedders.py",
                   "adapters/tantivy_index.py", "adapters/postgres", "bench/locomo.py")
# Within those, the modules read only when a question is asked: changing them never invalidates an ingested world.
_QUERY_TIME_MODULES = ("adapters/postgres/retrieval.py", "adapters/postgres/graph.py",
                       "adapters/offline/answers.py", "adapters/offline/spans.py", "adapters/offline/wording.py",
                       "adapters/offline/choosing.py", "adapters/offline/verdicts.py", "adapters/offline/asked.py",
                       "adapters/offline/leaning.py", "adapters/offline/referents.py", "adapters/offline/causes.py",
                       "adapters/offline/research.py", "adapters/offline/synthesis.py", "adapters/offline/kinds.py",
                       "memory/context.py", "model/queries.py", "model/context.py")
# Heuristics read only at query time: changing them never invalidates an ingested world.
_QUERY_TIME = ("rrf_", "ranker", "weight_", "recency_", "semantic_", "search_", "context_", "fusion_", "keyword_", "graph_",
               "serendipity_", "query_", "web_", "max_info", "max_initial", "chars_per")



class QuestionScore(NamedTuple):
    """One question's measures for one system."""

    sample_id: str
    category: str
    scores: dict[str, float]
    curve: list[float]  # Recall@k for k = 1..DEPTH


@dataclass
class Outcome:
    """What one run measured: the JSON document, the per-question rows behind it, the plots written."""

    document: dict[str, Any]
    rows: dict[str, list[QuestionScore]] = field(default_factory=dict)
    plots: list[Path] = field(default_factory=list)


def run(dataset: Path, out_dir: Path, *, cache_dir: Path | None = None, held_out: Sequence[str] = HELD_OUT,
        embedder: str = "minilm", progress: Progress | None = None) -> Outcome:
    """Run the benchmark and write `out_dir/retrieval.json` and its plots. With `cache_dir`, ingested worlds
    (and the baseline's vectors) are kept there and reused while the dataset and the ingest code are unchanged."""
    from engram.bench.plots import retrieval_plots

    progress = progress or ConsoleProgress()
    conversations = load(dataset)
    fingerprint = _fingerprint(dataset, embedder)
    with _data_dir(cache_dir, fingerprint) as data_dir:
        from engram.bench.stack import embedded_clients

        with embedded_clients(data_dir, embedder=embedder) as clients:
            ingest_s = _ingest_all(clients, data_dir, conversations, progress)
            engram_ranked, latencies = _engram_rankings(clients, conversations, progress)
            baseline_ranked = _baseline_rankings(clients, data_dir, conversations, progress)
    rankings = {"engram": engram_ranked, **baseline_ranked}
    outcome = score(dataset.name, conversations, rankings, held_out)
    outcome.document["search_latency_ms"] = _percentiles(latencies)
    outcome.document["ingest"] = {"events": sum(len(c.turns) for c in conversations), "seconds": round(ingest_s, 1),
                                  "cached": ingest_s == 0.0, "embedder": embedder}
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "retrieval.json").write_text(json.dumps(outcome.document, indent=2))
    outcome.plots = retrieval_plots(outcome.document, out_dir)
    return outcome


# ---------------------------------------------------------------- ingest
def _ingest_all(clients: Clients, data_dir: Path, conversations: list[Conversation], progress: Progress) -> float:
    """Ingest the conversations not already in the data directory; returns the seconds spent (0: all cached)."""
    marker = data_dir / "ingested.json"
    done = set(json.loads(marker.read_text())) if marker.exists() else set()
    todo = [conv for conv in conversations if world_of(conv) not in done]
    if not todo:
        progress.note(f"{len(conversations)} conversations already ingested in {data_dir}")
        return 0.0
    spent = 0.0
    with progress.bar(f"ingesting {len(todo)} conversations", sum(len(c.turns) for c in todo)) as advance:
        for conv in todo:
            started = time.perf_counter()
            ingest_conversation(clients, conv, advance)
            done.add(world_of(conv))
            marker.write_text(json.dumps(sorted(done)))
            spent += time.perf_counter() - started
            progress.note(f"ingested {world_of(conv)}: {len(conv.turns)} turns in {time.perf_counter() - started:.0f} s")
    return spent


# ---------------------------------------------------------------- rankings
Rankings = dict[tuple[str, int], list[str]]  # (sample id, question index) -> ranked event ids


def source_events(hit: SearchHit) -> list[str]:
    """The events a hit stands for: an event itself; a memory, fact or summary its sources."""
    return [hit.doc_id] if hit.kind == "event" else list(hit.event_ids)


def _engram_rankings(clients: Clients, conversations: list[Conversation],
                     progress: Progress) -> tuple[Rankings, list[float]]:
    from engram.retrieval.search import search

    ranked: Rankings = {}
    latencies: list[float] = []
    with progress.bar("searching with engram", sum(len(c.questions) for c in conversations)) as advance:
        for conv in conversations:
            world = clients.world(world_of(conv))
            known = {t.dia_id for t in conv.turns}
            for qi, q in enumerate(conv.questions):
                started = time.perf_counter()
                result = search(clients, world, q.question, user_id=None, limit=HITS)
                latencies.append((time.perf_counter() - started) * 1000)
                events: dict[str, None] = {}
                for hit in result.hits:
                    for event_id in source_events(hit):
                        if event_id in known:
                            events.setdefault(event_id, None)
                ranked[(conv.sample_id, qi)] = list(events)[:DEPTH]
                advance(1)
    return ranked, latencies


def turn_text(speaker: str, content: str) -> str:
    """What both baselines see of a turn: who said it and what (the caption included)."""
    return f"{speaker}: {content}"


def _baseline_rankings(clients: Clients, data_dir: Path, conversations: list[Conversation],
                       progress: Progress) -> dict[str, Rankings]:
    out: dict[str, Rankings] = {name: {} for name in SYSTEMS if name != "engram"}
    vectors = _baseline_vectors(clients, data_dir, conversations, progress)
    for conv in conversations:
        docs = [(t.dia_id, turn_text(t.speaker, t.content)) for t in conv.turns]
        bm25 = BM25Baseline(docs)
        turn_vectors, question_vectors = vectors[conv.sample_id]
        dense = DenseBaseline([d for d, _ in docs], turn_vectors)
        for qi, q in enumerate(conv.questions):
            lexical = bm25.rank(q.question, DEPTH)
            semantic = dense.rank(question_vectors[qi], DEPTH)
            out["bm25"][(conv.sample_id, qi)] = lexical
            out["dense"][(conv.sample_id, qi)] = semantic
            out["bm25+dense rrf"][(conv.sample_id, qi)] = reciprocal_rank_fusion([lexical, semantic])[:DEPTH]
    progress.note("baselines ranked")
    return out


def _baseline_vectors(clients: Clients, data_dir: Path, conversations: list[Conversation],
                      progress: Progress) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """The dense baseline's turn and question vectors, from the embedder engram uses (kept with the cache)."""
    path = data_dir / "baseline-vectors.npz"
    if path.exists():
        stored = np.load(path)
        return {c.sample_id: (stored[f"{c.sample_id}/turns"], stored[f"{c.sample_id}/questions"])
                for c in conversations}
    out: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    with progress.bar("embedding for the dense baseline", len(conversations)) as advance:
        for c in conversations:
            turns = np.asarray(clients.embedder.embed([turn_text(t.speaker, t.content) for t in c.turns]), np.float32)
            questions = np.asarray(clients.embedder.embed([q.question for q in c.questions]), np.float32)
            out[c.sample_id] = (turns, questions)
            advance(1)
    arrays: dict[str, Any] = {f"{k}/turns": v[0] for k, v in out.items()} | {f"{k}/questions": v[1]
                                                                            for k, v in out.items()}
    np.savez(path, **arrays)
    return out


# ---------------------------------------------------------------- scoring
def score(dataset: str, conversations: list[Conversation], rankings: dict[str, Rankings],
           held_out: Sequence[str]) -> Outcome:
    """Every system's rankings scored against the evidence turns: the JSON document (without the run's
    timings) and the per-question rows. `rankings` maps a system to (sample id, question index) -> event ids."""
    questions = [(c, qi, q) for c in conversations for qi, q in enumerate(c.questions)]
    doc: dict[str, Any] = {
        "dataset": dataset, "questions": len(questions),
        "questions_by_category": {name: sum(q.category == name for _c, _qi, q in questions)
                                  for name in CATEGORIES.values()},
        "conversations": {c.sample_id: {"turns": len(c.turns), "questions": len(c.questions),
                                        "split": "held-out" if c.sample_id in held_out else "tuning"}
                          for c in conversations},
        "systems": {},
    }
    outcome = Outcome(doc)
    for system, ranked in rankings.items():
        rows = [QuestionScore(c.sample_id, q.category, metrics.scores(ranked[(c.sample_id, qi)], q.evidence),
                              metrics.recall_curve(ranked[(c.sample_id, qi)], q.evidence, DEPTH))
                for c, qi, q in questions]
        outcome.rows[system] = rows
        splits = {split: [r for r in rows if (r.sample_id in held_out) == (split == "held-out")]
                  for split in ("tuning", "held-out")}
        # A split without questions (no conversation held out) has no row: zeros would read as measured.
        doc["systems"][system] = {**_summary(rows),
                                  "by_split": {split: _summary(part) for split, part in splits.items() if part}}
    return outcome


def _summary(rows: list[QuestionScore]) -> dict[str, Any]:
    """Mean measures over the rows, overall and by category, and the mean Recall@k curve of each."""
    by_category = {name: [r for r in rows if r.category == name] for name in CATEGORIES.values()}
    return {"questions": len(rows), "overall": metrics.mean([r.scores for r in rows]),
            "by_category": {name: metrics.mean([r.scores for r in part]) for name, part in by_category.items()},
            "recall_at_k": {"all": metrics.mean_curve([r.curve for r in rows], DEPTH),
                            "by_category": {name: metrics.mean_curve([r.curve for r in part], DEPTH)
                                            for name, part in by_category.items()}}}


def _percentiles(values: list[float]) -> dict[str, float]:
    if not values:
        return {"p50": 0.0, "p95": 0.0}
    ordered = sorted(values)
    return {"p50": round(statistics.median(ordered), 2), "p95": round(ordered[int(0.95 * (len(ordered) - 1))], 2)}


def table(document: dict[str, Any]) -> str:
    """The systems side by side: overall measures per split, then Recall@10 per category."""
    measures = [f"recall@{k}" for k in metrics.CUTOFFS] + [f"ndcg@{metrics.NDCG_AT}"]
    lines = [f"LoCoMo retrieval ({document['dataset']}, {document['questions']} questions; "
             f"held-out: {', '.join(c for c, v in document['conversations'].items() if v['split'] == 'held-out')})",
             f"{'system':<16} {'split':<9} {'n':>4} " + " ".join(f"{m:>9}" for m in measures)]
    for system, result in document["systems"].items():
        for split, part in (("all", result), *result["by_split"].items()):
            lines.append(f"{system:<16} {split:<9} {part['questions']:>4} "
                         + " ".join(f"{part['overall'][m]:>9.3f}" for m in measures))
    categories = list(CATEGORIES.values())
    lines += ["", f"Recall@10 by category{'':<3}" + " ".join(f"{c:>12}" for c in categories)]
    for system, result in document["systems"].items():
        for split, part in (("all", result), *result["by_split"].items()):
            lines.append(f"{system:<16} {split:<9} "
                         + " ".join(f"{part['by_category'][c]['recall@10']:>12.3f}" for c in categories))
    return "\n".join(lines)


# ---------------------------------------------------------------- the cache
def _fingerprint(dataset: Path, embedder: str) -> str:
    """What an ingested world depends on: the data, the embedder, the ingest code and its heuristics."""
    digest = hashlib.sha256(dataset.read_bytes())
    digest.update(embedder.encode())
    root = Path(str(resources.files("engram")))
    for name in _INGEST_MODULES:
        path = root / name
        for file in sorted(path.rglob("*") if path.is_dir() else [path]):
            relative = file.relative_to(root).as_posix()
            if file.is_file() and file.suffix in {".py", ".sql"} and relative not in _QUERY_TIME_MODULES:
                digest.update(relative.encode())
                digest.update(file.read_bytes())
    ingest_heuristics = {k: v for k, v in DEFAULT_HEURISTICS.flat().items()
                         if not k.startswith(_QUERY_TIME)}
    digest.update(json.dumps(ingest_heuristics, sort_keys=True).encode())
    return digest.hexdigest()[:16]


@contextmanager
def _data_dir(cache_dir: Path | None, fingerprint: str) -> Iterator[Path]:
    if cache_dir is None:
        with tempfile.TemporaryDirectory(prefix="engram-bench-") as tmp:
            yield Path(tmp)
        return
    cache_dir.mkdir(parents=True, exist_ok=True)
    for stale in cache_dir.glob("locomo-*"):
        if stale.name != f"locomo-{fingerprint}":
            shutil.rmtree(stale, ignore_errors=True)  # one cached stack at a time: the current code's
    path = cache_dir / f"locomo-{fingerprint}"
    path.mkdir(exist_ok=True)
    yield path
