"""Portability: a world's (or one user's) memory as a versioned JSON Lines document, and back.

The document is a header line, then one line per stored row, `{"type": <kind>, "data": {...}}`, in the
order of RECORD_KINDS (what a row refers to comes before it). The format is documented in
docs/export-format.md. Export reads in pages (an API Gateway/Lambda response is capped at 6 MB); each
page is itself a complete document and `next_cursor` says where the next one starts. Import validates the
whole document before it writes anything, then writes every row in one transaction, skipping rows whose
key the world already holds (importing twice changes nothing); vectors and the keyword index follow.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections import Counter, defaultdict
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np
from pydantic import BaseModel, TypeAdapter, ValidationError, create_model

from engram.config import DomainTables
from engram.errors import InvalidInput
from engram.model import jsonvalues
from engram.model.common import Identifier, utcnow
from engram.model.events import EventIn
from engram.model.jsonvalues import storable
from engram.model.overrides import WorldConfig
from engram.model.portability import (
    FORMAT,
    FORMAT_VERSION,
    KINDS,
    RECORD_KINDS,
    EmbedderInfo,
    ExportHeader,
    ImportResult,
    RecordKind,
)
from engram.model.queries import QueryRequest
from engram.observability import logger
from engram.ports.clients import Clients

MAX_ERRORS = 20  # validation errors reported per rejected document
# An export page: a Lambda response is capped at 6 MB, and the body travels JSON-escaped inside it.
MAX_EXPORT_PAGE_BYTES = 4_000_000
MAX_IMPORT_PART_BYTES = 3_500_000  # a part of a document sent as one import request (the API takes 4 MB)


class InvalidExport(InvalidInput):
    """A record (or the header) does not validate; nothing was written."""

    code = "invalid_export"


class UnsupportedExport(InvalidInput):
    """Another format, a format version this engram does not read, or a newer schema; nothing was written."""

    code = "unsupported_export"


@dataclass
class ExportPage:
    """Lines of one complete document (header first) and where the next page starts (None: the last)."""

    lines: list[str]
    next_cursor: str | None
    counts: dict[str, int]

    @property
    def text(self) -> str:
        return "".join(f"{line}\n" for line in self.lines)


# ---------------------------------------------------------------- export
def export_page(clients: Clients, world_id: str, user_id: str | None = None, *, vectors: bool = True,
                cursor: str | None = None, max_bytes: int | None = None) -> ExportPage:
    """A world's rows (a user's only, with `user_id`) from `cursor` on, as one document of at most about
    `max_bytes` (None: everything). Rows are read from one snapshot per page, in key order per kind."""
    kinds = [k for k in RECORD_KINDS if user_id is None or k.per_user]
    start = _decode_cursor(cursor)
    records: list[str] = []
    counts: Counter[str] = Counter()
    size, last, next_cursor = 0, None, None
    rows = clients.store.export_rows(world_id, user_id, kinds, start, vectors=vectors)
    try:
        for kind, row in rows:
            line = record_line(kind, row)
            if max_bytes is not None and records and size + len(line) + 1 > max_bytes:
                assert last is not None
                next_cursor = _encode_cursor(last[0], [last[1][c] for c in last[0].key])
                break
            records.append(line)
            size += len(line) + 1
            counts[kind.name] += 1
            last = (kind, row)
    finally:
        rows.close()
    header = ExportHeader(
        format=FORMAT, version=FORMAT_VERSION, schema_version=clients.store.schema_version(), world_id=world_id,
        user_id=user_id, exported_at=utcnow(),
        embedder=EmbedderInfo(name=clients.embedder.name, dim=clients.embedder.dim) if vectors else None,
        counts={k.name: counts[k.name] for k in kinds if counts[k.name]})
    return ExportPage([header.model_dump_json(), *records], next_cursor, dict(header.counts))


def record_line(kind: RecordKind, row: dict[str, Any]) -> str:
    """One record as its line: the row validated by its kind's model, vectors as base64 float32."""
    data = dict(row)
    for column in kind.vectors:
        if column in data:
            data[column] = encode_vector(data[column])
    record = kind.model.model_validate(data)
    return json.dumps({"type": kind.name, "data": record.model_dump(mode="json", exclude_none=True)},
                      separators=(",", ":"), ensure_ascii=False)


