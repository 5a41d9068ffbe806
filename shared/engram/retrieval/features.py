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
from bisect import bisect_left
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

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
             neighbours: Mapping[Key, Sequence[Key]], query: Query, now: datetime,
             h: Heuristics) -> dict[str, list[float]]:
    """One column per feature name, one value per key of `keys` (every one in `docs` and `scored`)."""
    n = len(keys)
    cols: dict[str, list[float]] = {}

    def col(name: str, values: list[float]) -> None:
        cols[name] = values

    for brain, ranked in rankings.items():
        position = {k: i + 1 for i, k in enumerate(ranked)}
        col(f"{brain}.rr", [1.0 / position[k] if k in position else 0.0 for k in keys])
        col(f"{brain}.found", [1.0 if k in position else 0.0 for k in keys])
        col(f"{brain}.share", [float(len(ranked) > 0)] * n)  # whether the brain found anything for this query

    fused = [scored[k] for k in keys]
    scores = [s.score for s in fused]
    bases = [s.base for s in fused]
    col("fusion.rrf", [s.rrf for s in fused])
    col("fusion.match", [s.match for s in fused])
    col("fusion.signal", [s.signal for s in fused])
    col("fusion.base_z", _z(bases))
    col("fusion.score_z", _z(scores))
    col("fusion.lift", [s.score - s.base for s in fused])
    col("fusion.rr", _reciprocal_ranks(scores))
    col("fusion.base_rr", _reciprocal_ranks(bases))

    sims = [similarity.get(k, 0.0) for k in keys]
    lexical = [keyword_scores.get(k, 0.0) for k in keys]
    top_lexical = max(lexical, default=0.0) or 1.0
    col("match.similarity", sims)
    col("match.similarity_z", _z(sims))
    best_sim = max(sims, default=0.0)
    col("match.similarity_gap", [best_sim - s for s in sims])
    col("match.keyword_rel", [x / top_lexical for x in lexical])
    col("match.keyword_z", _z(lexical))

    wanted = set(query.entities)
    overlap = [len(wanted.intersection(docs[k].entity_ids)) for k in keys]
    col("entity.jaccard", [jaccard(docs[k].entity_ids, query.entities) for k in keys])
    col("entity.overlap", [float(o) for o in overlap])
    col("entity.covered", [o / len(wanted) if wanted else 0.0 for o in overlap])
    col("entity.count", [float(len(docs[k].entity_ids)) for k in keys])
    col("entity.speaker", [1.0 if docs[k].user_id in query.speakers and docs[k].kind != "entity" else 0.0
                           for k in keys])

    base_of = dict(zip(keys, bases, strict=True))
    median = sorted(bases)[n // 2] if n else 0.0
    col("context.neighbour", [max((base_of[m] for m in neighbours.get(k, ()) if m in base_of), default=median)
                              - median for k in keys])
    best_in_session: dict[str, float] = {}
    for k in keys:
        session = docs[k].conversation_id
        if session:
            best_in_session[session] = max(best_in_session.get(session, median), base_of[k])
    col("context.session", [best_in_session.get(docs[k].conversation_id or "", median) - median for k in keys])
    # Provenance both ways: a fact's best-scoring source turn, and the best fact that cites a turn.
    cited: dict[str, float] = {}
    for k in keys:
        if docs[k].kind != "event":
            for event_id in docs[k].event_ids:
                cited[event_id] = max(cited.get(event_id, median), base_of[k])
    col("context.cited_by", [cited.get(docs[k].doc_id, median) - median if docs[k].kind == "event" else 0.0
                             for k in keys])
    col("context.sources", [max((base_of.get(f"event:{e}", median) for e in docs[k].event_ids), default=median)
                            - median if docs[k].kind != "event" else 0.0 for k in keys])
    col("doc.sources", [float(len(docs[k].event_ids)) for k in keys])

    times = [docs[k].occurred_at for k in keys]
    known = sorted(t for t in times if t is not None)
    col("time.window", [in_time(docs[k], query.windows, h) for k in keys])
    col("time.position", [_position(t, known) for t in times])
    # For a question asking when, a turn that says when something happened (read only then: the regexes cost).
    col("time.dated_when", [1.0 if query.asks_when and docs[k].kind == "event" and dated(docs[k].text,
                                                                                           docs[k].occurred_at)
                            else 0.0 for k in keys])

    for kind in KINDS:
        col(f"kind.{kind}", [1.0 if docs[k].kind == kind else 0.0 for k in keys])
    col("doc.importance", [docs[k].importance for k in keys])
    col("doc.confidence", [docs[k].confidence for k in keys])
    col("doc.reinforcements", [float(docs[k].reinforcements) for k in keys])
    col("doc.length", [math.log1p(len(docs[k].text)) for k in keys])

    for intent in QUERY_CLASSES:
        col(f"query.{intent}", [1.0 if query.intent == intent else 0.0] * n)
    col("query.entities", [float(len(wanted))] * n)
    col("query.windows", [float(len(query.windows))] * n)
    col("query.speakers", [float(len(query.speakers))] * n)
    col("query.candidates", [math.log1p(n)] * n)
    col("query.when", [float(query.asks_when)] * n)
    return cols


def dated(text: str, said_at: datetime | None) -> bool:
    """The text says when something happened: a date or a time expression grounded against when it was said."""
    return said_at is not None and bool(date_mentions(text, said_at))  # it tells a dateless text quickly itself


def _z(values: list[float]) -> list[float]:
    """`standardized` over a list (the same arithmetic, without keying each value by a string)."""
    if not values:
        return []
    mean = sum(values) / len(values)
    std = math.sqrt(sum((x - mean) ** 2 for x in values) / len(values))
    if std == 0.0:
        return [0.0] * len(values)
    return [(x - mean) / std for x in values]


def _reciprocal_ranks(values: list[float]) -> list[float]:
    order = sorted(range(len(values)), key=lambda i: -values[i])
    out = [0.0] * len(values)
    for rank, i in enumerate(order, start=1):
        out[i] = 1.0 / rank
    return out


def _position(t: datetime | None, known: list[datetime]) -> float:
    """Where `t` falls among the candidates' times: 0 the oldest, 1 the newest, 0.5 when unknown."""
    if t is None or len(known) < 2:
        return 0.5
    return bisect_left(known, t) / (len(known) - 1)
