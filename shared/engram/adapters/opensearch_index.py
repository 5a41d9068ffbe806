"""The keyword brain on AWS: Amazon OpenSearch through opensearch-py (one index, world-filtered)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from urllib.parse import urlparse

from opensearchpy import OpenSearch, RequestsHttpConnection, helpers
from opensearchpy.exceptions import ConnectionError as OSConnectionError
from opensearchpy.exceptions import ConnectionTimeout, RequestError, TransportError

from engram.errors import TransientStoreError
from engram.model.search import DocKind, IndexDocument, KeywordHit
from engram.rules.keyword_query import bm25_idf, has_syntax, negations_as_minus, plain_terms

_MAPPINGS = {
    "properties": {
        "world_id": {"type": "keyword"},
        "doc_id": {"type": "keyword"},
        "kind": {"type": "keyword"},
        "user_id": {"type": "keyword"},
        "conversation": {"type": "keyword"},
        "speaker": {"type": "text"},
        "text": {"type": "text", "analyzer": "english"},
        "entity_ids": {"type": "keyword"},
        "occurred_at": {"type": "date"},
        "importance": {"type": "float"},
    }
}


_FIELDS = ("text", "speaker")  # what a bare word searches


class OpenSearchIndex:
    """KeywordIndex port over OpenSearch. Documents are keyed `world_id:doc_id`; every search is a bool
    query whose filter pins the world, so nothing in the user's query string can widen it."""

    def __init__(self, url: str, *, index_prefix: str = "engram", client: OpenSearch | None = None) -> None:
        self.index = f"{index_prefix}-memory"
        self.client = client or _client(url)
        self._ready = False

    def _ensure(self) -> None:
        if self._ready:
            return
        try:
            if not self.client.indices.exists(index=self.index):
                self.client.indices.create(index=self.index, body={"mappings": _MAPPINGS})
        except RequestError as exc:
            if "resource_already_exists" not in str(exc):
                raise TransientStoreError(f"OpenSearch refused the index: {exc}") from exc
        except (OSConnectionError, ConnectionTimeout, TransportError) as exc:
            raise TransientStoreError(f"OpenSearch unavailable: {exc}") from exc
        self._ready = True

    def upsert(self, docs: Sequence[IndexDocument]) -> None:
        if not docs:
            return
        self._ensure()
        actions = [{
            "_op_type": "index", "_index": self.index, "_id": f"{d.world_id}:{d.doc_id}",
            "_source": {"world_id": d.world_id, "doc_id": d.doc_id, "kind": d.kind, "user_id": d.user_id or "",
                        "conversation": d.conversation_id or "", "speaker": d.speaker or "", "text": d.text,
                        "entity_ids": d.entity_ids, "importance": d.importance,
                        "occurred_at": d.occurred_at.isoformat() if d.occurred_at else None},
        } for d in docs]
        self._bulk(actions)

    def delete(self, world_id: str, doc_ids: Sequence[str]) -> None:
        if not doc_ids:
            return
        self._ensure()
        self._bulk([{"_op_type": "delete", "_index": self.index, "_id": f"{world_id}:{d}"} for d in doc_ids])

    def delete_world_user(self, world_id: str, user_id: str) -> int:
        self._ensure()
        query = {"bool": {"filter": [{"term": {"world_id": world_id}}, {"term": {"user_id": user_id}}]}}
        try:
            result = self.client.delete_by_query(index=self.index, body={"query": query}, refresh=True)
        except (OSConnectionError, ConnectionTimeout, TransportError) as exc:
            raise TransientStoreError(f"OpenSearch unavailable: {exc}") from exc
        return int(result.get("deleted", 0))

    def search(self, world_id: str, query: str, *, user_id: str | None = None,
               kinds: Sequence[DocKind] | None = None, limit: int = 10) -> list[KeywordHit]:
        self._ensure()
        filters: list[dict[str, Any]] = [{"term": {"world_id": world_id}}]
        if user_id is not None:
            filters.append({"terms": {"user_id": [user_id, ""]}})
        if kinds:
            filters.append({"terms": {"kind": list(kinds)}})
        try:
            words = plain_terms(query).split() if query.strip() and not has_syntax(query) else []
            if words:
                return self._run(self._world_weighted(words, filters), filters, limit)
            return self._search(query, filters, limit)
        except RequestError:  # malformed syntax: search its plain words instead
            terms = plain_terms(query)
            return self._search(terms, filters, limit) if terms else []
        except (OSConnectionError, ConnectionTimeout, TransportError) as exc:
            raise TransientStoreError(f"OpenSearch unavailable: {exc}") from exc

    def _search(self, query: str, filters: list[dict[str, Any]], limit: int) -> list[KeywordHit]:
        if not query.strip():
            return []
        return self._run({"query_string": {"query": negations_as_minus(query), "fields": list(_FIELDS),
                                           "default_operator": "OR"}}, filters, limit)

    def _world_weighted(self, words: list[str], filters: list[dict[str, Any]]) -> dict[str, Any]:
        """Plain words, any of which may match, each weighted by its rarity in the searched world rather than
        in the whole index (BM25's idf from the world's document frequencies, as the tantivy adapter does):
        one request counts every word in the world and everywhere, through filters aggregations."""
        clauses = {f"{i}:{field}": {"match": {field: word}} for i, word in enumerate(dict.fromkeys(words))
                   for field in _FIELDS}
        counts = self.client.search(index=self.index, body={
            "size": 0, "track_total_hits": True, "query": {"bool": {"filter": filters}},
            "aggs": {"here": {"filters": {"filters": clauses}},
                     "all": {"global": {}, "aggs": {"there": {"filters": {"filters": clauses}}}}}})
        in_world = int(counts["hits"]["total"]["value"])
        total = max(int(counts["aggregations"]["all"]["doc_count"]), 1)
        here = counts["aggregations"]["here"]["buckets"]
        there = counts["aggregations"]["all"]["there"]["buckets"]
        should = []
        for name, clause in clauses.items():
            n_here, n_there = int(here[name]["doc_count"]), int(there[name]["doc_count"])
            if n_here and n_there:
                boost = bm25_idf(in_world, n_here) / bm25_idf(total, n_there)
                field, word = next(iter(clause["match"].items()))
                should.append({"match": {field: {"query": word, "boost": round(boost, 6)}}})
        return {"bool": {"should": should, "minimum_should_match": 1}} if should else {"match_none": {}}

    def _run(self, query: dict[str, Any], filters: list[dict[str, Any]], limit: int) -> list[KeywordHit]:
        body = {
            "size": limit,
            "query": {"bool": {"must": [query], "filter": filters}},
            "highlight": {"fields": {"text": {}}, "pre_tags": ["<b>"], "post_tags": ["</b>"]},
        }
        result = self.client.search(index=self.index, body=body)
        return [KeywordHit(doc_id=h["_source"]["doc_id"], kind=h["_source"]["kind"], score=float(h["_score"] or 0),
                           highlights=h.get("highlight", {}).get("text", []))
                for h in result["hits"]["hits"]]

    def _bulk(self, actions: list[dict[str, Any]]) -> None:
        try:
            helpers.bulk(self.client, actions, refresh="wait_for", raise_on_error=False)
        except (OSConnectionError, ConnectionTimeout, TransportError) as exc:
            raise TransientStoreError(f"OpenSearch unavailable: {exc}") from exc

    def ping(self) -> None:
        if not self.client.ping():
            raise TransientStoreError("OpenSearch does not answer")


def _client(url: str) -> OpenSearch:
    parsed = urlparse(url)
    kwargs: dict[str, Any] = {"hosts": [url], "timeout": 10, "max_retries": 2, "retry_on_timeout": True}
    if parsed.hostname and parsed.hostname.endswith(".amazonaws.com"):
        import boto3
        from opensearchpy import AWSV4SignerAuth

        region = parsed.hostname.split(".")[-4] if parsed.hostname.count(".") >= 4 else None
        credentials = boto3.Session().get_credentials()
        kwargs.update(http_auth=AWSV4SignerAuth(credentials, region or "us-east-1", "es"),
                      use_ssl=True, verify_certs=True, connection_class=RequestsHttpConnection)
    return OpenSearch(**kwargs)
