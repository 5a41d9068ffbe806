"""Export and import: a world exported and imported into a fresh database answers and searches as it did; a
user's export holds nothing of anyone else; a bad document is refused whole and changes nothing."""

from __future__ import annotations

import base64
import dataclasses
import json
import os
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest

from engram.adapters.postgres.portability import USER_FILTERS
from engram.app.inline import InlineWorkflows
from engram.config import Settings
from engram.memory.portability import export_page, import_document, merge_pages
from engram.model.events import IngestRequest
from engram.model.portability import KINDS, NOT_EXPORTED, RECORD_KINDS
from engram.model.queries import QueryRequest
from engram.ports.clients import Clients
from engram.query.submit import submit_query
from engram.retrieval.search import search
from engram.sdk.client import EngramClient
from tests.asgi import api_client
from tests.builder import consolidate, remember
from tests.conftest import TEST_EMBEDDING_DIM

pytestmark = pytest.mark.integration
WORLD = "port-a"
T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
STATEMENTS = {
    "ana": ["My name is Ana and I live in Seville.", "I work at Olivo Labs. I assume the launch slips to May.",
            "My sister Marta lives in Porto.", "Actually I live in Cordoba now.",
            "Should we move the launch? I prefer tea over coffee."],
    "ben": ["My name is Ben and I live in Seville too.", "I work at Olivo Labs as a designer.",
            "My manager is Ana."],
}
QUESTIONS = {"ana": ["Where do I live?", "Where does Marta live?", "What do I prefer to drink?"],
             "ben": ["Where do I work?", "Who is my manager?"]}
SEARCHES = [("Seville", None), ("Olivo Labs", "ben"), ("Where does Ana live?", "ana"), ("launch May", None),
            ("Marta Porto", "ana"), ("tea", None)]


def _count(clients: Clients, table: str, world: str) -> int:
    with clients.store.tx(world) as cur:  # type: ignore[attr-defined]
        cur.execute(f"SELECT count(*) AS n FROM {table} WHERE world_id = %s", (world,))
        return int(cur.fetchone()["n"])


def _in_process(clients: Clients) -> Clients:
    clients.workflows = InlineWorkflows(clients, background=False)
    return clients


@pytest.fixture(scope="module")
def source(clients: Clients) -> Clients:
    """A world two users talked in, enriched, consolidated and asked about."""
    _in_process(clients)
    for user, lines in STATEMENTS.items():
        batch = IngestRequest.model_validate({"events": [
            {"event_id": f"{user}-{i}", "user_id": user, "conversation_id": f"{user}-c", "role": "user",
             "content": text, "occurred_at": (T0 + timedelta(days=i)).isoformat()}
            for i, text in enumerate(lines)]})
        remember(clients, WORLD, batch)
    consolidate(clients, WORLD)
    for user in STATEMENTS:
        submit_query(clients, WORLD, QueryRequest(user_id=user, question="Where do I work?"))
    return clients


@pytest.fixture(scope="module")
def fresh(pg_server: object, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Clients]:
    """A second embedded stack: its own database (migrated, empty) and its own keyword index."""
    from engram.adapters.embedders import HashEmbedder
    from engram.adapters.offline.llm import OfflineLLM
    from engram.adapters.postgres.embedded import ensure_database
    from engram.adapters.postgres.migrations import apply_migrations
    from engram.adapters.postgres.store import PostgresStore
    from engram.adapters.tantivy_index import TantivyIndex
    from engram.config import Settings

    url = ensure_database(pg_server, f"fresh_{os.getpid()}")
    apply_migrations(url, TEST_EMBEDDING_DIM)
    store = PostgresStore(url, max_size=2)
    index = TantivyIndex(tmp_path_factory.mktemp("fresh-index"))
    clients = Clients(settings=Settings(), store=store, index=index, embedder=HashEmbedder(TEST_EMBEDDING_DIM),
                      llm=OfflineLLM(), workflows=InlineWorkflows(background=False))
    yield _in_process(clients)
    index.close()
    store.close()


