"""Fused search: the keyword brain (BM25 with query syntax), the semantic brain (pgvector), the graph
brain (what the question's entities lead to) and the expansion brain (the turns their facts, relationships and
co-mentions link to: multi-hop and time-aware, see `expansion`) run in parallel; their candidates, with the turns around
the best of them, are fused into one ranking (see `fusion`), explained hit by hit, with serendipity:
related entities the ranking left out."""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import datetime
from typing import Protocol, TypeVar

from engram.errors import TransientStoreError
from engram.model.common import utcnow
from engram.model.entities import CanonicalEntity
from engram.model.heuristics import Heuristics
from engram.model.search import (
    Brain,
    BrainReport,
    DocKind,
    IndexDocument,
    KeywordHit,
    QueryEntity,
    SearchHit,
    SearchResponse,
    SemanticHit,
    Suggestion,
)
from engram.model.world import World
from engram.observability import logger
from engram.ports import Embedder, EntityStore, KeywordIndex
from engram.retrieval import evidence
from engram.retrieval.classify import QueryClass, classify_query
from engram.retrieval.embedding_cache import cached, query_vector
from engram.retrieval.entities import question_entities
from engram.retrieval.expansion import ExpansionStore, asks_when, expansion_brain
from engram.retrieval.features import Query
from engram.retrieval.fusion import Key, Scored, key
from engram.retrieval.graph import GraphBrainStore, graph_brain
from engram.retrieval.ranker import rank, relevant, shipped
from engram.retrieval.replies import previous_turns, replied_end
from engram.rules.dates import time_windows, without_dates
from engram.rules.keyword_query import has_syntax, keyword_terms
from engram.rules.relevance import rrf
from engram.rules.text import STOPWORDS

SEARCHABLE: tuple[DocKind, ...] = ("event", "episodic", "semantic", "summary", "procedural", "entity")
_BRAINS = ThreadPoolExecutor(max_workers=8, thread_name_prefix="engram-brain")  # shared by concurrent searches
T = TypeVar("T")


class SearchStore(EntityStore, GraphBrainStore, ExpansionStore, Protocol):
    """What the fused search reads: the question's entities and the graph brain's walk, the semantic brain (of
    `MemoryStore`), and the candidates' documents with the turns around them (of `RetrievalStore`); for a search
    as of a past time, the facts true then."""

    def facts_as_of(self, world_id: str, embedding: Sequence[float], as_of: datetime, *, user_id: str | None,
                    limit: int) -> list[tuple[IndexDocument, float]]: ...

    def semantic_search(
        self, world_id: str, embedding: Sequence[float], *, user_id: str | None, kinds: Sequence[DocKind],
        limit: int, min_similarity: float, context_weight: float = 0.0,
    ) -> list[SemanticHit]: ...
    def candidate_documents(self, world_id: str, refs: Sequence[tuple[DocKind, str]], embedding: Sequence[float], *,
                            context_weight: float = 0.0) -> list[tuple[IndexDocument, float | None]]: ...
    def adjacent_documents(self, world_id: str, event_ids: Sequence[str], embedding: Sequence[float], *,
                           context_weight: float = 0.0, span: int = 1, known: Collection[str] = ()
                           ) -> tuple[dict[str, list[str]], list[tuple[IndexDocument, float | None]]]: ...


class SearchPorts(Protocol):
    """The ports the fused search uses: the store, the keyword index and the embedder."""

    @property
    def store(self) -> SearchStore: ...
    @property
    def index(self) -> KeywordIndex: ...
    @property
    def embedder(self) -> Embedder: ...


class SimilarStore(Protocol):
    """What find-similar reads (of `RetrievalStore` and `MemoryStore`)."""

    def similar_to(self, world_id: str, kind: DocKind, doc_id: str, *, kinds: Sequence[DocKind], limit: int,
                   min_similarity: float, user_id: str | None = None) -> list[SemanticHit]: ...
    def documents(self, world_id: str, refs: Sequence[tuple[DocKind, str]]) -> list[IndexDocument]: ...


class SimilarPorts(Protocol):
    """The ports find-similar uses."""

    @property
    def store(self) -> SimilarStore: ...


