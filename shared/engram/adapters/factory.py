"""Builds each adapter from settings: the embedded default when a part's URL is unset."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from engram.config import Settings

if TYPE_CHECKING:
    from engram.adapters.postgres.store import PostgresStore
    from engram.ports import LLM, Embedder, KeywordIndex, Workflows


def database_url(settings: Settings, embedding_dim: int) -> str:
    """DATABASE_URL, else the Secrets Manager secret (AWS), else the embedded server, migrated."""
    if settings.database_url:
        return settings.database_url
    if settings.database_secret_arn:
        return _url_from_secret(settings.database_secret_arn, settings.database_host)
    from engram.adapters.postgres.migrations import apply_migrations
    from engram.local.database import ensure_database, start_embedded_postgres

    url = ensure_database(start_embedded_postgres(settings.data_dir), "engram")
    apply_migrations(url, embedding_dim)
    return url


def _url_from_secret(secret_arn: str, host: str | None) -> str:
    import boto3
    from psycopg.conninfo import make_conninfo

    secret = json.loads(boto3.client("secretsmanager").get_secret_value(SecretId=secret_arn)["SecretString"])
    return make_conninfo(
        host=host or secret["host"], port=secret.get("port", 5432), user=secret["username"],
        password=secret["password"], dbname=secret.get("dbname", "engram"), sslmode="require",
    )


def build_store(settings: Settings, embedding_dim: int) -> PostgresStore:
    from engram.adapters.postgres.store import PostgresStore

    return PostgresStore(database_url(settings, embedding_dim))


def build_index(settings: Settings) -> KeywordIndex:
    if settings.opensearch_url:
        from engram.adapters.opensearch_index import OpenSearchIndex

        return OpenSearchIndex(settings.opensearch_url, index_prefix=settings.opensearch_index_prefix)
    from engram.adapters.tantivy_index import TantivyIndex

    return TantivyIndex(settings.data_dir / "index")


def build_embedder(settings: Settings) -> Embedder:
    from engram.adapters.embedders import build_embedder as build

    return build(settings)


def build_llm(settings: Settings) -> LLM:
    from engram.adapters.anthropic_llm import build_llm as build

    return build(settings)


def build_workflows(settings: Settings) -> Workflows:
    """Step Functions by ARN (each function is given only the ARNs it starts). The local runtime
    replaces this with its moto-backed workflows."""
    from engram.adapters.stepfunctions import StepFunctionsWorkflows

    return StepFunctionsWorkflows.from_settings(settings)