def _records(lines: list[str]) -> list[dict]:
    return [json.loads(line) for line in lines[1:]]


def _hits(clients: Clients, world: str) -> list[list[tuple[str, float, dict[str, int]]]]:
    return [[(h.doc_id, round(h.score, 6), dict(h.ranks))
             for h in search(clients, clients.world(world), q, user_id=user, limit=10).hits] for q, user in SEARCHES]


def _rebuilt_index(clients: Clients, world: str, directory: Path) -> Clients:
    """The clients with a keyword index built afresh from the world's rows. A keyword index counts deleted
    documents in its BM25 statistics until its segments merge, and enrichment and consolidation rewrite
    documents many times: only an index built from the same rows in one pass scores as the import's does."""
    from engram.adapters.tantivy_index import TantivyIndex

    refs: list[tuple[str, str]] = []
    with clients.store.tx(world) as cur:  # type: ignore[attr-defined]
        # In the order the import indexes them (its record order), so that equal BM25 scores tie alike.
        for kind in RECORD_KINDS:
            if kind.doc_kind is not None:
                cur.execute(f"SELECT {kind.key[0]} AS i FROM {kind.table} WHERE world_id = %s ORDER BY 1", (world,))
                refs += [(kind.doc_kind, r["i"]) for r in cur.fetchall()]
    index = TantivyIndex(directory)
    index.upsert(clients.store.documents(world, refs))
    return dataclasses.replace(clients, index=index)


def _answers(clients: Clients, world: str) -> list[tuple[str, list[str]]]:
    answers = []
    for user, questions in QUESTIONS.items():
        for question in questions:
            answer = submit_query(clients, world, QueryRequest(user_id=user, question=question)).answer
            assert answer is not None
            answers.append((answer.content, [s.id for s in answer.sources]))
    return answers


def test_every_world_table_is_exported_or_said_why_not(source: Clients) -> None:
    with source.store.tx(None) as cur:  # type: ignore[attr-defined]
        cur.execute("SELECT table_name FROM information_schema.columns WHERE table_schema = current_schema() "
                    "AND column_name = 'world_id'")
        tables = {r["table_name"] for r in cur.fetchall()}
    assert tables == {k.table for k in RECORD_KINDS} | set(NOT_EXPORTED)
    assert {k.table for k in RECORD_KINDS if k.per_user} == set(USER_FILTERS)


def test_every_column_of_an_exported_table_is_a_field_of_its_record(source: Clients) -> None:
    with source.store.tx(None) as cur:  # type: ignore[attr-defined]
        cur.execute("SELECT table_name, column_name FROM information_schema.columns "
                    "WHERE table_schema = current_schema()")
        columns: dict[str, set[str]] = {}
        for r in cur.fetchall():
            columns.setdefault(r["table_name"], set()).add(r["column_name"])
    for kind in RECORD_KINDS:
        assert columns[kind.table] == {"world_id", *kind.model.model_fields, *kind.generated}, kind.name


def test_a_world_imported_into_a_fresh_database_searches_and_answers_as_the_original(
        source: Clients, fresh: Clients, tmp_path: Path) -> None:
    page = export_page(source, WORLD)
    assert page.next_cursor is None
    header = json.loads(page.lines[0])
    assert header["format"] == "engram-export" and header["world_id"] == WORLD and header["user_id"] is None
    assert header["schema_version"] == source.store.schema_version()
    assert {"event", "entity", "alias", "mention", "semantic", "episodic", "summary", "signal", "query",
            "conflict", "relationship"} <= set(header["counts"])

    result = import_document(fresh, "port-copy", page.lines)

    assert result.source_world_id == WORLD and result.vectors == "imported" and result.skipped == {}
    assert result.inserted == header["counts"]
    for kind in RECORD_KINDS:
        assert _count(fresh, kind.table, "port-copy") == _count(source, kind.table, WORLD), kind.name
    original = _rebuilt_index(source, WORLD, tmp_path / "index")
    assert _hits(fresh, "port-copy") == _hits(original, WORLD)
    assert _answers(fresh, "port-copy") == _answers(original, WORLD)


