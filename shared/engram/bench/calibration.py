"""Small worlds inside LoCoMo, for calibrating the ranker's score (`engram bench train-ranker`).

A LoCoMo conversation is a world of some 600 turns, and a question's pool holds about 340 candidates with one to
three relevant: a map from the trees' raw score to a probability fitted there says little in a world of twenty
turns, where the same raw score stands among far fewer candidates. The smaller worlds are real ones: a session
(about twenty turns) or a few consecutive sessions, asked the questions whose evidence is all in them (answerable)
and, half as many, questions of the same conversation whose evidence is all elsewhere (about the same people, but not
answered there). Each question's recorded candidates are cut to the small world's documents (a turn of its
sessions, a fact or summary all of whose sources are, an entity) and ranked again from what `rank` read
(`ranker.Ranked`): the brains' ranks among the small world's documents, fusion's standardized scores and every
feature over the smaller pool. A turn of the session that the full world's search did not bring into its pool is
missing from the small one too: the small pools are a little smaller than the world's search would give.

The score's map (`fit`, `ranker.PoolMap`) reads the raw score through the isotonic fit on the full pools, and
the pool's size: a logistic map of the isotonic logit, the log of the pool's size and their product, fitted on
the out-of-fold raw scores of pools of every size; its slope on the isotonic logit stays positive, so every
query's order is the trees'. `pool_reliability` reads, by pool kind, how well the score of the search's first hits
says their share relevant, before the pool map and after it (fitted on the other conversations' pools).
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

import numpy as np

from engram.model.search import IndexDocument
from engram.retrieval import evidence
from engram.retrieval.features import features
from engram.retrieval.fusion import Key, fuse
from engram.retrieval.ranker import PoolMap, Sample

SESSIONS = (1, 3)  # the small worlds' sizes, in consecutive sessions
# Questions a small world cannot answer, for every one it can: as in the trust benches (a third of the planted
# questions, a fifth of the new user's), asked about the same people but answered elsewhere.
UNRELATED = 0.5
BUCKETS = (0.0, 0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 0.6, 1.0)  # the reliability tables' score buckets
_EPSILON = 1e-4  # the isotonic probability is clipped this far from 0 and 1 before its logit
HITS = 10  # the search's default limit: the hits the score's reliability is read on


def session_of(event_id: str) -> int | None:
    """A LoCoMo turn's session ("D3:12" -> 3); None for anything else."""
    head = event_id.split(":", 1)[0]
    return int(head[1:]) if head.startswith("D") and head[1:].isdigit() else None


def worlds(sessions: Sequence[int]) -> Iterator[frozenset[int]]:
    """The small worlds of a conversation: every run of `SESSIONS` consecutive sessions, not overlapping."""
    ordered = sorted(sessions)
    for size in SESSIONS:
        for start in range(0, len(ordered) - size + 1, size):
            yield frozenset(ordered[start:start + size])


def asked(questions: Sequence[tuple[int, frozenset[int]]], world: frozenset[int],
          rng: random.Random) -> list[tuple[int, bool]]:
    """The questions (index, answerable) a small world is asked: those whose evidence sessions are all in it,
    and one for every two of them drawn from those whose evidence is all outside it."""
    inside = [i for i, s in questions if s and s <= world]
    outside = [i for i, s in questions if s and not s & world]
    drawn = rng.sample(outside, min(math.ceil(len(inside) * UNRELATED), len(outside)))
    return [(i, True) for i in inside] + [(i, False) for i in drawn]


def _in_world(doc: IndexDocument, world: frozenset[int]) -> bool:
    if doc.kind == "entity":
        return True
    sources = [doc.doc_id] if doc.kind == "event" else list(doc.event_ids)
    sessions = [session_of(e) for e in sources]
    return bool(sessions) and all(s in world for s in sessions)


def _key_in_world(k: Key, docs: dict[Key, IndexDocument], world: frozenset[int]) -> bool:
    if k in docs:
        return _in_world(docs[k], world)
    kind, _, doc_id = k.partition(":")
    return kind == "event" and session_of(doc_id) in world  # a turn the brains found beyond the pool


def cut(sample: Sample, world: frozenset[int]) -> Sample | None:
    """The sample as the small world's search would have ranked it: its documents only, ranked again."""
    r = sample.inputs
    if r is None:
        raise ValueError("the sample was recorded without the ranking's inputs")
    docs = {k: d for k, d in sample.docs.items() if _in_world(d, world)}
    if not docs:
        return None
    keys = [k for k in sample.keys if k in docs]
    rankings = {b: [k for k in ranked if _key_in_world(k, sample.docs, world)] for b, ranked in r.rankings.items()}
    neighbours = {k: [m for m in near if m in docs] for k, near in r.neighbours.items() if k in docs}
    q, h = r.query, r.heuristics
    scored = fuse(rankings, r.weights, r.keyword_scores, r.similarity, docs, neighbours, q.entities, r.now, h,
                  speakers=q.speakers, windows=q.windows)
    columns = features(keys, rankings, scored, r.keyword_scores, r.similarity, docs, neighbours, q, r.now, h)
    absolute = evidence.columns(keys, rankings, r.similarity, docs, q.terms, q.entities)
    return Sample(keys, columns, scored, docs, absolute, None)


