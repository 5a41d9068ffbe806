"""The keyword brain on AWS: Amazon OpenSearch through opensearch-py, one index per world.

OpenSearch scores BM25 with the statistics of the shard a document lives on: in an index shared by worlds,
another world's documents would move a world's scores (a word common elsewhere weighs less here), and any
query form would tell a world which words others use. A world's own index, found by a hash of its id, holds
its documents only; it is created by the world's first write, and a world without one has nothing to find.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlparse

from opensearchpy import OpenSearch, RequestsHttpConnection, helpers
from opensearchpy.exceptions import ConnectionError as OSConnectionError
from opensearchpy.exceptions import ConnectionTimeout, NotFoundError, RequestError, TransportError

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
# One shard a world: BM25's statistics are then exactly the world's (more shards would each hold a part of it,
# still nothing of another world's), and a small world costs one shard of the domain's budget.
_SETTINGS = {"index": {"number_of_shards": 1}}


def world_index(prefix: str, world_id: str) -> str:
    """A world's index name: a hash, so any world id makes a valid (lowercase, short) name, none shared."""
    return f"{prefix}-w-{hashlib.sha256(world_id.encode()).hexdigest()}"


def _doc_key(kind: str, doc_id: str) -> str:
    """A document's `_id` in its world's index: an event and a fact may share an id, never a key."""
    return f"{kind}:{doc_id}"


class OpenSearchIndex:
    """KeywordIndex port over OpenSearch, an index per world. Documents are keyed `kind:doc_id`; every search
    names its world's index and is a bool query whose filter pins the world, so nothing in the user's query
    string can widen it."""

    def __init__(self, url: str, *, index_prefix: str = "engram", client: OpenSearch | None = None) -> None:
        self.prefix = index_prefix
        self.client = client or _client(url)
        self._ready: set[str] = set()  # worlds whose index this process knows exists

    def _index(self, world_id: str) -> str:
        return world_index(self.prefix, world_id)

    def _ensure(self, world_id: str) -> str:
        """The world's index, created with the mappings on its first write."""
        name = self._index(world_id)
        if world_id in self._ready:
            return name
        try:
            if not self.client.indices.exists(index=name):
                self.client.indices.create(index=name, body={"settings": _SETTINGS, "mappings": _MAPPINGS})
        except RequestError as exc:
            if "resource_already_exists" not in str(exc):
                raise TransientStoreError(f"OpenSearch refused the index: {exc}") from exc
        except (OSConnectionError, ConnectionTimeout, TransportError) as exc:
            raise TransientStoreError(f"OpenSearch unavailable: {exc}") from exc
        self._ready.add(world_id)
        return name

    def upsert(self, docs: Sequence[IndexDocument]) -> None:
        if not docs:
            return
        indexes = {d.world_id: self._ensure(d.world_id) for d in docs}
        actions = [{
            "_op_type": "index", "_index": indexes[d.world_id], "_id": _doc_key(d.kind, d.doc_id),
            "_source": {"world_id": d.world_id, "doc_id": d.doc_id, "kind": d.kind, "user_id": d.user_id or "",
                        "conversation": d.conversation_id or "", "speaker": d.speaker or "", "text": d.text,
                        "entity_ids": d.entity_ids, "importance": d.importance,
                        "occurred_at": d.occurred_at.isoformat() if d.occurred_at else None},
        } for d in docs]
        self._bulk(actions)

    def delete(self, world_id: str, refs: Sequence[tuple[DocKind, str]]) -> None:
        if not refs:
            return
        name = self._index(world_id)  # a world without an index has nothing to delete: a missing id is no error
        self._bulk([{"_op_type": "delete", "_index": name, "_id": _doc_key(kind, doc_id)} for kind, doc_id in refs])

    def delete_world_user(self, world_id: str, user_id: str) -> int:
        query = {"bool": {"filter": [{"term": {"world_id": world_id}}, {"term": {"user_id": user_id}}]}}
        try:
            result = self.client.delete_by_query(index=self._index(world_id), body={"query": query}, refresh=True)
        except NotFoundError:  # the world never had a document
            return 0
        except (OSConnectionError, ConnectionTimeout, TransportError) as exc:
            raise TransientStoreError(f"OpenSearch unavailable: {exc}") from exc
        return int(result.get("deleted", 0))

    def clear(self, world_id: str) -> None:
        # The index stays: a process that knows it exists would otherwise recreate it without the mappings.
        try:
            self.client.delete_by_query(index=self._index(world_id), body={"query": {"match_all": {}}},
                                        refresh=True, conflicts="proceed")
        except NotFoundError:
            return
        except (OSConnectionError, ConnectionTimeout, TransportError) as exc:
            raise TransientStoreError(f"OpenSearch unavailable: {exc}") from exc

    def search(self, world_id: str, query: str, *, user_id: str | None = None,
               kinds: Sequence[DocKind] | None = None, limit: int = 10) -> list[KeywordHit]:
        name = self._index(world_id)
        filters: list[dict[str, Any]] = [{"term": {"world_id": world_id}}]
        if user_id is not None:
            filters.append({"terms": {"user_id": [user_id, ""]}})
        if kinds:
            filters.append({"terms": {"kind": list(kinds)}})
        try:
            words = plain_terms(query).split() if query.strip() and not has_syntax(query) else []
            if words:
                return self._run(name, self._scope_weighted(name, words, filters), filters, limit)
            return self._search(name, query, filters, limit)
        except RequestError:  # malformed syntax: search its plain words, as match queries (which parse nothing)
            terms = plain_terms(query)
            return self._run(name, {"bool": {"should": [{"match": {f: terms}} for f in _FIELDS],
                                             "minimum_should_match": 1}}, filters, limit) if terms else []
        except NotFoundError:  # the world never had a document
            return []
        except (OSConnectionError, ConnectionTimeout, TransportError) as exc:
            raise TransientStoreError(f"OpenSearch unavailable: {exc}") from exc

    def _search(self, name: str, query: str, filters: list[dict[str, Any]], limit: int) -> list[KeywordHit]:
        if not query.strip():
            return []
        return self._run(name, {"query_string": {"query": negations_as_minus(query), "fields": list(_FIELDS),
                                           "default_operator": "OR"}}, filters, limit)

    def _scope_weighted(self, name: str, words: list[str], filters: list[dict[str, Any]]) -> dict[str, Any]:
        """Plain words, any of which may match, each weighted by its rarity among the documents searched (the
        user's own and the world's shared ones, of the kinds asked) rather than in the world's whole index
        (BM25's idf from the scope's document frequencies, as the tantivy adapter does): one request counts
        every word in the scope and in the world's index, through filters aggregations."""
        clauses = {f"{i}:{field}": {"match": {field: word}} for i, word in enumerate(dict.fromkeys(words))
                   for field in _FIELDS}
        counts = self.client.search(index=name, body={
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

    def _run(self, name: str, query: dict[str, Any], filters: list[dict[str, Any]], limit: int) -> list[KeywordHit]:
        body = {
            "size": limit,
            "query": {"bool": {"must": [query], "filter": filters}},
            "highlight": {"fields": {"text": {}}, "pre_tags": ["<b>"], "post_tags": ["</b>"]},
        }
        result = self.client.search(index=name, body=body)
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