def encode_vector(vector: Sequence[float] | None) -> str | None:
    return None if vector is None else base64.b64encode(np.asarray(vector, dtype="<f4").tobytes()).decode()


def decode_vector(text: str, dim: int) -> list[float]:
    raw = base64.b64decode(text, validate=True)
    if len(raw) != dim * 4:
        raise ValueError(f"a vector of {len(raw) // 4} values where the header's embedder makes {dim}")
    return np.frombuffer(raw, dtype="<f4").tolist()  # type: ignore[no-any-return]


def merge_pages(pages: Iterable[ExportPage]) -> Iterable[str]:
    """The lines of one document made of consecutive pages: the first header with the pages' summed counts."""
    pages = list(pages)
    if not pages:
        return []
    header = json.loads(pages[0].lines[0])
    total: Counter[str] = Counter()
    for page in pages:
        total.update(page.counts)
    header["counts"] = {k.name: total[k.name] for k in RECORD_KINDS if total[k.name]}
    return [json.dumps(header, separators=(",", ":")), *(line for page in pages for line in page.lines[1:])]


def document_parts(lines: Sequence[str], max_bytes: int = MAX_IMPORT_PART_BYTES) -> Iterable[list[str]]:
    """A document as consecutive documents of at most about `max_bytes` each (a record is never split), for
    imports over HTTP: each part has the header with its own counts, and the records keep their order."""
    header = json.loads(lines[0])
    part: list[str] = []
    counts: Counter[str] = Counter()
    size = 0

    def emit() -> list[str]:
        return [json.dumps({**header, "counts": dict(counts)}, separators=(",", ":")), *part]

    for line in lines[1:]:
        if not line.strip():
            continue
        if part and size + len(line.encode()) + 1 > max_bytes:
            yield emit()
            part, counts, size = [], Counter(), 0
        part.append(line)
        counts[json.loads(line)["type"]] += 1
        size += len(line.encode()) + 1
    if part or not counts:
        yield emit()


def _encode_cursor(kind: RecordKind, key: list[Any]) -> str:
    return base64.urlsafe_b64encode(json.dumps([kind.name, key], default=str).encode()).decode().rstrip("=")


def _decode_cursor(cursor: str | None) -> tuple[RecordKind, list[Any]] | None:
    if not cursor:
        return None
    try:
        name, key = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        kind = KINDS[name]
        if not isinstance(key, list) or len(key) != len(kind.key):
            raise ValueError("key length")
        _key_model(kind.name).model_validate(dict(zip(kind.key, key, strict=True)), strict=True)  # typed as its row's
        if not all(storable(value) for value in key if isinstance(value, str)):
            raise ValueError("unstorable text")
    except (ValueError, KeyError, TypeError, binascii.Error) as exc:  # a ValidationError is a ValueError
        raise InvalidInput("the cursor is not one an export page gave", {"cursor": cursor}) from exc
    return kind, key


@cache
def _key_model(kind: str) -> type[BaseModel]:
    """A model of a kind's key: the key's fields of its record model, constraints included."""
    fields = KINDS[kind].model.model_fields
    return create_model(f"{kind}_key", **{c: (fields[c].annotation, fields[c]) for c in KINDS[kind].key})  # type: ignore[call-overload]


# ---------------------------------------------------------------- import
@dataclass
class ExportDocument:
    """A parsed and fully validated document: its header and its rows by kind (in RECORD_KINDS order)."""

    header: ExportHeader
    rows: dict[str, list[dict[str, Any]]]

    @property
    def records(self) -> int:
        return sum(len(r) for r in self.rows.values())


