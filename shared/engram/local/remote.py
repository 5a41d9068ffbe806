"""The commands of `engram` that talk to a running engram over its HTTP API (the local server or AWS) through the
SDK client: ingest, ask, search, enrich, consolidate, export, import and memory edits; and how an API error reads
on the terminal."""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from datetime import datetime
from typing import Any

from engram.model.queries import QueryConfig
from engram.sdk.client import ApiError, EngramClient, ValidTime


def described(exc: ApiError) -> str:
    """The API's error as a user reads it: status, code and message, then each field error as `loc: msg`."""
    lines = [f"engram: {f'{exc.status} ' if exc.status else ''}{exc.code}: {exc.message}"]
    details = exc.details
    errors = details.get("errors") if isinstance(details, dict) else details
    if isinstance(errors, list):
        for err in errors:
            if isinstance(err, dict) and "msg" in err:
                loc = ".".join(str(part) for part in err.get("loc", ()))
                lines.append(f"  {loc or '(request)'}: {err['msg']}")
            else:
                lines.append(f"  {err}")
    elif details:
        lines.append(f"  {json.dumps(details, default=str)}")
    return "\n".join(lines)


def _client(args: argparse.Namespace) -> EngramClient:
    return EngramClient(args.url, token=args.api_key)


def ingest(args: argparse.Namespace) -> int:
    from rich.progress import Progress

    doc = json.loads(args.file.read_text(encoding="utf-8"))
    events = doc if isinstance(doc, list) else doc["events"]
    accepted = duplicates = 0
    statuses: Counter[str] = Counter()
    with _client(args) as client, Progress() as progress:
        task = progress.add_task(f"ingesting into {args.world}", total=len(events))
        for start in range(0, len(events), args.batch):
            batch = events[start:start + args.batch]
            body = client.add_events(args.world, batch, wait=args.wait, wait_timeout_s=args.wait_timeout or None)
            accepted += body.accepted
            duplicates += body.duplicates
            statuses.update(str(e.enrichment_status) for e in body.events)
            progress.advance(task, len(batch))
    print(f"{accepted} events accepted, {duplicates} duplicates")
    if args.wait:
        print("enrichment: " + ", ".join(f"{statuses[s]} {s}" for s in ("enriched", "failed", "enriching", "pending")
                                         if statuses[s]))
    return 0


def ask(args: argparse.Namespace) -> int:
    config = QueryConfig(max_info_requests=args.max_info_requests) if args.max_info_requests is not None else None
    with _client(args) as client:
        body = client.ask(args.world, args.user, args.question, conversation_id=args.conversation or None,
                          config=config).model_dump(mode="json")
    if args.json:
        print(json.dumps(body, indent=2))
        return 0
    answer = body.get("answer") or {}
    print(answer.get("content", "(no answer)"))
    print(f"\nconfidence: {answer.get('confidence', 0):.2f}   model: {body.get('model')}   "
          f"iterations: {body.get('iterations')}   info requests: {body.get('info_requests_used')}")
    sources = answer.get("sources") or []
    print("\nsources:" if sources else "\nsources: none (nothing in memory supports an answer)")
    for s in sources:
        print(f"  [{s['kind']}] {s['id']}: {s.get('excerpt', '')[:100]}")
    print("\ntrace:")
    for step in body.get("trace", []):
        print(f"  {step['iteration']:>2} {step['step']:<7} {step['outcome']:<18} {step.get('elapsed_ms', 0):8.1f} ms")
    return 0


def enrich(args: argparse.Namespace) -> int:
    with _client(args) as client:
        body = client.enrich_pending(args.world, include_failed=args.failed).model_dump(mode="json")
    print(f"{body['events']} stalled events, {len(body['enrichment_ids'])} enrichments started"
          + (f", {body['not_started']} could not be started (still pending)" if body["not_started"] else ""))
    return 0


