"""Fusion (pure): the brains' rankings and scores become one score per candidate.

    base  = rank weight   x weighted RRF (k = rrf_k, brains weighted by the query's intent), scaled to its best
          + match weight  x how well the text matches: keyword and semantic scores as z-scores over the candidates
          + signal weight x multi-signal relevance (semantic, entity overlap, recency, importance, reinforcement)
                            times effective confidence
          + speaker weight  when the query names the user who said it (a question about Dana: Dana's words)
          + time weight     when it happened in a time window the query names ("in May 2022", "last week")
    score = base + neighbour weight x the best neighbouring turn's base + session weight x the best base in the
            event's conversation (both above the lowest base): a turn is read with the turns around it.

RRF alone throws away how far apart two scores are; standardized scores keep it, and the signals bring
what neither brain sees (who is involved, how recent, how sure).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import NamedTuple

from engram.model.heuristics import Heuristics
from engram.model.search import IndexDocument
from engram.rules.dates import TimeWindow
from engram.rules.relevance import effective_confidence, jaccard, propagate, recency, rrf, standardized

Key = str  # "kind:doc_id", a candidate's identity across brains
_SAID = ("event", "semantic", "episodic")  # kinds whose user is the one who said it
_LONG_LIVED = ("semantic", "summary", "procedural", "entity")  # the 90-day half-life; events and episodes 30


def key(kind: str, doc_id: str) -> Key:
    return f"{kind}:{doc_id}"


class Scored(NamedTuple):
    """A candidate's fused score and its parts (a named tuple: immutable, and built in a third of a frozen
    dataclass's time, twice per candidate a search)."""

    rrf: float
    match: float
    signal: float
    base: float
    score: float
    context: float = 0.0  # what the turns around it and its session added to the base (fusion's part of `score`)


def relevance(doc: IndexDocument, similarity: float, query_entities: Sequence[str], now: datetime,
              h: Heuristics) -> float:
    """The multi-signal relevance times effective confidence (facts and summaries decay since validated)."""
    return _relevance_of(query_entities, now, h)(doc, similarity)


def in_time(doc: IndexDocument, windows: Sequence[TimeWindow], h: Heuristics) -> float:
    """1 when the document happened in a window the query names (or soon after: it may be told later),
    halving every `search_time_half_life_days` away from it; 0 with no window or no time."""
    if not windows or doc.occurred_at is None:
        return 0.0
    distance = min(w.distance_days(doc.occurred_at, h.retrieval.search_time_slack_days) for w in windows)
    return 0.5 ** (distance / h.retrieval.search_time_half_life_days)


def fuse(rankings: Mapping[str, list[Key]], weights: Mapping[str, float], keyword_scores: Mapping[Key, float],
         similarity: Mapping[Key, float], docs: Mapping[Key, IndexDocument], neighbours: Mapping[Key, Sequence[Key]],
         query_entities: Sequence[str], now: datetime, h: Heuristics,
         speakers: Sequence[str] = (), windows: Sequence[TimeWindow] = ()) -> dict[Key, Scored]:
    """Scores for every candidate in `docs` (the others cannot be shown), best not sorted. `speakers` are
    the users the query names: what they said themselves is favoured (`fusion_speaker_weight`)."""
    retrieval = h.retrieval
    fused = rrf(rankings, weights, retrieval.rrf_k)
    top = max((fused.get(k, 0.0) for k in docs), default=0.0) or 1.0
    lexical = standardized({k: keyword_scores.get(k, 0.0) for k in docs})
    semantic = standardized({k: similarity.get(k, 0.0) for k in docs})
    share = retrieval.fusion_match_keyword_share
    signal_of = _relevance_of(query_entities, now, h)
    parts: dict[Key, tuple[float, float, float]] = {}
    for k, doc in docs.items():
        match = share * lexical[k] + (1.0 - share) * semantic[k]
        parts[k] = (fused.get(k, 0.0) / top, match, signal_of(doc, similarity.get(k, 0.0)))
    said = {k for k, doc in docs.items() if doc.kind in _SAID and doc.user_id in speakers}
    rank_w, match_w, signal_w = retrieval.fusion_rank_weight, retrieval.fusion_match_weight, retrieval.fusion_signal_weight
    speaker_w, time_w = retrieval.fusion_speaker_weight, retrieval.fusion_time_weight
    # Without a window every candidate's time term is 0 (`in_time`): the same sum, without a call per candidate.
    timed = {k: in_time(docs[k], windows, h) for k in docs} if windows else {}
    base = {k: rank_w * r + match_w * m + signal_w * s + (speaker_w if k in said else 0.0)
            + time_w * timed.get(k, 0.0) for k, (r, m, s) in parts.items()}
    groups = {k: doc.conversation_id for k, doc in docs.items() if doc.conversation_id}
    final = propagate(base, neighbours, groups, retrieval.search_neighbour_weight, retrieval.search_session_weight)
    return {k: Scored(parts[k][0], parts[k][1], parts[k][2], base[k], final[k], final[k] - base[k]) for k in docs}


def _relevance_of(query_entities: Sequence[str], now: datetime, h: Heuristics) -> Callable[[IndexDocument, float], float]:
    """`relevance` for one query, its constants read once (fusion calls it for each of ~400 candidates)."""
    retrieval = h.retrieval
    wanted = set(query_entities)
    w_sem, w_ent, w_rec = retrieval.weight_semantic, retrieval.weight_entity, retrieval.weight_recency
    w_imp, w_rei = retrieval.weight_importance, retrieval.weight_reinforcement
    long_half, short_half = retrieval.recency_half_life_long_days, retrieval.recency_half_life_days
    full, default = retrieval.reinforcement_full_count, retrieval.reinforcement_default
    decay = h.extract.decay_half_life_days

    def signal_of(doc: IndexDocument, similarity: float) -> float:
        long_lived = doc.kind in _LONG_LIVED
        # a fact's restatements up to `reinforcement_full_count`; what has no reinforcement count, the neutral default
        reinforcement = min(1.0, doc.reinforcements / full) if doc.kind == "semantic" else default
        entity = jaccard(doc.entity_ids, wanted) if wanted else 0.0
        signal = (w_sem * max(0.0, similarity) + w_ent * entity
                  + w_rec * recency(doc.occurred_at, now, long_half if long_lived else short_half, whole_days=True)
                  + w_imp * doc.importance + w_rei * reinforcement)
        return signal * effective_confidence(doc.confidence, doc.validated_at, now, decay, 1.0)

    return signal_of