def test_importing_the_same_document_again_changes_nothing(source: Clients, fresh: Clients) -> None:
    page = export_page(source, WORLD)
    import_document(fresh, "port-twice", page.lines)
    before = {k.table: _count(fresh, k.table, "port-twice") for k in RECORD_KINDS}
    exported_again = export_page(fresh, "port-twice")

    again = import_document(fresh, "port-twice", page.lines)

    assert again.inserted == {} and again.index_documents == 0 and sum(again.skipped.values()) == again.records
    assert {k.table: _count(fresh, k.table, "port-twice") for k in RECORD_KINDS} == before
    assert _records(export_page(fresh, "port-twice").lines) == _records(exported_again.lines)


def test_a_paged_export_holds_the_same_records_as_one_page(source: Clients) -> None:
    whole = export_page(source, WORLD)
    pages = [export_page(source, WORLD, max_bytes=20_000)]
    while pages[-1].next_cursor:
        pages.append(export_page(source, WORLD, cursor=pages[-1].next_cursor, max_bytes=20_000))
    assert len(pages) > 2 and all(len(p.text) <= 20_000 + 2_000 for p in pages[:-1])
    merged = list(merge_pages(pages))
    assert _records(merged) == _records(whole.lines)
    assert json.loads(merged[0])["counts"] == json.loads(whole.lines[0])["counts"]


def test_a_user_export_holds_that_users_rows_and_nothing_of_anyone_else(source: Clients) -> None:
    lines = export_page(source, WORLD, "ana").lines
    assert json.loads(lines[0])["user_id"] == "ana"
    records = _records(lines)
    kinds = {r["type"] for r in records}
    assert {"event", "semantic", "episodic", "signal", "query", "entity"} <= kinds
    assert not kinds & {k.name for k in RECORD_KINDS if not k.per_user}
    assert {r["data"].get("user_id") for r in records} <= {"ana", None}
    text = "\n".join(lines)
    for i in range(len(STATEMENTS["ben"])):
        assert f'"ben-{i}"' not in text  # no event id of Ben's, in any record or array
    assert "designer" not in text and "Ben and I" not in text
    ben_memories = [m.memory_id for m in source.store.user_memories(WORLD, "ben", "semantic", 100)]
    assert ben_memories and not any(m in text for m in ben_memories)


def test_a_user_export_imports_on_its_own(source: Clients, fresh: Clients) -> None:
    lines = export_page(source, WORLD, "ben").lines
    result = import_document(fresh, "port-ben", lines)
    assert result.inserted["event"] == len(STATEMENTS["ben"])
    hits = search(fresh, fresh.world("port-ben"), "Where does Ben work?", user_id="ben").hits
    assert any("Olivo" in h.text for h in hits)


def test_a_document_from_another_embedder_gets_its_vectors_recomputed(source: Clients, fresh: Clients) -> None:
    lines = export_page(source, WORLD).lines
    header = json.loads(lines[0])
    header["embedder"] = {"name": "titan", "dim": 1024}
    records = [json.loads(line) for line in lines[1:]]
    for r in records:  # as another embedder's vectors would be: of its own size
        for column in ("embedding", "context_embedding"):
            if column in r["data"]:
                r["data"][column] = base64.b64encode(bytes(4 * 1024)).decode()

    result = import_document(fresh, "port-titan", [json.dumps(header), *map(json.dumps, records)])

    assert result.vectors == "recomputed" and result.vectors_computed > 0
    with fresh.store.tx("port-titan") as cur:  # type: ignore[attr-defined]
        for table in ("chat_events", "semantic_memories", "episodic_memories", "memory_summaries", "signals"):
            cur.execute(f"SELECT count(*) AS n FROM {table} WHERE world_id = %s AND embedding IS NULL",
                        ("port-titan",))
            assert cur.fetchone()["n"] == 0, table
    assert _hits(fresh, "port-titan")[0]  # searchable


