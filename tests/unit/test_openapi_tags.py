"""The Swagger page groups the API by tag: every operation of the OpenAPI document has one."""

from __future__ import annotations

import json

from engram.http.app import build_resolver
from engram.http.routes import api_router, ingest_router

METHODS = {"get", "put", "post", "patch", "delete"}


def test_every_operation_of_the_openapi_document_has_a_tag() -> None:
    spec = json.loads(build_resolver(ingest_router, api_router).get_openapi_json_schema(title="t", version="0"))
    operations = {(method, path): op for path, item in spec["paths"].items() for method, op in item.items()
                  if method in METHODS}
    assert len(operations) > 30
    untagged = sorted(f"{m.upper()} {p}" for (m, p), op in operations.items() if not op.get("tags"))
    assert untagged == []
    by_tag = {tag for op in operations.values() for tag in op["tags"]}
    assert {"events", "queries", "search", "entities", "memories", "conflicts", "signals", "insights", "config",
            "export/import", "ops"} <= by_tag
    assert operations[("post", "/v1/worlds/{world}/queries")]["tags"] == ["queries"]


def test_the_openapi_document_names_resolutions_and_conflicts_as_seed_004_does() -> None:
    spec = json.loads(build_resolver(ingest_router, api_router).get_openapi_json_schema(title="t", version="0"))
    schemas = spec["components"]["schemas"]
    method = set(schemas["RecordedMention"]["properties"]["method"]["enum"])
    kind = set(schemas["ConflictDetail"]["properties"]["kind"]["enum"])
    [strategy] = [set(s["enum"]) for s in schemas["ConflictDetail"]["properties"]["strategy"]["anyOf"] if "enum" in s]
    assert {"exact", "alias", "fuzzy", "llm_coreference", "domain_db", "no_candidates", "not_found"} <= method
    assert kind == {"memory_vs_memory", "memory_vs_db", "semantic_conflict"}
    assert {"trust_recent", "trust_db", "ask_user"} <= strategy
    assert not (method | kind | strategy) & {"coreference", "domain", "unresolved", "same_predicate",
                                             "cross_predicate", "trust_domain_database", "recency_gap"}
