"""The schema migrations custom resource's handler, against the embedded PostgreSQL server: what a
deploy does to the database, and the OpenSearch role mapping it sends in prod."""

from __future__ import annotations

import os
from typing import Any

import psycopg
import pytest

from engram.adapters.postgres.migrations import migration_files
from engram.config import Settings
from infra.schema.handler import INDEX_PATTERN, PHYSICAL_ID, SEARCH_ROLE, on_event

pytestmark = pytest.mark.infra


class RecordingTransport:
    def __init__(self) -> None:
        self.requests: list[tuple[str, str, Any]] = []

    def perform_request(self, method: str, url: str, *, body: Any = None) -> Any:
        self.requests.append((method, url, body))
        return {"status": "OK"}


@pytest.fixture
def settings(pg_server: object) -> Settings:
    from engram.adapters.postgres.embedded import ensure_database

    url = ensure_database(pg_server, f"schema_{os.getpid()}")
    return Settings(database_url=url, embedding_dim=384)  # type: ignore[call-arg]


def test_a_create_applies_every_migration_and_a_later_update_applies_none(settings: Settings) -> None:
    created = on_event({"RequestType": "Create", "ResourceProperties": {}}, None, settings=settings)
    assert created["PhysicalResourceId"] == PHYSICAL_ID
    assert created["Data"]["Applied"].split(",") == [name for _, name, _ in migration_files()]
    assert settings.database_url is not None
    with psycopg.connect(settings.database_url) as conn:
        extensions = {row[0] for row in conn.execute("SELECT extname FROM pg_extension")}
    assert {"vector", "pg_trgm"} <= extensions
    updated = on_event({"RequestType": "Update", "PhysicalResourceId": PHYSICAL_ID, "ResourceProperties": {}},
                       None, settings=settings)
    assert updated == {"PhysicalResourceId": PHYSICAL_ID, "Data": {"Applied": "none"}}


def test_a_delete_keeps_the_data_and_touches_nothing() -> None:
    assert on_event({"RequestType": "Delete", "PhysicalResourceId": PHYSICAL_ID}, None) == {
        "PhysicalResourceId": PHYSICAL_ID}


def test_in_prod_the_functions_roles_are_mapped_to_a_role_that_reaches_only_engrams_indexes(
        settings: Settings) -> None:
    search = RecordingTransport()
    roles = ["arn:aws:iam::123456789012:role/query", "arn:aws:iam::123456789012:role/api"]
    on_event({"RequestType": "Update", "ResourceProperties": {"SearchRoleArns": roles}}, None,
             settings=settings, search=search)
    (method, role_url, role), (_, mapping_url, mapping) = search.requests
    assert method == "PUT" and role_url.endswith(f"/roles/{SEARCH_ROLE}") and mapping_url.endswith(f"/rolesmapping/{SEARCH_ROLE}")
    assert [p["index_patterns"] for p in role["index_permissions"]] == [[INDEX_PATTERN]]
    assert mapping == {"backend_roles": sorted(roles)}