# ---------------------------------------------------------------- over HTTP
@pytest.fixture(scope="module")
def api(source: Clients) -> Iterator[httpx.Client]:
    with api_client(source) as client:
        yield client


def _export(api: httpx.Client, path: str, **params: object) -> httpx.Response:
    response = api.get(path, params=params)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("application/x-ndjson")
    return response


def test_the_export_routes_answer_json_lines_pages(api: httpx.Client) -> None:
    whole = _export(api, f"/v1/worlds/{WORLD}/export")
    lines = whole.text.splitlines()
    assert json.loads(lines[0])["world_id"] == WORLD and "x-engram-next-cursor" not in whole.headers
    first = _export(api, f"/v1/worlds/{WORLD}/export", max_bytes=10_000, vectors="false")
    assert "embedding" not in first.text and json.loads(first.text.splitlines()[0])["embedder"] is None
    second = _export(api, f"/v1/worlds/{WORLD}/export", max_bytes=10_000, vectors="false",
                     cursor=first.headers["x-engram-next-cursor"])
    assert _records(second.text.splitlines())[0] != _records(first.text.splitlines())[0]
    mine = _export(api, f"/v1/worlds/{WORLD}/users/ben/export")
    assert all(r["data"].get("user_id") in ("ben", None) for r in _records(mine.text.splitlines()))
    assert api.get(f"/v1/worlds/{WORLD}/export", params={"cursor": "nonsense"}).status_code == 422


def test_the_import_route_restores_a_document_and_reports_what_it_did(api: httpx.Client, source: Clients) -> None:
    body = _export(api, f"/v1/worlds/{WORLD}/users/ana/export").content
    imported = api.post("/v1/worlds/port-http/import", content=body,
                        headers={"content-type": "application/x-ndjson"})
    assert imported.status_code == 200, imported.text
    assert imported.json()["inserted"]["event"] == len(STATEMENTS["ana"])
    again = api.post("/v1/worlds/port-http/import", content=body).json()
    assert again["inserted"] == {} and again["records"] == imported.json()["records"]
    assert _count(source, "chat_events", "port-http") == len(STATEMENTS["ana"])


def _refused(api: httpx.Client, world: str, body: bytes, status: int, code: str) -> dict:
    response = api.post(f"/v1/worlds/{world}/import", content=body)
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert error["code"] == code
    return error


def test_a_bad_document_is_refused_whole_with_a_clear_error_and_writes_nothing(
        api: httpx.Client, source: Clients) -> None:
    lines = export_page(source, WORLD, "ben").lines
    header = json.loads(lines[0])

    newer = _refused(api, "port-bad", "\n".join([json.dumps({**header, "version": 2}), *lines[1:]]).encode(),
                     422, "unsupported_export")
    assert "version 2" in newer["message"]
    _refused(api, "port-bad", "\n".join([json.dumps({**header, "schema_version": 999}), *lines[1:]]).encode(),
             422, "unsupported_export")
    _refused(api, "port-bad", b'{"events": []}', 422, "unsupported_export")
    _refused(api, "port-bad", b"", 422, "invalid_export")

    broken = [json.loads(line) for line in lines[1:]]
    broken[-1]["data"]["confidence"] = 7  # the last record: every earlier one would have been written
    broken.append({"type": "spaceship", "data": {}})
    error = _refused(api, "port-bad", "\n".join([lines[0], *map(json.dumps, broken)]).encode(),
                     422, "invalid_export")
    assert [e["line"] for e in error["details"]] == [len(lines), len(lines) + 1]

    xml = api.post("/v1/worlds/port-bad/import", content="\n".join(lines).encode(),
                   headers={"content-type": "application/xml"})
    assert xml.status_code == 415 and xml.json()["error"]["code"] == "unsupported_media_type"

    truncated = "\n".join(lines[:-3]).encode()
    assert "truncated" in _refused(api, "port-bad", truncated, 422, "invalid_export")["message"]

    assert all(_count(source, kind.table, "port-bad") == 0 for kind in KINDS.values())