def keyword_query(query: str) -> str:
    """The keyword brain's query: the user's own when it uses the syntax; else the words that carry
    meaning, any of which may match (a question's "what did ... ?" would only add noise). Empty when no
    word carries meaning: the keyword brain then sits the query out."""
    if has_syntax(query):
        return query
    return " ".join(keyword_terms(query, STOPWORDS))


def search(clients: SearchPorts, world: World, query: str, *, user_id: str | None, limit: int = 10,
           kinds: Sequence[DocKind] | None = None, now: datetime | None = None,
           as_of: datetime | None = None) -> SearchResponse:
    """The best `limit` documents of the world (the user's own and shared ones when `user_id` is given). With
    `as_of`, as memory stood then: the facts true then (superseded ones included, by meaning: the brains hold
    today's), what had happened by then, and relative dates and recency read from then."""
    started = time.perf_counter()
    now = as_of or now or utcnow()
    world_id, h = world.world_id, world.heuristics
    wanted = tuple(kinds or SEARCHABLE)
    # As of a past time, the facts come from their own read below, never from the brains' current ones.
    kinds = tuple(k for k in wanted if k != "semantic") if as_of is not None else wanted
    timings: dict[str, float] = {}

    def semantic_brain() -> tuple[list[float], Future[list[SemanticHit]]]:
        vector = query_vector(clients.embedder, query, h.retrieval.query_embedding_cache)
        return vector, _timed(timings, "semantic", lambda: clients.store.semantic_search(
            world_id, vector, user_id=user_id, kinds=kinds, limit=max(h.retrieval.search_semantic_candidates, limit),
            min_similarity=h.retrieval.semantic_brain_min_similarity, context_weight=h.retrieval.search_context_weight))

    # The brains that wait on the database go out first and the question is read while they run: a thread running
    # Python (the keyword brain) holds back one that only sends a statement for up to the interpreter's switch
    # interval (5 ms). A question not embedded yet is embedded once the keyword brain is under way.
    # The question's entities with the walk from them, which feeds two brains: what they touch (graph), what links
    # lead to (expansion).
    entities_f = _timed(timings, "entities", lambda: question_entities(clients, world_id, query, user_id, h))
    vector, semantic_f = semantic_brain() if cached(clients.embedder, query) else ([], None)
    intent = classify_query(query, h.retrieval.query_classifier)
    expanding = h.retrieval.search_expansion_limit > 0  # the expansion brain runs only where a world turns it on
    weights = {b: w for b, w in h.retrieval.fusion_weights.get(intent, h.retrieval.fusion_weights["semantic"]).items()
               if b != "expansion" or expanding}
    depth = max(h.retrieval.search_candidates, limit)
    windows = time_windows(query, now)
    lexical_query = keyword_query(without_dates(query, windows) if windows and not has_syntax(query) else query)
    keyword_f = _timed(timings, "keyword", lambda: clients.index.search(
        world_id, lexical_query, user_id=user_id, kinds=kinds, limit=depth) if lexical_query and kinds else [])
    if semantic_f is None:
        vector, semantic_f = semantic_brain()
    entities, reached = entities_f.result()
    graph_f = _timed(timings, "graph", lambda: graph_brain(
        clients, world_id, reached, vector, user_id=user_id, kinds=kinds, limit=depth, h=h) if kinds else [])
    # The entities serendipity may suggest are the reached ones: read while the brains and the ranking run.
    related_f = _BRAINS.submit(clients.store.get_entities, world_id, list(reached)) \
        if reached and h.retrieval.serendipity_limit > 0 else None
    expansion_f = _timed(timings, "expansion", lambda: expansion_brain(
        clients, world_id, query, reached, vector, user_id=user_id, h=h, names=[e.name for e in entities])
        if "event" in kinds else []) if expanding else None
    unavailable: list[Brain] = []
    try:
        keyword: list[KeywordHit] = keyword_f.result()
    except TransientStoreError as exc:  # the index is derived data: search on with the database's brains
        logger.warning("keyword brain unavailable; searching without it", extra={"error": exc.message})
        keyword, unavailable = [], ["keyword"]
    semantic: list[SemanticHit] = semantic_f.result()
    graph: list[SemanticHit] = graph_f.result()
    expansion: list[SemanticHit] = expansion_f.result() if expansion_f else []
    past: list[tuple[IndexDocument, float]] = []
    if as_of is not None and "semantic" in wanted:
        # Near the question by meaning, or about an entity the question leads to (the graph brain's part).
        past = [(d, sim) for d, sim in clients.store.facts_as_of(
            world_id, vector, as_of, user_id=user_id, limit=max(h.retrieval.search_semantic_candidates, limit))
            if sim >= h.retrieval.semantic_brain_min_similarity or reached.keys() & set(d.entity_ids)]
        semantic = sorted([*semantic, *(SemanticHit(doc_id=d.doc_id, kind="semantic", score=sim) for d, sim in past)],
                          key=lambda s: -s.score)

    rankings = {"keyword": [key(k.kind, k.doc_id) for k in keyword],
                "semantic": [key(s.kind, s.doc_id) for s in semantic],
                "graph": [key(g.kind, g.doc_id) for g in graph]}
    if expanding:
        rankings["expansion"] = [key(x.kind, x.doc_id) for x in expansion]
    # The brains' candidates in weighted-RRF order, as many as fusion scores; then the turns around the best.
    fused = rrf(rankings, weights, h.retrieval.rrf_k)
    candidates = sorted(fused, key=lambda k: fused[k], reverse=True)[: max(h.retrieval.search_pool, limit)]
    # The candidates' documents are read while the turns around the best of them are, with their own documents.
    neighbours_f = _BRAINS.submit(_neighbours, clients, world_id, candidates, vector, h)
    found = clients.store.candidate_documents(world_id, [_ref(k) for k in candidates], vector,
                                              context_weight=h.retrieval.search_context_weight)
    neighbours, around = neighbours_f.result()
    found += around
    found += past
    similarity: dict[Key, float] = {}
    docs: dict[Key, IndexDocument] = {}
    turns: dict[str, IndexDocument] = {}  # every turn read, whoever said it: what the user's own turns reply to
    for d, sim in found:
        if as_of is not None and d.kind not in ("semantic", "entity") and d.occurred_at and d.occurred_at > as_of:
            continue  # it had not happened yet (an entity is a name, recorded whenever it was first read)
        if d.kind == "event":
            turns[d.doc_id] = d
        if user_id is None or d.user_id in (None, user_id):
            docs[key(d.kind, d.doc_id)] = d
            if sim is not None:
                similarity[key(d.kind, d.doc_id)] = sim

    query_entity_ids = [e.entity_id for e in entities]
    terms = keyword_terms(query, STOPWORDS)
    # The learned ranker (or the hand-tuned fusion, per world); below the relevance floor a hit is dropped, and
    # every hit when no candidate has the evidence of being about the question (the floor of `evidence`).
    scored = rank(rankings, weights, {key(k.kind, k.doc_id): k.score for k in keyword}, similarity, docs, neighbours,
                  Query(intent, query_entity_ids, [e.user_id for e in entities if e.user_id], windows,
                        asks_when(query), terms), now, h)
    # Read only when a floor holds (it costs a pass over the texts): a keyword query asks for its matches, no floor.
    floored = h.retrieval.search_min_evidence > 0 and not has_syntax(query)
    passed = relevant(scored, h, evidence.best(shipped().evidence, list(scored), rankings, similarity, docs, terms,
                                               query_entity_ids) if floored else 1.0)
    order = passed[:limit]
    highlights = {key(k.kind, k.doc_id): k.highlights for k in keyword}
    names = {e.entity_id: e.name for e in entities}
    replied = _replied(order, docs, turns, neighbours, user_id)
    hits = [_hit(docs[k], scored[k], rankings, highlights.get(k, []), similarity.get(k), names, neighbours, scored,
                 replied.get(k)) for k in order]
    return SearchResponse(
        query=query, interpretation=_interpretation(intent, weights, entities, lexical_query, unavailable), hits=hits,
        search_time_ms=round((time.perf_counter() - started) * 1000, 2), query_class=intent, weights=weights,
        keyword_query=lexical_query, entities=entities, total_matches=len(fused),
        brains={"keyword": BrainReport(candidates=len(keyword), elapsed_ms=timings.get("keyword", 0.0)),
                "semantic": BrainReport(candidates=len(semantic), elapsed_ms=timings.get("semantic", 0.0)),
                "graph": BrainReport(candidates=len(graph), elapsed_ms=timings.get("graph", 0.0)),
                **({"expansion": BrainReport(candidates=len(expansion), elapsed_ms=timings.get("expansion", 0.0))}
                   if expanding else {})},
        serendipity=_serendipity(clients, world_id, reached, query_entity_ids, hits, h, user_id, related_f),
        unavailable=unavailable, nothing_relevant=not passed,
    )