def parse_document(lines: Iterable[str | bytes], *, schema_version: int) -> ExportDocument:
    """Validate a whole document, header and every record, before anything is written: another format or
    version, or a schema newer than this database's, raises UnsupportedExport; a bad line, a vector of the
    wrong size, or counts that disagree with the records (a truncated file) raise InvalidExport."""
    iterator = iter(lines)
    first = next(iterator, None)
    if first is None or not first.strip():
        raise InvalidExport("the document is empty: its first line must be the header")
    try:
        raw = jsonvalues.loads(first)
    except json.JSONDecodeError as exc:
        raise InvalidExport(f"line 1 is not JSON: {exc.msg}", [{"line": 1}]) from exc
    except RecursionError as exc:
        raise InvalidExport("line 1 is nested too deeply", [{"line": 1}]) from exc
    if not isinstance(raw, dict) or raw.get("format") != FORMAT:
        raise UnsupportedExport(f"not an {FORMAT} document: its first line must be the header "
                                f'{{"format": "{FORMAT}", "version": {FORMAT_VERSION}, ...}}')
    if raw.get("version") != FORMAT_VERSION:
        raise UnsupportedExport(f"export format version {raw.get('version')!r} is not supported: this engram reads "
                                f"version {FORMAT_VERSION}", {"version": raw.get("version"),
                                                              "supported": [FORMAT_VERSION]})
    try:
        header = ExportHeader.model_validate(raw)
    except ValidationError as exc:
        raise InvalidExport("the header does not validate", _errors(1, "header", exc)) from exc
    if header.schema_version > schema_version:
        raise UnsupportedExport(
            f"the document was exported from schema version {header.schema_version}, newer than this database's "
            f"{schema_version}: upgrade engram first", {"schema_version": header.schema_version,
                                                         "supported_up_to": schema_version})
    rows: dict[str, list[dict[str, Any]]] = defaultdict(list)
    errors: list[dict[str, Any]] = []
    dim = header.embedder.dim if header.embedder else None
    for number, line in enumerate(iterator, start=2):
        if len(errors) >= MAX_ERRORS:
            break
        if not line.strip():
            continue
        try:
            item = jsonvalues.loads(line)
        except json.JSONDecodeError as exc:
            errors.append({"line": number, "type": None, "errors": [{"msg": f"not JSON: {exc.msg}"}]})
            continue
        except RecursionError:
            errors.append({"line": number, "type": None, "errors": [{"msg": "nested too deeply"}]})
            continue
        kind = KINDS.get(str(item.get("type"))) if isinstance(item, dict) else None
        if kind is None or set(item) != {"type", "data"}:
            errors.append({"line": number, "type": item.get("type") if isinstance(item, dict) else None,
                           "errors": [{"msg": 'a record is {"type": <kind>, "data": {...}}; kinds: '
                                              + ", ".join(KINDS)}]})
            continue
        # JSON columns hold values as free-form as an event's metadata: the same limits (the record is one deeper)
        found = jsonvalues.problem(item["data"], [], max_depth=jsonvalues.JSON_MAX_DEPTH + 1)
        if found is not None:
            errors.append({"line": number, "type": kind.name, "errors": [found]})
            continue
        try:
            record = kind.model.model_validate(item["data"]).model_dump(mode="json")
            refused = admission_errors(kind, record)
            if refused:
                errors.append({"line": number, "type": kind.name, "errors": refused[:5]})
                continue
            for column in kind.vectors:
                if record.get(column) is not None:
                    if dim is None:
                        raise ValueError(f"{column}: the header names no embedder, so records carry no vectors")
                    record[column] = decode_vector(record[column], dim)
        except ValidationError as exc:
            errors.extend(_errors(number, kind.name, exc))
            continue
        except (ValueError, binascii.Error) as exc:
            errors.append({"line": number, "type": kind.name, "errors": [{"msg": str(exc)}]})
            continue
        rows[kind.name].append(record)
    if errors:
        raise InvalidExport(f"the document has invalid records (the first {len(errors)} listed); nothing was written",
                            errors)
    found = {name: len(r) for name, r in rows.items()}
    if found != {k: n for k, n in header.counts.items() if n}:
        raise InvalidExport("the records do not add up to the header's counts (a truncated document?)",
                            {"header": header.counts, "records": found})
    return ExportDocument(header, {k.name: rows[k.name] for k in RECORD_KINDS if rows.get(k.name)})