def logit(p: np.ndarray) -> np.ndarray:
    """log(p / (1 - p)), p clipped into (0, 1) as the search clips it."""
    p = np.clip(p, _EPSILON, 1.0 - _EPSILON)
    return np.asarray(np.log(p / (1.0 - p)))


def design(isotonic: np.ndarray, candidates: np.ndarray) -> np.ndarray:
    """The pool map's inputs (`ranker.PoolMap`): the isotonic probability's logit, the pool's log size, their
    product."""
    size = np.log1p(candidates)
    return np.column_stack([logit(isotonic), size, logit(isotonic) * size])


def fit(isotonic: np.ndarray, candidates: np.ndarray, labels: np.ndarray) -> PoolMap:
    """The logistic pool map fitted on candidates of pools of every size (`candidates`: each one's pool size)."""
    from scipy.optimize import minimize

    x = np.column_stack([design(isotonic, candidates), np.ones(len(labels))])

    def loss(w: np.ndarray) -> tuple[float, np.ndarray]:
        z = x @ w
        p = 1.0 / (1.0 + np.exp(-z))
        return float(np.sum(np.logaddexp(0.0, z) - labels * z)), x.T @ (p - labels)

    w = minimize(loss, np.array([1.0, 0.0, 0.0, 0.0]), jac=True, method="L-BFGS-B").x
    return PoolMap(float(w[0]), float(w[1]), float(w[2]), float(w[3]))


def reliability(scores: np.ndarray, labels: np.ndarray) -> list[dict[str, float]]:
    """Score bucket -> candidates, mean score, share relevant: a calibrated score has the two close."""
    rows = []
    for lo, hi in pairwise(BUCKETS):
        inside = (scores >= lo) & ((scores < hi) | (hi == BUCKETS[-1]))
        if inside.any():
            rows.append({"from": lo, "to": hi, "candidates": int(inside.sum()),
                         "mean_score": round(float(scores[inside].mean()), 4),
                         "share_relevant": round(float(labels[inside].mean()), 4)})
    return rows


def expected_error(scores: np.ndarray, labels: np.ndarray) -> float:
    """The expected calibration error over the reliability buckets: |mean score - share relevant|, weighted
    by the bucket's share of candidates."""
    rows = reliability(scores, labels)
    total = sum(r["candidates"] for r in rows)
    return round(sum(r["candidates"] * abs(r["mean_score"] - r["share_relevant"]) for r in rows) / total, 5) \
        if total else math.nan


@dataclass(frozen=True)
class Pool:
    """One question's candidates in one world, out of fold: raw scores and labels."""

    conversation: str
    kind: str  # "full", "1 session", "3 sessions"
    raw: np.ndarray
    labels: np.ndarray


def pooled(isotonic: dict[str, list[float]], pools: Sequence[Pool]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every pool's candidates: isotonic probability, pool size, label."""
    probability = np.concatenate([np.interp(p.raw, isotonic["x"], isotonic["y"]) for p in pools])
    size = np.concatenate([np.full(len(p.raw), len(p.raw)) for p in pools])
    return np.clip(probability, 0.0, 1.0), size, np.concatenate([p.labels for p in pools])


def pool_reliability(isotonic: dict[str, list[float]], pools: Sequence[Pool]) -> dict[str, Any]:
    """By pool kind: the reliability of the search's hits (each pool's first HITS) and the expected calibration
    error of hits and of every candidate, with the isotonic map alone ("before") and with the pool map fitted
    on the other conversations' pools ("after", out of fold like the raw scores)."""
    maps = {c: fit(*pooled(isotonic, [p for p in pools if p.conversation != c]))
            for c in dict.fromkeys(p.conversation for p in pools)}
    out: dict[str, Any] = {}
    for kind in dict.fromkeys(p.kind for p in pools):
        mine = [p for p in pools if p.kind == kind]
        top = [np.argsort(-p.raw, kind="stable")[:HITS] for p in mine]
        before = [np.clip(np.interp(p.raw, isotonic["x"], isotonic["y"]), 0.0, 1.0) for p in mine]
        after = [maps[p.conversation].probability(b, len(b)) for p, b in zip(mine, before, strict=True)]
        labels = np.concatenate([p.labels for p in mine])
        hit_labels = np.concatenate([p.labels[t] for p, t in zip(mine, top, strict=True)])
        row: dict[str, Any] = {"pools": len(mine), "median_candidates": int(np.median([len(p.raw) for p in mine]))}
        for name, scores in (("before", before), ("after", after)):
            hits = np.concatenate([s[t] for s, t in zip(scores, top, strict=True)])
            row[name] = {"ece_hits": expected_error(hits, hit_labels),
                         "ece_candidates": expected_error(np.concatenate(scores), labels),
                         "hits": reliability(hits, hit_labels)}
        out[kind] = row
    return out