def search(args: argparse.Namespace) -> int:
    with _client(args) as client:
        body = client.search(args.world, args.query, user_id=args.user or None, limit=args.limit).model_dump(mode="json")
    if args.json:
        print(json.dumps(body, indent=2))
        return 0
    print(f"{body.get('interpretation', '')} ({body.get('search_time_ms', 0):.1f} ms, "
          f"{body.get('total_matches', 0)} matches)")
    for i, hit in enumerate(body.get("hits", []), 1):
        print(f"{i:>2}. [{hit['kind']}] {hit['doc_id']} {hit['score']:.3f} {hit['text'][:100]}")
        if hit.get("explanation"):
            print(f"      {hit['explanation']}")
    suggestions = body.get("serendipity") or []
    if suggestions:
        print("see also: " + ", ".join(f"{s['name']} ({s['reason']})" for s in suggestions))
    return 0


def consolidate(args: argparse.Namespace) -> int:
    import time

    with _client(args) as client:
        execution_id = client.start_consolidation(args.world)
        if not args.wait:
            print(json.dumps({"world_id": args.world, "execution_id": execution_id}, indent=2))
            return 0
        deadline = time.monotonic() + args.wait_timeout
        while (run := client.consolidation(args.world, execution_id)).status == "running":
            if time.monotonic() > deadline:
                print(f"engram: consolidation {execution_id} still running after {args.wait_timeout:g} s",
                      file=sys.stderr)
                return 1
            time.sleep(0.5)
    if run.status == "failed" or run.totals is None:
        print(f"engram: consolidation {execution_id} failed: {run.error}", file=sys.stderr)
        return 1
    totals = run.totals.model_dump()
    print(f"consolidation {totals['run_id']} of {args.world}: {totals['scopes']} scopes, {totals['summaries']} "
          f"summarized, {totals['confirmed']} facts confirmed, {totals['procedures']} procedures, "
          f"{totals['conflicts_settled']} conflicts settled, {totals['archived']} archived, {totals['failed']} "
          f"failed, {totals['model_calls']} model calls")
    return 0


def export(args: argparse.Namespace) -> int:
    """Fetch the pages one after the other, records to a temporary file, then the document: the first page's
    header with every page's counts added up, and the records."""
    import tempfile

    from rich.progress import Progress, SpinnerColumn, TextColumn

    from engram.memory.portability import document_lines

    cursor: str | None = None
    header: dict[str, Any] | None = None
    counts: dict[str, int] = {}
    with _client(args) as client, tempfile.TemporaryFile("w+", encoding="utf-8") as records, Progress(
            SpinnerColumn(), TextColumn("{task.description}"), TextColumn("{task.completed} records")) as progress:
        task = progress.add_task(f"exporting {args.world}" + (f" (user {args.user})" if args.user else ""))
        while True:
            page_text = client.export_page(args.world, user_id=args.user or None, vectors=not args.no_vectors,
                                           max_bytes=args.page_bytes or None, cursor=cursor)
            lines = document_lines(page_text.text)
            page = json.loads(lines[0])
            header = header or page
            for kind, n in page["counts"].items():
                counts[kind] = counts.get(kind, 0) + n
            records.writelines(f"{line}\n" for line in lines[1:])
            progress.advance(task, len(lines) - 1)
            cursor = page_text.next_cursor
            if not cursor:
                break
        assert header is not None
        header["counts"] = counts
        records.seek(0)
        with args.out.open("w", encoding="utf-8") as out:
            out.write(json.dumps(header, separators=(",", ":")) + "\n")
            for line in records:
                out.write(line)
    print(f"{sum(counts.values())} records written to {args.out}: "
          + ", ".join(f"{n} {kind}" for kind, n in counts.items()))
    return 0