def find_similar(clients: SimilarPorts, world: World, kind: DocKind, doc_id: str, *, limit: int = 5,
                 kinds: Sequence[DocKind] | None = None, user_id: str | None = None) -> list[SearchHit]:
    """The memories (or entities) nearest one memory or entity by meaning, at least as similar as the
    semantic threshold, each with the one line that says why. For `user_id`, from one of the user's own or
    the world's rows (else nothing) and among those only."""
    world_id, h = world.world_id, world.heuristics
    near = clients.store.similar_to(world_id, kind, doc_id, kinds=tuple(kinds or SEARCHABLE), limit=limit,
                                    min_similarity=h.retrieval.semantic_min_similarity, user_id=user_id)
    docs = {key(d.kind, d.doc_id): d for d in clients.store.documents(world_id, [(s.kind, s.doc_id) for s in near])}
    hits = []
    for s in near:
        doc = docs.get(key(s.kind, s.doc_id))
        if doc is not None:
            hits.append(SearchHit(doc_id=doc.doc_id, kind=doc.kind, text=doc.text, score=round(s.score, 4),
                                  entity_ids=doc.entity_ids, user_id=doc.user_id, conversation_id=doc.conversation_id,
                                  occurred_at=doc.occurred_at, event_ids=doc.event_ids,
                                  explanation=f"cosine {s.score:.2f} to {kind} {doc_id}"))
    return hits