def admission_errors(kind: RecordKind, record: dict[str, Any]) -> list[dict[str, Any]]:
    """What keeps a well-formed record out of a world, by the rules its own route applies (the same
    validators): its ids as the API takes them (else its user could never be read or erased), an event as
    ingest takes it, a question as the query route does, a config row as the config routes do."""
    errors: list[dict[str, Any]] = []
    for column in kind.ids:
        value = record.get(column)
        if value == "" and kind.model.model_fields[column].default == "":  # '' is the field's "none" (a global alias)
            continue
        for loc, item in ([([column, i], v) for i, v in enumerate(value)] if isinstance(value, list)
                          else [([column], value)]):
            if item is not None:
                errors += _refusals(_IDENTIFIER, item, loc)
    if kind.name == "event":
        errors += _refusals(EventIn, {f: record[f] for f in EventIn.model_fields if f in record})
    elif kind.name == "query":
        errors += _refusals(QueryRequest, {f: record[f] for f in ("user_id", "question", "conversation_id", "config")})
    elif kind.name == "config":
        errors += _refusals(WorldConfig, {record["key"]: record["value"]})
    return errors


_IDENTIFIER: TypeAdapter[str] = TypeAdapter(Identifier)


def _refusals(validator: type[BaseModel] | TypeAdapter[Any], value: Any, loc: list[Any] | None = None
              ) -> list[dict[str, Any]]:
    try:
        if isinstance(validator, TypeAdapter):
            validator.validate_python(value)
        else:
            validator.model_validate(value)
    except ValidationError as exc:
        return [{"loc": [*(loc or []), *e["loc"]], "msg": e["msg"], "type": e["type"]} for e in exc.errors()]
    return []


def document_lines(text: str) -> list[str]:
    """A document's lines: split at line feeds only. A string in a record may hold any other line or paragraph
    separator (U+2028, U+2029, U+0085, a form feed...), which `str.splitlines` would split it at."""
    lines = text.split("\n")
    return lines[:-1] if lines and not lines[-1] else lines  # the last line's own line feed ends no line


def _errors(line: int, kind: str, exc: ValidationError) -> list[dict[str, Any]]:
    return [{"line": line, "type": kind,
             "errors": [{"loc": list(e["loc"]), "msg": e["msg"], "type": e["type"]} for e in exc.errors()][:5]}]


def import_document(clients: Clients, world_id: str, lines: Iterable[str | bytes]) -> ImportResult:
    """Restore a document into `world_id` (the document's own world is only where it came from). Rows whose
    key the world holds are skipped, so importing twice changes nothing. Every row is written in one
    transaction; then vectors missing for what was inserted are computed and the keyword index catches up
    through the outbox the transaction wrote (both derived, both safe to redo by importing again)."""
    document = parse_document(lines, schema_version=clients.store.schema_version())
    refuse_unallowed_domain_sources(document.rows.get("ontology", []), clients.settings.domain_tables)
    header = document.header
    same_embedder = header.embedder is not None and (header.embedder.name, header.embedder.dim) == (
        clients.embedder.name, clients.embedder.dim)
    rows = {name: [_restored(KINDS[name], r, keep_vectors=same_embedder) for r in kind_rows]
            for name, kind_rows in document.rows.items()}
    inserted, outbox_ids = clients.store.import_rows(world_id, [(KINDS[name], kind_rows)
                                                                for name, kind_rows in rows.items()])
    computed = embed_missing(clients, world_id, {name: ids for name, ids in inserted.items() if KINDS[name].vectors})
    # The index step embeds the entities it indexes; those that came with their vector keep it.
    embedded = {r["entity_id"] for r in rows.get("entity", ()) if r.get("embedding") is not None}
    indexed = index_imported(clients, world_id, inserted, outbox_ids, embedded=embedded)
    counts = {name: len(ids) for name, ids in inserted.items()}
    result = ImportResult(
        world_id=world_id, source_world_id=header.world_id, records=document.records,
        inserted={k: n for k, n in counts.items() if n},
        skipped={name: len(r) - counts.get(name, 0) for name, r in rows.items() if len(r) > counts.get(name, 0)},
        vectors="imported" if same_embedder else ("recomputed" if computed else "none"),
        vectors_computed=computed, index_documents=indexed)
    logger.info("export imported", extra={"world_id": world_id, "source_world_id": header.world_id,
                                           "inserted": result.inserted, "skipped": result.skipped})
    return result