def import_document(args: argparse.Namespace) -> int:
    """Validate the whole document here first (the server validates again), then send it in parts small
    enough for one request each, in order; each part is atomic, and importing again is harmless."""
    from rich.progress import Progress

    from engram.errors import InvalidInput
    from engram.memory.portability import document_lines, document_parts, parse_document

    lines = document_lines(args.file.read_text(encoding="utf-8"))
    try:
        document = parse_document(lines, schema_version=2**31 - 1)  # the server knows its own schema
    except InvalidInput as exc:
        raise ApiError(0, exc.code, exc.message, exc.details) from exc
    inserted: dict[str, int] = {}
    skipped: dict[str, int] = {}
    with _client(args) as client, Progress() as progress:
        task = progress.add_task(f"importing into {args.world}", total=document.records)
        for part in document_parts(lines, args.part_bytes):
            body = client.import_document(args.world, "\n".join(part))
            for total, got in ((inserted, body.inserted), (skipped, body.skipped)):
                for kind, n in got.items():
                    total[kind] = total.get(kind, 0) + n
            progress.advance(task, body.records)
    print(f"{sum(inserted.values())} records imported, {sum(skipped.values())} already there"
          + (": " + ", ".join(f"{n} {kind}" for kind, n in inserted.items()) if inserted else ""))
    return 0


def memory_commands(sub: Any, default_url: str) -> None:
    """`engram memory correct|delete`: the user's correction or deletion of a fact, audited by the server."""
    memory = sub.add_parser("memory", help="correct or delete a fact (a semantic memory, sem_...)")
    edits = memory.add_subparsers(required=True, metavar="action")
    for name, run, help_ in (("correct", _memory_correct, "change a fact's value, confidence or valid time"),
                             ("delete", _memory_delete, "delete a fact (an audit row keeps what it was)")):
        p = edits.add_parser(name, help=help_)
        p.set_defaults(run=run)
        p.add_argument("memory_id")
        p.add_argument("--world", required=True)
        p.add_argument("--note", default=None, help="why, kept in the audit row")
        p.add_argument("--url", default=default_url, help="engram API base URL (default %(default)s)")
        p.add_argument("--api-key", default=None, help="bearer key when the server requires one")
        p.add_argument("--json", action="store_true", help="print the API's JSON response")
        if name == "correct":
            p.add_argument("--value", default=None, help="the fact's new object value")
            p.add_argument("--confidence", type=float, default=None, help="0..1 (capped at the world's maximum)")
            p.add_argument("--valid-from", type=_valid_time, default=None, help="ISO 8601; 'none' clears it")
            p.add_argument("--valid-to", type=_valid_time, default=None, help="ISO 8601; 'none' clears it")


def _valid_time(value: str) -> datetime | str:
    """An ISO 8601 time, or 'none' (clear it); anything else is a usage error, not a traceback."""
    if value.lower() == "none":
        return "none"
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an ISO 8601 time (or 'none'): {value!r}") from None


def _memory_correct(args: argparse.Namespace) -> int:
    clear: list[ValidTime] = ["valid_from"] if args.valid_from == "none" else []
    clear += ["valid_to"] if args.valid_to == "none" else []
    with _client(args) as client:
        fact = client.correct_memory(
            args.world, args.memory_id, object_value=args.value, confidence=args.confidence, note=args.note,
            valid_from=_given(args.valid_from), valid_to=_given(args.valid_to), clear=clear).model_dump(mode="json")
    if args.json:
        print(json.dumps(fact, indent=2))
        return 0
    print(f"{fact['memory_id']}: {fact['predicate']} = {fact['object_value']} (confidence {fact['confidence']:.2f}, "
          f"valid {fact.get('valid_from') or '-'} .. {fact.get('valid_to') or '-'})")
    return 0


def _given(value: datetime | str | None) -> datetime | None:
    return value if isinstance(value, datetime) else None


def _memory_delete(args: argparse.Namespace) -> int:
    with _client(args) as client:
        body = client.delete_memory(args.world, args.memory_id, note=args.note or None).model_dump(mode="json")
    if args.json:
        print(json.dumps(body, indent=2))
        return 0
    print(f"{body['memory_id']} deleted (audit {body['audit_id']}, {body['relationships_removed']} relationships, "
          f"{body['conflicts_removed']} conflicts removed)")
    return 0