def _timed(timings: dict[str, float], name: str, work: Callable[[], T]) -> Future[T]:
    def run() -> T:
        started = time.perf_counter()
        try:
            return work()
        finally:
            timings[name] = round((time.perf_counter() - started) * 1000, 2)
    return _BRAINS.submit(run)


def _ref(k: Key) -> tuple[DocKind, str]:
    kind, doc_id = k.split(":", 1)
    return kind, doc_id  # type: ignore[return-value]


def _neighbours(clients: SearchPorts, world_id: str, candidates: list[Key], vector: Sequence[float],
                h: Heuristics) -> tuple[dict[Key, list[Key]], list[tuple[IndexDocument, float | None]]]:
    """The turns before and after the best fused events (a reply is read with what it answers), and the
    documents of those that are not candidates already."""
    retrieval = h.retrieval
    if retrieval.search_expand_top <= 0 or (retrieval.search_neighbour_weight <= 0
                                            and retrieval.search_session_weight <= 0):
        return {}, []
    best = [k for k in candidates if k.startswith("event:")][: retrieval.search_expand_top]
    adjacent, around = clients.store.adjacent_documents(
        world_id, [_ref(k)[1] for k in best], vector, context_weight=retrieval.search_context_weight,
        known={_ref(k)[1] for k in candidates if k.startswith("event:")})
    return {key("event", e): [key("event", n) for n in near] for e, near in adjacent.items()}, around


def _replied(order: Sequence[Key], docs: dict[Key, IndexDocument], turns: dict[str, IndexDocument],
             neighbours: dict[Key, list[Key]], user_id: str | None) -> dict[Key, str]:
    """What each event hit replies to, from the turns read around the best events (no further read): shown
    for a user's own turn (they took part in the conversation, as its context reads it) or when any user may
    read the turn replied to."""
    events = [_ref(k)[1] for k in order if k.startswith("event:")]
    adjacent = {_ref(e)[1]: [_ref(n)[1] for n in near] for e, near in neighbours.items()}
    before = previous_turns(events, adjacent, turns)
    return {key("event", e): replied_end(doc.text) for e, doc in before.items()
            if user_id is None or docs[key("event", e)].user_id == user_id or doc.user_id in (None, user_id)}


