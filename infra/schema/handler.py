"""The deploy-time schema step: a CloudFormation custom resource (behind a CDK Provider) that applies
engram's SQL migrations to Aurora on every deploy that changes them, and in `prod` maps the functions'
IAM roles to an index-scoped role in OpenSearch's fine-grained access control (this function's role is
the domain's master user). Not one of the six engram functions: the local runtime never routes to it.

It runs in the VPC with the engram layer, reads the credentials from the cluster's secret, and connects
to the writer directly (DDL and advisory locks do not belong behind RDS Proxy).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any, Protocol

from engram.adapters.postgres.migrations import apply_migrations
from engram.app.factory import database_url
from engram.config import Settings, get_settings
from engram.observability import logger

PHYSICAL_ID = "engram-schema"
SEARCH_ROLE = "engram_functions"
INDEX_PATTERN = "engram-*"
SEARCH_ROLE_BODY = {
    "cluster_permissions": ["cluster_composite_ops", "cluster_monitor"],
    "index_permissions": [{"index_patterns": [INDEX_PATTERN],
                           "allowed_actions": ["crud", "create_index", "indices:admin/mapping/put", "indices_monitor"]}],
}


class SearchTransport(Protocol):
    def perform_request(self, method: str, url: str, *, body: Any = None) -> Any: ...


def on_event(event: dict[str, Any], context: Any, *, settings: Settings | None = None,
             search: SearchTransport | None = None) -> dict[str, Any]:
    """Create and Update apply pending migrations (and map the search roles); Delete keeps the data."""
    request = event["RequestType"]
    if request == "Delete":  # the database outlives the stack (snapshot on removal): nothing to undo
        return {"PhysicalResourceId": event.get("PhysicalResourceId", PHYSICAL_ID)}
    settings = settings or get_settings()
    applied = apply_migrations(database_url(settings, settings.embedding_dim), settings.embedding_dim)
    logger.info("migrations applied", extra={"applied": applied, "request": request})
    roles = event.get("ResourceProperties", {}).get("SearchRoleArns") or []
    if roles:
        if search is None:
            if not settings.opensearch_url:
                raise ValueError("SearchRoleArns given without OPENSEARCH_URL")
            search = _signed_transport(settings.opensearch_url)
        map_search_roles(search, roles)
    return {"PhysicalResourceId": PHYSICAL_ID, "Data": {"Applied": ",".join(applied) or "none"}}


def map_search_roles(search: SearchTransport, role_arns: Sequence[str]) -> None:
    """The functions' roles may read and write engram's indexes, and nothing else in the domain."""
    search.perform_request("PUT", f"/_plugins/_security/api/roles/{SEARCH_ROLE}", body=SEARCH_ROLE_BODY)
    search.perform_request("PUT", f"/_plugins/_security/api/rolesmapping/{SEARCH_ROLE}",
                           body={"backend_roles": sorted(role_arns)})


def _signed_transport(url: str) -> SearchTransport:
    import boto3
    from opensearchpy import AWSV4SignerAuth, OpenSearch, RequestsHttpConnection

    region = os.environ.get("AWS_REGION", "us-east-1")
    client = OpenSearch(hosts=[url], http_auth=AWSV4SignerAuth(boto3.Session().get_credentials(), region, "es"),
                        use_ssl=True, verify_certs=True, connection_class=RequestsHttpConnection, timeout=30)
    transport: SearchTransport = client.transport
    return transport
