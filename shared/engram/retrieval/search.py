"""Fused search: keyword (BM25), semantic (pgvector) and graph (entities named in the query, their
facts and neighbours) ranked together by weighted RRF, then re-ranked by multi-signal relevance."""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import datetime

from engram.model.common import utcnow
from engram.model.search import DocKind, IndexDocument, SearchHit, SearchResponse
from engram.retrieval.classify import WEIGHTS, classify_query
from engram.rules.mentions import detect_mentions
from engram.rules.relevance import jaccard, recency, rrf
from engram.service import Clients

SEARCHABLE: tuple[DocKind, ...] = ("event", "episodic", "semantic", "summary", "procedural", "entity")
_CANDIDATES = 3  # each brain returns this many times the requested limit before fusion


def query_entities(clients: Clients, world_id: str, query: str, user_id: str | None) -> list[str]:
    """Entity ids named in a query: exact names and known aliases of its proper-noun spans."""
    found: dict[str, None] = {}
    for mention in detect_mentions("query", query):
        if mention.kind != "name":
            continue
        entity = clients.store.find_entity_by_name(world_id, mention.text)
        if entity is not None:
            found[entity.entity_id] = None
            continue
        for alias in clients.store.find_alias(world_id, mention.text, user_id)[:1]:
            found[alias.entity_id] = None
    return list(found)


def search(clients: Clients, world_id: str, query: str, *, user_id: str | None, limit: int = 10,
           kinds: Sequence[DocKind] | None = None, now: datetime | None = None) -> SearchResponse:
    started = time.perf_counter()
    now = now or utcnow()
    h = clients.heuristics_for(world_id)
    kinds = tuple(kinds or SEARCHABLE)
    depth = limit * _CANDIDATES
    query_class = classify_query(query)

    keyword = clients.index.search(world_id, query, user_id=user_id, kinds=kinds, limit=depth)
    [vector] = clients.embedder.embed([query])
    semantic = clients.store.semantic_search(world_id, vector, user_id=user_id, kinds=kinds, limit=depth,
                                             min_similarity=h.semantic_min_similarity)
    entity_ids = query_entities(clients, world_id, query, user_id)
    graph: list[tuple[DocKind, str]] = [("entity", e) for e in entity_ids if "entity" in kinds]
    if entity_ids and "semantic" in kinds:
        graph += [("semantic", f.memory_id) for f in clients.store.facts_about(world_id, entity_ids, depth)
                  if user_id is None or f.user_id == user_id]

    key = lambda kind, doc_id: f"{kind}:{doc_id}"  # noqa: E731 - the fused identity of a document
    rankings = {
        "keyword": [key(k.kind, k.doc_id) for k in keyword],
        "semantic": [key(s.kind, s.doc_id) for s in semantic],
        "graph": [key(kind, doc_id) for kind, doc_id in graph],
    }
    fused = rrf(rankings, WEIGHTS[query_class], h.rrf_k)
    similarity = {key(s.kind, s.doc_id): s.score for s in semantic}
    highlights = {key(k.kind, k.doc_id): k.highlights for k in keyword}
    refs = [(k.split(":", 1)[0], k.split(":", 1)[1]) for k in sorted(fused, key=fused.get, reverse=True)]  # type: ignore[arg-type]
    docs = {key(d.kind, d.doc_id): d for d in clients.store.documents(world_id, refs[:depth])}  # type: ignore[arg-type]

    top_rrf = max(fused.values(), default=1.0)
    hits = []
    for doc_key, doc in docs.items():
        if user_id is not None and doc.user_id not in (None, user_id):
            continue
        signal = _relevance(doc, similarity.get(doc_key, 0.0), entity_ids, now, h)
        score = 0.5 * fused[doc_key] / top_rrf + 0.5 * signal
        ranks = {brain: ids.index(doc_key) + 1 for brain, ids in rankings.items() if doc_key in ids}
        hits.append(SearchHit(
            doc_id=doc.doc_id, kind=doc.kind, text=doc.text, score=round(score, 4), ranks=ranks,
            highlights=highlights.get(doc_key, []), entity_ids=doc.entity_ids, user_id=doc.user_id,
            conversation_id=doc.conversation_id, occurred_at=doc.occurred_at,
            explanation=_explain(ranks, similarity.get(doc_key)),
        ))
    hits.sort(key=lambda hit: hit.score, reverse=True)
    interpretation = (f"{query_class} query; brains weighted " +
                      ", ".join(f"{b} {w}" for b, w in WEIGHTS[query_class].items()) +
                      (f"; entities: {', '.join(entity_ids)}" if entity_ids else ""))
    return SearchResponse(query=query, interpretation=interpretation, hits=hits[:limit],
                          search_time_ms=round((time.perf_counter() - started) * 1000, 2))


def _relevance(doc: IndexDocument, similarity: float, query_entities: list[str], now: datetime, h) -> float:  # type: ignore[no-untyped-def]
    """The multi-signal score: semantic, entity overlap, recency, importance (facts: their confidence)."""
    half_life = h.recency_half_life_days if doc.kind == "event" else h.recency_half_life_long_days
    return (h.weight_semantic * max(0.0, similarity)
            + h.weight_entity * jaccard(doc.entity_ids, query_entities)
            + h.weight_recency * recency(doc.occurred_at, now, half_life)
            + h.weight_importance * doc.importance
            + h.weight_reinforcement * (doc.importance if doc.kind == "semantic" else 0.0))


def _explain(ranks: dict[str, int], similarity: float | None) -> str:
    parts = [f"{brain} #{rank}" for brain, rank in ranks.items()]
    if similarity is not None:
        parts.append(f"cosine {similarity:.2f}")
    return "matched by " + ", ".join(parts)