def _hit(doc: IndexDocument, scored: Scored, rankings: dict[str, list[Key]], highlights: list[str],
         similarity: float | None, names: dict[str, str], neighbours: dict[Key, list[Key]],
         all_scored: dict[Key, Scored], replying_to: str | None = None) -> SearchHit:
    k = key(doc.kind, doc.doc_id)
    ranks = {brain: ids.index(k) + 1 for brain, ids in rankings.items() if k in ids}
    return SearchHit(
        doc_id=doc.doc_id, kind=doc.kind, text=doc.text, score=round(scored.score, 4), ranks=ranks,
        highlights=highlights, entity_ids=doc.entity_ids, user_id=doc.user_id, conversation_id=doc.conversation_id,
        occurred_at=doc.occurred_at, event_ids=doc.event_ids,
        explanation=_explain(ranks, similarity, [names[e] for e in doc.entity_ids if e in names], scored,
                             [n for n in neighbours.get(k, []) if n in all_scored], all_scored),
        replying_to=replying_to,
    )


def _explain(ranks: dict[str, int], similarity: float | None, about: list[str], scored: Scored,
             near: list[Key], all_scored: dict[Key, Scored]) -> str:
    """One line: which brains found it and where, how similar, whom it is about, what lifted it."""
    found = [f"{brain} #{rank}" for brain, rank in ranks.items()]
    line = ("found by " + ", ".join(found)) if found else "next to a match"
    if similarity is not None:
        line += f"; cosine {similarity:.2f}"
    if about:
        line += f"; about {', '.join(about)}"
    if near and scored.context > 0:
        best = max(near, key=lambda n: all_scored[n].base)
        line += f"; lifted by its context ({_ref(best)[1]})"
    return line


# The query types as L-gent names them (EXACT_NAME, TYPE_QUERY, RELATIONSHIP, SEMANTIC_INTENT), and engram's temporal.
INTERPRETED_AS: dict[QueryClass, str] = {"exact_name": "exact name", "type": "type query", "relationship": "relationship",
                                         "semantic": "semantic intent", "temporal": "temporal query"}


def _interpretation(intent: QueryClass, weights: dict[str, float], entities: list[QueryEntity],
                    lexical_query: str, unavailable: list[Brain]) -> str:
    line = f"Understood as {INTERPRETED_AS[intent]}; brains weighted " + ", ".join(
        f"{b} {w}" for b, w in weights.items())
    if entities:
        line += "; entities: " + ", ".join(f"{e.name} ({e.method})" for e in entities)
    if lexical_query:
        line += f"; keywords: {lexical_query}"
    if unavailable:
        used = [b for b in weights if b not in unavailable]
        said = " and ".join(filter(None, [", ".join(used[:-1]), used[-1]])) if used else "nothing"
        line += f"; {' and '.join(unavailable)} brain unavailable: ranked by {said} only"
    return line


def _serendipity(clients: SearchPorts, world_id: str, reached: dict[str, float], query_entities: list[str],
                 hits: list[SearchHit], h: Heuristics, user_id: str | None,
                 related: Future[list[CanonicalEntity]] | None = None) -> list[Suggestion]:
    """Entities near the question's (or else the top hits') that no hit shows, over the edges the user sees:
    worth a look, not ranked. `related`: the reached entities, read already."""
    if h.retrieval.serendipity_limit <= 0:
        return []
    shown = {e for hit in hits for e in hit.entity_ids} | {hit.doc_id for hit in hits if hit.kind == "entity"}
    reason = "related to the entities the query names"
    if not reached:
        seeds = list(dict.fromkeys(e for hit in hits[:3] for e in hit.entity_ids))[:5]
        reached = {e: h.retrieval.graph_hop_decay ** hops
                   for e, hops in clients.store.connected_entities(world_id, seeds, 1, h.retrieval.graph_max_entities,
                                                                   user_id=user_id)}
        reason = "related to the top results"
    candidates = [e for e in sorted(reached, key=lambda e: reached[e], reverse=True)
                  if e not in shown and e not in query_entities][: h.retrieval.serendipity_limit]
    if not candidates:
        return []
    wanted = set(candidates)
    by_id = {e.entity_id: e for e in (related.result() if related is not None
                                      else clients.store.get_entities(world_id, candidates)) if e.entity_id in wanted}
    # The confidence is the entity's graph weight: 1 for a seed, halving (`graph_hop_decay`) per hop.
    return [Suggestion(entity_id=e, name=by_id[e].name, reason=reason, confidence=round(reached[e], 4))
            for e in candidates if e in by_id]
