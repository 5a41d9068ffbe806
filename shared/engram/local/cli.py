"""The `engram` command: serve the embedded stack, and talk to a running server."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import httpx

from engram.config import get_settings
from engram.local import remote
from engram.sdk.client import ApiError
from engram.sdk.routes import Unreachable


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        return int(args.run(args) or 0)
    except Unreachable as exc:  # the client's retries are spent
        if isinstance(exc.__cause__, httpx.ConnectError):
            print(f"engram: no server at {args.url}; start one with `make run` (or `engram serve`)", file=sys.stderr)
        else:
            print(f"engram: the request to {args.url} failed: {exc.message}", file=sys.stderr)
        return 2
    except httpx.HTTPError as exc:
        print(f"engram: the request to {args.url} failed: {exc.__class__.__name__}: {exc}", file=sys.stderr)
        return 2
    except ApiError as exc:
        print(remote.described(exc), file=sys.stderr)
        return 1


def _parser() -> argparse.ArgumentParser:
    settings = get_settings()
    default_url = f"http://{settings.host}:{settings.port}"
    parser = argparse.ArgumentParser(prog="engram", description=__doc__)
    sub = parser.add_subparsers(required=True, metavar="command")

    def command(name: str, run: Any, help_: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_)
        p.set_defaults(run=run)
        p.add_argument("--url", default=default_url, help="engram API base URL (default %(default)s)")
        p.add_argument("--api-key", default=None, help="bearer key when the server requires one")
        return p

    p = command("serve", _serve, "start the embedded stack and serve the HTTP API")
    p.add_argument("--port", type=int, default=settings.port)
    p.add_argument("--host", default=settings.host)
    p.add_argument("--no-sample", action="store_true", help="do not load the sample world `demo`")

    p = command("ingest", remote.ingest, "send the events of a JSON file to a world")
    p.add_argument("file", type=Path, help='{"events": [...]} (or {"world_id", "events"}) or a JSON list of events')
    p.add_argument("--world", required=True)
    p.add_argument("--batch", type=int, default=100)
    p.add_argument("--wait", action="store_true", help="answer once each batch's enrichment has finished, so a "
                                                       "question asked next reads it")
    p.add_argument("--wait-timeout", type=float, default=None, help="with --wait: the longest wait per batch, in "
                                                                    "seconds (server default 10, at most 25)")

    p = command("ask", remote.ask, "ask a question; prints the answer, its sources and the loop trace")
    p.add_argument("question")
    p.add_argument("--world", required=True)
    p.add_argument("--user", required=True)
    p.add_argument("--conversation", default=None)
    p.add_argument("--max-info-requests", type=int, default=None)
    p.add_argument("--json", action="store_true", help="print the API's JSON response")

    p = command("search", remote.search, "fused three-brain search")
    p.add_argument("query")
    p.add_argument("--world", required=True)
    p.add_argument("--user", default=None)
    p.add_argument("--limit", type=int, default=10)
    p.add_argument("--json", action="store_true")

    command("mcp", _mcp, "serve engram's memory to an agent as MCP tools over stdio (needs a running engram)")

    p = command("enrich", remote.enrich, "start enrichment again for a world's stalled events")
    p.add_argument("--world", required=True)
    p.add_argument("--pending", action="store_true", required=True,
                   help="events still pending after the grace period (their enrichment start was lost)")
    p.add_argument("--failed", action="store_true", help="also events whose enrichment failed")

    p = command("consolidate", remote.consolidate, "run consolidation now")
    p.add_argument("--world", required=True)
    p.add_argument("--wait", action="store_true", help="wait for the run to finish and print what it did")
    p.add_argument("--wait-timeout", type=float, default=600.0, help="with --wait: the longest wait, in seconds "
                                                                     "(default %(default)s)")

    p = command("export", remote.export, "export a world's memory (or one user's) to a JSON Lines file")
    p.add_argument("--world", required=True)
    p.add_argument("--user", default=None, help="only this user's memory (and the entities it refers to)")
    p.add_argument("--out", type=Path, required=True, help="the document to write (docs/export-format.md)")
    p.add_argument("--no-vectors", action="store_true", help="leave the vectors out (the importer recomputes them)")
    p.add_argument("--page-bytes", type=int, default=None, help="the size of each page fetched (default: the API's)")

    p = command("import", remote.import_document, "import an export document into a world (rows it already holds are skipped)")
    p.add_argument("file", type=Path)
    p.add_argument("--world", required=True, help="the world to import into (the document's own is ignored)")
    p.add_argument("--part-bytes", type=int, default=3_500_000,
                   help="the size of each part sent (default %(default)s; the API takes up to 4 MB)")

    p = sub.add_parser("reindex", help="rebuild the keyword index from the database, in this process (with the "
                                       "settings of `engram serve`: ENGRAM_DATA_DIR, DATABASE_URL, OPENSEARCH_URL...)")
    p.set_defaults(run=_reindex)
    p.add_argument("--world", default=None, help="only this world (default: every world)")

    bench = sub.add_parser("bench", help="benchmarks, in process on an embedded stack (no server needed)")
    benches = bench.add_subparsers(required=True, metavar="bench")
    p = benches.add_parser("retrieval", help="fused search on LoCoMo next to plain BM25 and plain dense retrieval")
    p.set_defaults(run=_bench_retrieval)
    p.add_argument("--dataset", type=Path, required=True, help="a LoCoMo file (locomo10.json format)")
    p.add_argument("--out", type=Path, required=True, help="directory for retrieval.json and its PNG plots")
    p.add_argument("--cache", type=Path, default=settings.data_dir / "bench",
                   help="keep ingested worlds here and reuse them while the data and ingest code are unchanged "
                        "(default %(default)s)")
    p.add_argument("--no-cache", action="store_true", help="ingest into a temporary directory, kept nowhere")
    p.add_argument("--held-out", default="conv-42,conv-43",
                   help="conversations reported apart as never tuned on (default %(default)s)")
    p = benches.add_parser("train-ranker", help="train the learned ranker on LoCoMo, cross-validated by conversation "
                                                "(needs the dev extra: lightgbm)")
    p.set_defaults(run=_bench_train_ranker)
    p.add_argument("--dataset", type=Path, required=True, help="a LoCoMo file (locomo10.json format)")
    p.add_argument("--out", type=Path, required=True, help="directory for ranker.json (the cross-validated figures)")
    p.add_argument("--model", type=Path, default=None,
                   help="where the model goes (default: the package's engram/retrieval/ranker.json)")
    p.add_argument("--cache", type=Path, default=settings.data_dir / "bench",
                   help="ingested worlds, shared with `bench retrieval` (default %(default)s)")
    p.add_argument("--no-cache", action="store_true", help="ingest into a temporary directory, kept nowhere")
    p.add_argument("--held-out", default="conv-42,conv-43",
                   help="conversations the shipped model never sees, as `bench retrieval` reports them apart "
                        "(default %(default)s; empty: train on all)")
    p.add_argument("--seeds", type=_integers, default=(7, 1, 2),
                   help="LightGBM seeds the cross-validation is repeated with, to show how far its figure moves with "
                        "the draw alone, comma-separated (default 7,1,2; empty: none)")
    p = benches.add_parser("relations", help="DialogRE relations extracted by the offline model, next to the regex "
                                             "extractor")
    p.set_defaults(run=_bench_relations)
    p.add_argument("--dataset", type=Path, required=True, help="a DialogRE file (dev.json format)")
    p.add_argument("--out", type=Path, required=True, help="directory for relations.json")
    p = benches.add_parser("qa", help="LoCoMo question answering: engram's answers next to the best BM25 turn")
    p.set_defaults(run=_bench_qa)
    p.add_argument("--dataset", type=Path, required=True, help="a LoCoMo file (locomo10.json format)")
    p.add_argument("--out", type=Path, required=True, help="directory for qa.json and qa-answers.json")
    p.add_argument("--cache", type=Path, default=settings.data_dir / "bench",
                   help="keep ingested worlds here, shared with `bench retrieval` (default %(default)s)")
    p.add_argument("--no-cache", action="store_true", help="ingest into a temporary directory, kept nowhere")
    p.add_argument("--limit-conversations", type=int, default=None, help="only the first N conversations")
    p = benches.add_parser("latency", help="fused search latency at N memories in one world, next to a bare top-k")
    p.set_defaults(run=_bench_latency)
    p.add_argument("--memories", type=int, default=100_000, help="events in the world (default %(default)s)")
    p.add_argument("--queries", type=int, default=200, help="timed queries per system (default %(default)s)")
    p.add_argument("--out", type=Path, required=True, help="directory for latency.json and latency.png")
    p.add_argument("--data-dir", type=Path, default=None,
                   help="keep the built world here and reuse it on the next run (default: a temporary directory)")
    p.add_argument("--dataset", type=Path, default=None,
                   help="a LoCoMo file: its turns are the world's sentences and its questions the queries")
    p.add_argument("--same-top-10-as", type=Path, default=None, metavar="LATENCY_JSON",
                   help="fail when a query's fused top 10 differs from this earlier run's over the same world")
    remote.memory_commands(sub, default_url)
    return parser


def _serve(args: argparse.Namespace) -> int:
    import warnings

    from engram.config import Settings
    from engram.local.server import serve
    from engram.local.stack import LocalStack

    # Metrics are off locally, and Powertools says so on every call; platformdirs warns about a server's
    # missing XDG_RUNTIME_DIR. Neither is news to someone running the local stack.
    warnings.filterwarnings("ignore", message="No application metrics to publish")
    warnings.filterwarnings("ignore", message="XDG_RUNTIME_DIR is not set")
    settings = Settings(port=args.port, host=args.host)
    busy = _port_taken(args.host, args.port)
    if busy:
        print(f"engram: cannot listen on {args.host}:{args.port} ({busy}); choose another port with --port or "
              "ENGRAM_PORT", file=sys.stderr)
        return 2
    print(f"engram: starting the embedded stack (data in {settings.data_dir.resolve()})", flush=True)
    with LocalStack(settings) as stack:
        if stack.resumed and stack.resumed.events:
            print(f"engram: {stack.resumed.events} events left unenriched by an earlier run: enrichment restarted",
                  flush=True)
        if not args.no_sample:
            loaded = stack.load_sample()
            if loaded is not None:
                print(f"engram: sample world `{loaded.world_id}`: {loaded.accepted} new events, "
                      f"{loaded.duplicates} already stored", flush=True)
        print(f"engram: serving http://{args.host}:{args.port} (docs at /v1/docs); Ctrl-C stops", flush=True)
        serve(args.host, args.port)
    print("engram: stopped", flush=True)
    return 0


def _port_taken(host: str, port: int) -> str | None:
    """Why `host:port` cannot be listened on (checked before the stack starts, PostgreSQL included), or None."""
    import socket

    try:
        family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds: TIME_WAIT is no obstacle
            probe.bind((host, port))
    except OSError as exc:
        return exc.strerror or str(exc)
    return None


def _mcp(args: argparse.Namespace) -> int:
    from engram.local.mcp_server import run_stdio

    run_stdio(args.url, args.api_key)
    return 0


def _reindex(args: argparse.Namespace) -> int:
    from engram.app.factory import build_embedder, build_index, build_store
    from engram.memory.reindex import rebuild_index

    settings = get_settings()
    store = build_store(settings, build_embedder(settings).dim)
    try:
        written = rebuild_index(store, build_index(settings, store), args.world)
    finally:
        store.close()
    for world, documents in written.items():
        print(f"{world}: {documents} documents")
    print(f"engram: {len(written)} worlds reindexed, {sum(written.values())} documents", flush=True)
    return 0


def _quiet() -> None:
    import warnings

    warnings.filterwarnings("ignore", message="XDG_RUNTIME_DIR is not set")


def _bench_retrieval(args: argparse.Namespace) -> int:
    from engram.bench.progress import ConsoleProgress
    from engram.bench.retrieval import run, table

    _quiet()
    held_out = tuple(c.strip() for c in args.held_out.split(",") if c.strip())
    outcome = run(args.dataset, args.out, cache_dir=None if args.no_cache else args.cache, held_out=held_out,
                  progress=ConsoleProgress(prefix="engram: "))
    print(table(outcome.document))
    print(f"(written to {', '.join(str(p) for p in [args.out / 'retrieval.json', *outcome.plots])})")
    return 0


def _integers(text: str) -> tuple[int, ...]:
    """A comma-separated list of integers (an argument's type: a bad one is argparse's usage error)."""
    try:
        return tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a comma-separated list of integers: {text!r}") from None


def _bench_train_ranker(args: argparse.Namespace) -> int:
    from engram.bench.progress import ConsoleProgress
    from engram.bench.ranker import run, table

    _quiet()
    held_out = tuple(c.strip() for c in args.held_out.split(",") if c.strip())
    report = run(args.dataset, args.out, cache_dir=None if args.no_cache else args.cache, model_path=args.model,
                 held_out=held_out, seeds=args.seeds, progress=ConsoleProgress(prefix="engram: "))
    print(table(report))
    print(f"(model written to {report['model_path']}; figures to {args.out / 'ranker.json'})")
    return 0


def _bench_relations(args: argparse.Namespace) -> int:
    from engram.bench.relations import run, table

    document = run(args.dataset, args.out)
    print(table(document))
    print(f"(written to {args.out / 'relations.json'})")
    return 0


def _bench_qa(args: argparse.Namespace) -> int:
    from engram.app.factory import build_llm
    from engram.bench.progress import ConsoleProgress
    from engram.bench.qa import run, table
    from engram.config import get_settings

    _quiet()
    settings = get_settings()
    llm = None if settings.resolved_llm() == "offline" else build_llm(settings)  # the configured model answers
    outcome = run(args.dataset, args.out, cache_dir=None if args.no_cache else args.cache,
                  limit_conversations=args.limit_conversations, llm=llm, progress=ConsoleProgress(prefix="engram: "))
    print(table(outcome.document))
    print(f"(written to {args.out / 'qa.json'})")
    return 0


def _bench_latency(args: argparse.Namespace) -> int:
    from engram.bench.latency import WorldMismatch, changed_top_10, locomo_texts_and_queries, run, run_in
    from engram.bench.progress import ConsoleProgress

    _quiet()
    progress = ConsoleProgress(prefix="engram: ")
    texts, queries = locomo_texts_and_queries(args.dataset, args.queries) if args.dataset else (None, None)
    if args.data_dir is None:
        result = run(args.memories, texts=texts, queries=queries, progress=progress, timed=args.queries)
    else:
        args.data_dir.mkdir(parents=True, exist_ok=True)
        try:
            result = run_in(args.data_dir, args.memories, texts=texts, queries=queries, progress=progress,
                            timed=args.queries)
        except WorldMismatch as exc:
            print(f"engram: {exc}", file=sys.stderr)
            return 2
    written = result.write(args.out)
    print(f"fused search   p50 {result.fused_ms['p50']:8.2f} ms   p95 {result.fused_ms['p95']:8.2f} ms")
    for group, ms in result.by_question.items():
        print(f"  {group} ({int(ms['queries'])}): p50 {ms['p50']:.2f} ms, p95 {ms['p95']:.2f} ms")
    print(f"bare top-k     p50 {result.bare_ms['p50']:8.2f} ms   p95 {result.bare_ms['p95']:8.2f} ms")
    print(f"(written to {', '.join(str(p) for p in written)})")
    if args.same_top_10_as is not None:
        changed = changed_top_10(args.same_top_10_as, result)
        print(f"top 10 of {len(result.top_10)} queries against {args.same_top_10_as}: "
              + (f"{len(changed)} differ, e.g. {changed[0]!r}" if changed else "all the same"))
        return 1 if changed else 0
    return 0


if __name__ == "__main__":
    raise SystemExit(main())


# ---------------------------------------------------------------- engram memory correct|delete (issue 22)
