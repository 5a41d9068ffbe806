"""The export document's rules, without a database: what parses, what is refused, how a document is split."""

from __future__ import annotations

import json

import pytest

from engram.errors import InvalidInput
from engram.memory.portability import (
    InvalidExport,
    UnsupportedExport,
    decode_vector,
    document_parts,
    encode_vector,
    parse_document,
)

HEADER = {"format": "engram-export", "version": 1, "schema_version": 5, "world_id": "w", "user_id": None,
          "exported_at": "2026-01-01T00:00:00Z", "embedder": {"name": "hash", "dim": 3}}
T = "2026-01-01T00:00:00Z"


def _event(i: int, **extra: object) -> dict:
    return {"type": "event", "data": {"event_id": f"e{i}", "user_id": "u", "conversation_id": "c", "role": "user",
                                      "content": f"hello {i}", "content_type": "userinput", "occurred_at": T,
                                      "received_at": T, "importance": 0.5, **extra}}


def _document(records: list[dict], **header: object) -> list[str]:
    counts: dict[str, int] = {}
    for r in records:
        counts[r["type"]] = counts.get(r["type"], 0) + 1
    return [json.dumps({**HEADER, "counts": counts, **header}), *map(json.dumps, records)]


def test_a_valid_document_parses_with_its_vectors_decoded() -> None:
    vector = encode_vector([0.5, -1.0, 0.25])
    document = parse_document(_document([_event(1, embedding=vector), _event(2)]), schema_version=5)
    assert document.records == 2
    assert document.rows["event"][0]["embedding"] == [0.5, -1.0, 0.25]
    assert document.rows["event"][1]["embedding"] is None


def test_a_vector_survives_base64_float32_exactly() -> None:
    values = [0.1, 0.2, 0.3]
    assert decode_vector(encode_vector(values) or "", 3) == pytest.approx(values, abs=1e-7)


@pytest.mark.parametrize("header", [{"version": 2}, {"format": "other"}, {"schema_version": 6}])
def test_another_version_format_or_a_newer_schema_is_unsupported(header: dict) -> None:
    with pytest.raises(UnsupportedExport):
        parse_document(_document([_event(1)], **header), schema_version=5)


def test_every_bad_record_is_reported_with_its_line() -> None:
    lines = _document([_event(1), _event(2, importance=3), _event(3, embedding=encode_vector([1.0]))])
    with pytest.raises(InvalidExport) as raised:
        parse_document(lines, schema_version=5)
    assert [e["line"] for e in raised.value.details] == [3, 4]


def test_counts_that_do_not_add_up_are_a_truncated_document() -> None:
    lines = _document([_event(1), _event(2)])
    with pytest.raises(InvalidExport, match="truncated"):
        parse_document(lines[:-1], schema_version=5)


def test_a_document_splits_into_parts_that_are_documents_in_order() -> None:
    lines = _document([_event(i) for i in range(50)])
    parts = list(document_parts(lines, max_bytes=2_000))
    assert len(parts) > 3 and all(sum(len(x) + 1 for x in p[1:]) <= 2_000 for p in parts)
    ids = [r["event_id"] for p in parts for r in parse_document(p, schema_version=5).rows["event"]]
    assert ids == [f"e{i}" for i in range(50)]


def test_a_cursor_not_made_by_an_export_is_refused() -> None:
    from engram.memory.portability import _decode_cursor

    with pytest.raises(InvalidInput):
        _decode_cursor("bm9wZQ")


# A document written before migration 0025 names methods, alias sources and conflicts as engram did then.
def _mention(kind: str, method: str) -> dict:
    return {"type": "mention", "data": {"event_id": "e1", "mention": "x", "kind": kind, "span_start": 0,
                                        "span_end": 1, "method": method, "confidence": 0.0, "created_at": T}}


@pytest.mark.parametrize(("kind", "written", "read"), [
    ("pronoun", "coreference", "llm_coreference"),
    ("name", "domain", "domain_db"),
    ("name", "unresolved", "not_found"),
    ("pronoun", "unresolved", "no_candidates"),
    ("description", "unresolved", "no_candidates"),
    ("name", "exact", "exact"),
    ("name", "created", "created"),
    ("name", "not_found", "not_found"),  # a document written since: as is
])
def test_an_older_documents_resolution_methods_are_read_in_the_documents_names(kind: str, written: str,
                                                                              read: str) -> None:
    [row] = parse_document(_document([_mention(kind, written)]), schema_version=5).rows["mention"]
    assert row["method"] == read


@pytest.mark.parametrize(("written", "read"), [("domain", "domain_db"), ("coreference", "coreference"),
                                               ("fuzzy", "fuzzy"), ("created", "created")])
def test_an_older_documents_alias_sources_are_read_in_the_documents_names(written: str, read: str) -> None:
    alias = {"type": "alias", "data": {"entity_id": "ent_1", "alias": "Acme", "normalized_alias": "acme",
                                       "confidence": 0.85, "source": written, "created_at": T}}
    [row] = parse_document(_document([alias]), schema_version=5).rows["alias"]
    assert row["source"] == read


@pytest.mark.parametrize(("written", "read"), [
    ({"kind": "same_predicate", "strategy": "recency_gap"}, ("memory_vs_memory", "trust_recent")),
    ({"kind": "same_predicate", "strategy": "trust_domain_database"}, ("memory_vs_db", "trust_db")),
    ({"strategy": "trust_domain_database"}, ("memory_vs_db", "trust_db")),  # before kinds were exported
    ({"kind": "same_predicate", "strategy": "confidence_gap"}, ("memory_vs_memory", "confidence_gap")),
    ({"kind": "cross_predicate", "strategy": "ask_user"}, ("semantic_conflict", "ask_user")),
    ({"kind": "same_predicate", "strategy": None}, ("memory_vs_memory", None)),
    ({"kind": "memory_vs_db", "strategy": "trust_db"}, ("memory_vs_db", "trust_db")),
])
def test_an_older_documents_conflict_kinds_and_strategies_are_read_in_the_documents_names(
        written: dict, read: tuple[str, str | None]) -> None:
    conflict = {"type": "conflict", "data": {"conflict_id": "cfl_1", "memory_id": "sem_1",
                                             "conflicting_memory_id": "sem_2", "created_at": T, **written}}
    [row] = parse_document(_document([conflict]), schema_version=5).rows["conflict"]
    assert (row["kind"], row["strategy"]) == read


@pytest.mark.parametrize("record", [
    _mention("name", "guessed"),
    {"type": "alias", "data": {"entity_id": "ent_1", "alias": "Acme", "normalized_alias": "acme",
                               "confidence": 0.85, "source": "guessed", "created_at": T}},
    {"type": "conflict", "data": {"conflict_id": "cfl_1", "memory_id": "sem_1", "conflicting_memory_id": "sem_2",
                                  "created_at": T, "strategy": "coin_toss"}},
])
def test_a_name_engram_would_not_read_back_is_refused_with_its_line(record: dict) -> None:
    with pytest.raises(InvalidExport) as raised:
        parse_document(_document([record]), schema_version=5)
    assert [e["line"] for e in raised.value.details] == [2]