def test_an_ontology_row_naming_a_domain_table_or_column_the_operator_does_not_allow_is_refused_naming_it(
        api: httpx.Client, source: Clients, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(source, "settings", Settings(domain_tables="customers(customer_id, full_name)"))
    header = json.loads(export_page(source, WORLD, "ben").lines[0])

    def document(*rows: dict[str, object]) -> bytes:
        records = [{"type": "ontology", "data": {"kind": "entity_type", **row}} for row in rows]
        return "\n".join(map(json.dumps, [{**header, "counts": {"ontology": len(records)}}, *records])).encode()

    customer = {"concept": "customer", "source_table": "customers", "key_column": "customer_id",
                "name_column": "full_name"}
    for outside, named in [({"concept": "secret", "source_table": "secrets", "key_column": "id",
                             "name_column": "holder"}, "secrets(id, holder)"),
                           ({**customer, "concept": "note", "name_column": "notes"}, "customers(customer_id, notes)")]:
        error = _refused(api, "port-ontology", document(customer, outside), 422, "invalid_export")
        assert named in error["message"] and "ENGRAM_DOMAIN_TABLES" in error["message"]
        assert _count(source, "domain_ontology", "port-ontology") == 0
    allowed = api.post("/v1/worlds/port-ontology/import", content=document(customer, {"concept": "supplier"}))
    assert allowed.status_code == 200 and allowed.json()["inserted"] == {"ontology": 2}
    assert [s.described for s in source.store.domain_sources("port-ontology")] == ["customers(customer_id, full_name)"]


def test_an_oversized_import_is_refused_before_it_is_read(api: httpx.Client) -> None:
    from engram.http.app import MAX_IMPORT_BYTES

    error = _refused(api, "port-big", b"x" * (MAX_IMPORT_BYTES + 1), 413, "payload_too_large")
    assert "engram import" in error["message"]


def test_the_cli_exports_page_by_page_and_imports_in_parts(api: httpx.Client, source: Clients,
                                                          tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    from engram.local import cli, remote

    monkeypatch.setattr(remote, "_client", lambda args: EngramClient(str(api.base_url), transport=api._transport))
    out = tmp_path / "port-a.jsonl"
    assert cli.main(["export", "--world", WORLD, "--out", str(out), "--page-bytes", "10000"]) == 0
    assert _records(out.read_text().splitlines()) == _records(export_page(source, WORLD).lines)

    assert cli.main(["import", str(out), "--world", "port-cli", "--part-bytes", "20000"]) == 0
    assert "records imported" in capsys.readouterr().out
    assert _count(source, "chat_events", "port-cli") == _count(source, "chat_events", WORLD)
    assert cli.main(["import", str(out), "--world", "port-cli"]) == 0
    assert "0 records imported" in capsys.readouterr().out.splitlines()[-1]


# ---------------------------------------------------------------- an import is held to the rules of ingest
def _document(*records: dict) -> bytes:
    """A document of `records` ({"type", "data"}) under a header counting them."""
    counts: dict[str, int] = {}
    for r in records:
        counts[r["type"]] = counts.get(r["type"], 0) + 1
    header = {"format": "engram-export", "version": 1, "schema_version": 1, "world_id": "elsewhere",
              "exported_at": T0.isoformat(), "embedder": None, "counts": counts}
    return "\n".join(json.dumps(line) for line in [header, *records]).encode()


def _event_record(**fields: object) -> dict:
    return {"type": "event", "data": {"event_id": "imp-1", "user_id": "ivy", "conversation_id": "c1", "role": "user",
                                      "content": "I live in Lyon.", "content_type": "userinput",
                                      "occurred_at": T0.isoformat(), "received_at": T0.isoformat(), "importance": 0.4,
                                      **fields}}


BAD_CONFIGS = [("heuristics", {"rrf_k": "many"}), ("heuristics", {"no_such_rule": 1}),
               ("heuristics", {"decay_half_life_days": 0}), ("heuristics", {"search_limit": -1}),
               ("heuristics", {"base_importance": {"userinput": "high"}}), ("tag_categories", {"travel": "flight"}),
               ("colour", "blue")]


@pytest.mark.parametrize("case", range(len(BAD_CONFIGS)))
def test_an_import_whose_config_does_not_validate_is_refused_and_the_world_keeps_working(
        api: httpx.Client, source: Clients, case: int) -> None:
    key, value = BAD_CONFIGS[case]
    world = f"port-config-{case}"
    config = {"type": "config", "data": {"key": key, "value": value, "updated_at": T0.isoformat()}}
    error = _refused(api, world, _document(config, _event_record()), 422, "invalid_export")
    assert [e["line"] for e in error["details"]] == [2], error
    assert _count(source, "system_config", world) == 0 and _count(source, "chat_events", world) == 0
    event = {"user_id": "ivy", "conversation_id": "c1", "role": "user", "content": "I live in Lyon."}
    assert api.post(f"/v1/worlds/{world}/events", json={"events": [event]}).status_code == 202
    assert api.get(f"/v1/worlds/{world}/search", params={"q": "Lyon"}).status_code == 200
    assert api.post(f"/v1/worlds/{world}/queries", json={"user_id": "ivy", "question": "Where?"}).status_code == 200


@pytest.mark.parametrize("bad", ["a/b", "..", "", "x" * 300, "a b", "-leading"])
def test_an_import_refuses_ids_the_api_cannot_address(api: httpx.Client, source: Clients, bad: str) -> None:
    for record in (_event_record(user_id=bad), _event_record(event_id=bad), _event_record(conversation_id=bad)):
        error = _refused(api, "port-ids", _document(record), 422, "invalid_export")
        assert error["details"][0]["line"] == 2
    query = {"type": "query", "data": {"query_id": "qry_1", "user_id": bad, "question": "Where?", "config": {},
                                       "status": "completed", "created_at": T0.isoformat()}}
    _refused(api, "port-ids", _document(query), 422, "invalid_export")
    assert _count(source, "chat_events", "port-ids") == 0 and _count(source, "world_queries", "port-ids") == 0


def test_an_import_refuses_an_event_ingest_would_refuse(api: httpx.Client, source: Clients) -> None:
    deep: dict = {"leaf": 1}
    for _ in range(40):
        deep = {"d": deep}
    for record in (_event_record(metadata=deep), _event_record(content=""), _event_record(content="x" * 32_001),
                   _event_record(content_type="spaceship"), _event_record(metadata={"n": "NUMBER"})):
        body = _document(record).replace(b'"NUMBER"', b"NaN")
        assert _refused(api, "port-rules", body, 422, "invalid_export")["details"][0]["line"] == 2
    assert _count(source, "chat_events", "port-rules") == 0


SEPARATORS = "one\u2028two\u2029three\u0085four\x0bfive\x0csix\x1cseven\x1dend"


def test_an_export_holding_line_and_paragraph_separators_imports_intact(
        api: httpx.Client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from engram.local import cli, remote

    event = {"event_id": "sep-1", "user_id": "ivy", "conversation_id": "c1", "role": "user", "content": SEPARATORS,
             "metadata": {"note": SEPARATORS}}
    assert api.post("/v1/worlds/port-sep/events", json={"events": [event]}).status_code == 202
    body = _export(api, "/v1/worlds/port-sep/export", vectors="false").content
    imported = api.post("/v1/worlds/port-sep-copy/import", content=body, headers={"content-type": "application/x-ndjson"})
    assert imported.status_code == 200, imported.text
    copy = api.get("/v1/worlds/port-sep-copy/events/sep-1").json()
    assert copy["content"] == SEPARATORS and copy["metadata"] == {"note": SEPARATORS}

    monkeypatch.setattr(remote, "_client", lambda args: EngramClient(str(api.base_url), transport=api._transport))
    out = tmp_path / "sep.jsonl"
    assert cli.main(["export", "--world", "port-sep", "--out", str(out), "--no-vectors"]) == 0
    assert cli.main(["import", str(out), "--world", "port-sep-cli"]) == 0
    assert api.get("/v1/worlds/port-sep-cli/events/sep-1").json()["content"] == SEPARATORS


def test_a_dismissed_signal_leaves_and_arrives_dismissed_with_its_vector(source: Clients, fresh: Clients) -> None:
    signal = min((s for c in ("ana-c", "ben-c") for s in source.store.list_signals(WORLD, c)),
                 key=lambda s: s.signal_id)  # the last test of the module: the others read the source undismissed
    at = datetime(2026, 4, 1, tzinfo=UTC)
    source.store.dismiss_signal(WORLD, signal.signal_id, at)
    [record] = [r for r in _records(export_page(source, WORLD).lines)
                if r["type"] == "signal" and r["data"]["signal_id"] == signal.signal_id]
    assert record["data"]["dismissed_at"] is not None and record["data"]["embedding"]

    import_document(fresh, "port-dismissed", export_page(source, WORLD).lines)

    imported = fresh.store.get_signal("port-dismissed", signal.signal_id)
    assert imported is not None and imported.dismissed_at == at
    assert fresh.store.list_signals("port-dismissed", signal.conversation_id, include_dismissed=True)
    with fresh.store.tx("port-dismissed") as cur:  # type: ignore[attr-defined]
        cur.execute("SELECT count(*) AS n FROM signals WHERE world_id = %s AND embedding IS NULL", ("port-dismissed",))
        assert cur.fetchone()["n"] == 0


# What engram wrote before migration 0025 (seed 004's names since): a document of that time, name for name.
_OLD_METHODS = {"llm_coreference": "coreference", "domain_db": "domain", "not_found": "unresolved",
                "no_candidates": "unresolved"}
_OLD_KINDS = {"memory_vs_memory": "same_predicate", "memory_vs_db": "same_predicate",
              "semantic_conflict": "cross_predicate"}
_OLD_STRATEGIES = {"trust_db": "trust_domain_database", "trust_recent": "recency_gap"}


def _written_before_0025(lines: list[str]) -> tuple[list[str], int]:
    """The document as engram wrote it before migration 0025, and how many values that renamed."""
    renamed, out = 0, [lines[0]]
    for line in lines[1:]:
        record = json.loads(line)
        data = record["data"]
        for kind, field, old in [("mention", "method", _OLD_METHODS), ("alias", "source", {"domain_db": "domain"}),
                                 ("conflict", "kind", _OLD_KINDS), ("conflict", "strategy", _OLD_STRATEGIES)]:
            if record["type"] == kind and data.get(field) in old:
                data[field] = old[data[field]]
                renamed += 1
        out.append(json.dumps(record))
    return out, renamed


def test_a_document_written_before_migration_0025_imports_as_the_same_world_in_the_documents_names(
        source: Clients, fresh: Clients) -> None:
    lines = export_page(source, WORLD).lines
    old, renamed = _written_before_0025(lines)
    assert renamed >= 2 and '"same_predicate"' in "\n".join(old) and '"unresolved"' in "\n".join(old)

    import_document(fresh, "port-old-names", old)
    import_document(fresh, "port-new-names", lines)

    again = _records(export_page(fresh, "port-old-names").lines)
    assert again == _records(export_page(fresh, "port-new-names").lines) == _records(lines)