def refuse_unallowed_domain_sources(rows: Iterable[dict[str, Any]], allowed: DomainTables) -> None:
    """A world's ontology points the resolve step at domain tables: only at those the operator allows. A row
    naming another table or column is refused, naming it, before anything is written."""
    refused = sorted({f"{r['source_table']}({r['key_column']}, {r['name_column']})" for r in rows
                      if any(r.get(c) is not None for c in ("source_table", "key_column", "name_column"))
                      and allowed.table_for(r.get("source_table"), r.get("key_column"), r.get("name_column")) is None})
    if refused:
        raise InvalidExport(f"ontology rows name domain tables or columns that ENGRAM_DOMAIN_TABLES does not allow: "
                            f"{'; '.join(refused)}; nothing was written", [{"type": "ontology", "source": r}
                                                                           for r in refused])


def index_imported(clients: Clients, world_id: str, inserted: dict[str, list[Any]], outbox_ids: Sequence[int], *,
                   embedded: Collection[str] = (), batch: int = 500) -> int:
    """The keyword index's documents of the rows an import inserted, and the vectors of their entities that
    came without one; then the import's outbox entries are done. Only what the import wrote: other pending
    entries of the world are the enrichment's to apply. A failure here leaves the entries pending."""
    refs = [(kind.doc_kind, key) for name, keys in inserted.items() if (kind := KINDS[name]).doc_kind for key in keys]
    for start in range(0, len(refs), batch):
        documents = clients.store.documents(world_id, refs[start:start + batch])  # type: ignore[arg-type]
        clients.index.upsert(documents)
        # An entity's vector is of its document (name, aliases, description), as the index step makes it.
        entities = [d for d in documents if d.kind == "entity" and d.doc_id not in embedded]
        if entities:
            vectors = clients.embedder.embed([d.text for d in entities])
            clients.store.set_entity_embeddings(world_id, {d.doc_id: v for d, v in zip(entities, vectors, strict=True)})
    clients.store.mark_index_ops_done(outbox_ids)
    return len(refs)


def _restored(kind: RecordKind, row: dict[str, Any], *, keep_vectors: bool) -> dict[str, Any]:
    """A row as the importing world stores it: vectors only from the same embedder; an enrichment in flight
    at export time belongs to the source's executions, so it is imported pending (the sweep restarts it)."""
    if not keep_vectors:
        row = {c: v for c, v in row.items() if c not in kind.vectors}
    if kind.name == "event" and row["enrichment_status"] == "enriching":
        row = {**row, "enrichment_status": "pending", "enrichment_id": None}
    return row


def embed_missing(clients: Clients, world_id: str, ids_by_kind: dict[str, list[str]], *, batch: int = 256) -> int:
    """Vectors for imported rows that came without one (another embedder, or an export without vectors), made
    as enrichment and consolidation make them. Entities get theirs when the index step reads their document."""
    from engram.enrichment.indexing import embed_events  # one definition of what an event's two vectors read

    done, h = 0, clients.world(world_id).heuristics  # read after the import wrote the world's config
    for name, ids in ids_by_kind.items():
        if name == "entity" or not ids:
            continue
        missing = clients.store.rows_without_vectors(world_id, KINDS[name], ids)
        for start in range(0, len(missing), batch):
            part = missing[start:start + batch]
            if name == "event":
                events = sorted(clients.store.get_events(world_id, list(part)), key=lambda e: e.occurred_at)
                embed_events(clients, world_id, events, h)
            else:
                texts = clients.store.vector_texts(world_id, KINDS[name], part)
                vectors = clients.embedder.embed([texts[i] for i in part])
                clients.store.set_vectors(world_id, KINDS[name], dict(zip(part, vectors, strict=True)))
            done += len(part)
    return done
