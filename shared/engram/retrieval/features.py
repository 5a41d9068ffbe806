"""Ranking features (pure): what the learned ranker reads of each fused candidate, by name.

Every brain in the search's `rankings` gives its own columns (`<brain>.rr`, the reciprocal of the rank it
gave, 0 when it did not find the candidate; `<brain>.found`), so a brain added to the search becomes
features without a change here. Then the hand-tuned fusion's parts (`fusion.*`), how the text matches
(`match.*`), the candidate's entities against the question's (`entity.*`), its neighbourhood (the turns
around it, its session, the facts citing it or the turns a fact cites: `context.*`), when it happened
(`time.*`), what it is (`kind.*`, `doc.*`) and what the question is (`query.*`). No feature names a
particular dataset, speaker or date: they are ranks, shares and standardized scores, which carry over.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

import numpy as np

from engram.model.heuristics import Heuristics
from engram.model.search import IndexDocument
from engram.retrieval.classify import QUERY_CLASSES
from engram.retrieval.fusion import Key, Scored, in_time
from engram.rules.dates import TimeWindow
from engram.rules.grounding import date_mentions
from engram.rules.relevance import jaccard

KINDS = ("event", "episodic", "semantic", "summary", "procedural", "entity")


@dataclass(frozen=True)
class Query:
    """What the features read of the question: its class, its entities, the users and time windows it names."""

    intent: str
    entities: Sequence[str]
    speakers: Sequence[str] = ()
    windows: Sequence[TimeWindow] = ()
    asks_when: bool = False  # the question asks when (or how long ago): its answer is a turn's date
    terms: Sequence[str] = ()  # its content words (`keyword_terms`): what the evidence's cover counts


def features(keys: Sequence[Key], rankings: Mapping[str, list[Key]], scored: Mapping[Key, Scored],
             keyword_scores: Mapping[Key, float], similarity: Mapping[Key, float], docs: Mapping[Key, IndexDocument],
             neighbours: Mapping[Key, Sequence[Key]], query: Query, now: datetime, h: Heuristics,
             wanted: Collection[str] | None = None) -> dict[str, list[float]]:
    """One column per feature name, one value per key of `keys` (every one in `docs` and `scored`). `wanted`: the
    names to build (the model's at search time: a column no tree reads is not built); None, every one (training)."""
    n = len(keys)
    cols: dict[str, list[float]] = {}

    def want(name: str) -> bool:
        return wanted is None or name in wanted

    def col(name: str, values: Callable[[], list[float]]) -> None:
        if want(name):
            cols[name] = values()

    ds = [docs[k] for k in keys]  # each document looked up once, read by many columns
    for brain, ranked in rankings.items():
        position = {k: i + 1 for i, k in enumerate(ranked)}
        if want(f"{brain}.rr"):
            cols[f"{brain}.rr"] = [1.0 / position[k] if k in position else 0.0 for k in keys]
        if want(f"{brain}.found"):
            cols[f"{brain}.found"] = [1.0 if k in position else 0.0 for k in keys]
        if want(f"{brain}.share"):
            cols[f"{brain}.share"] = [float(len(ranked) > 0)] * n  # whether the brain found anything for this query

    fused = [scored[k] for k in keys]
    scores = [s.score for s in fused]
    bases = [s.base for s in fused]
    col("fusion.rrf", lambda: [s.rrf for s in fused])
    col("fusion.match", lambda: [s.match for s in fused])
    col("fusion.signal", lambda: [s.signal for s in fused])
    col("fusion.base_z", lambda: _z(bases))
    col("fusion.score_z", lambda: _z(scores))
    col("fusion.lift", lambda: (np.asarray(scores) - np.asarray(bases)).tolist())
    col("fusion.rr", lambda: _reciprocal_ranks(scores))
    col("fusion.base_rr", lambda: _reciprocal_ranks(bases))

    sims = [similarity.get(k, 0.0) for k in keys]
    lexical = [keyword_scores.get(k, 0.0) for k in keys]
    top_lexical = max(lexical, default=0.0) or 1.0
    col("match.similarity", lambda: sims)
    col("match.similarity_z", lambda: _z(sims))
    col("match.similarity_gap", lambda: (max(sims, default=0.0) - np.asarray(sims)).tolist())
    col("match.keyword_rel", lambda: (np.asarray(lexical) / top_lexical).tolist())
    col("match.keyword_z", lambda: _z(lexical))

    named = set(query.entities)
    overlap = [len(named.intersection(d.entity_ids)) for d in ds] \
        if want("entity.overlap") or want("entity.covered") else []
    col("entity.jaccard", lambda: [jaccard(d.entity_ids, query.entities) for d in ds])
    col("entity.overlap", lambda: [float(o) for o in overlap])
    col("entity.covered", lambda: [o / len(named) if named else 0.0 for o in overlap])
    col("entity.count", lambda: [float(len(d.entity_ids)) for d in ds])
    speakers = set(query.speakers)
    col("entity.speaker", lambda: [1.0 if d.user_id in speakers and d.kind != "entity" else 0.0 for d in ds]
        if speakers else [0.0] * n)

    base_of = dict(zip(keys, bases, strict=True))
    median = sorted(bases)[n // 2] if n else 0.0
    col("context.neighbour", lambda: _neighbour(keys, base_of, neighbours, median))
    col("context.session", lambda: _session(ds, bases, median))
    # Provenance both ways: a fact's best-scoring source turn, and the best fact that cites a turn.
    col("context.cited_by", lambda: _cited_by(ds, bases, median))
    col("context.sources", lambda: [max((base_of.get(f"event:{e}", median) for e in d.event_ids), default=median)
                                    - median if d.kind != "event" else 0.0 for d in ds])
    col("doc.sources", lambda: [float(len(d.event_ids)) for d in ds])

    col("time.window", lambda: [in_time(d, query.windows, h) for d in ds] if query.windows else [0.0] * n)
    col("time.position", lambda: _positions([d.occurred_at for d in ds]))
    # For a question asking when, a turn that says when something happened (read only then: the regexes cost).
    col("time.dated_when", lambda: [1.0 if d.kind == "event" and dated(d.text, d.occurred_at) else 0.0 for d in ds]
        if query.asks_when else [0.0] * n)

    for kind in KINDS:
        if want(f"kind.{kind}"):
            cols[f"kind.{kind}"] = [1.0 if d.kind == kind else 0.0 for d in ds]
    col("doc.importance", lambda: [d.importance for d in ds])
    col("doc.confidence", lambda: [d.confidence for d in ds])
    col("doc.reinforcements", lambda: [float(d.reinforcements) for d in ds])
    col("doc.length", lambda: [math.log1p(len(d.text)) for d in ds])

    for intent in QUERY_CLASSES:
        if want(f"query.{intent}"):
            cols[f"query.{intent}"] = [1.0 if query.intent == intent else 0.0] * n
    col("query.entities", lambda: [float(len(named))] * n)
    col("query.windows", lambda: [float(len(query.windows))] * n)
    col("query.speakers", lambda: [float(len(query.speakers))] * n)
    col("query.candidates", lambda: [math.log1p(n)] * n)
    col("query.when", lambda: [float(query.asks_when)] * n)
    return cols


def dated(text: str, said_at: datetime | None) -> bool:
    """The text says when something happened: a date or a time expression grounded against when it was said."""
    return said_at is not None and bool(date_mentions(text, said_at))  # it tells a dateless text quickly itself


def _z(values: list[float]) -> list[float]:
    """`standardized` over a list (the same arithmetic, without keying each value by a string)."""
    if not values:
        return []
    mean = sum(values) / len(values)
    deviations = np.asarray(values) - mean
    std = math.sqrt(sum((deviations * deviations).tolist()) / len(values))
    if std == 0.0:
        return [0.0] * len(values)
    return (deviations / std).tolist()


def _reciprocal_ranks(values: list[float]) -> list[float]:
    order = sorted(range(len(values)), key=values.__getitem__, reverse=True)
    out = [0.0] * len(values)
    for rank, i in enumerate(order, start=1):
        out[i] = 1.0 / rank
    return out


def _neighbour(keys: Sequence[Key], base_of: Mapping[Key, float], neighbours: Mapping[Key, Sequence[Key]],
               median: float) -> list[float]:
    """The best base among each candidate's neighbouring turns above the median (0 for one without any: the
    turns around the best events only have them)."""
    out = [0.0] * len(keys)
    for i, k in enumerate(keys):
        if near := neighbours.get(k):
            out[i] = max((base_of[m] for m in near if m in base_of), default=median) - median
    return out


def _session(docs: Sequence[IndexDocument], bases: Sequence[float], median: float) -> list[float]:
    """The best base in each candidate's session above the median (the median for a candidate without one)."""
    best: dict[str, float] = {}
    for d, b in zip(docs, bases, strict=True):
        if d.conversation_id:
            best[d.conversation_id] = max(best.get(d.conversation_id, median), b)
    return [best.get(d.conversation_id or "", median) - median for d in docs]


def _cited_by(docs: Sequence[IndexDocument], bases: Sequence[float], median: float) -> list[float]:
    """For a turn, the best base of a fact (or summary) citing it above the median; 0 for the others."""
    cited: dict[str, float] = {}
    for d, b in zip(docs, bases, strict=True):
        if d.kind != "event":
            for event_id in d.event_ids:
                cited[event_id] = max(cited.get(event_id, median), b)
    return [cited.get(d.doc_id, median) - median if d.kind == "event" else 0.0 for d in docs]


def _positions(times: list[datetime | None]) -> list[float]:
    """Where each time falls among the candidates' known times (`bisect_left`'s index over them sorted): 0 the
    oldest, 1 the newest, 0.5 when unknown or fewer than two are known. One sort, no search per candidate."""
    known = {i: t for i, t in enumerate(times) if t is not None}
    order = sorted(known, key=known.__getitem__)
    out = [0.5] * len(times)
    if len(order) < 2:
        return out
    last = len(order) - 1
    first = 0  # the first of a run of equal times: where bisect_left puts each of them
    for at, i in enumerate(order):
        if at and known[i] != known[order[at - 1]]:
            first = at
        out[i] = first / last
    return out
