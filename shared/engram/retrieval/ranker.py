"""The learned ranker (pure): the fused candidates' features (see `features`) scored by a LightGBM lambdarank
model trained on LoCoMo's development conversations (`engram bench train-ranker`), then mapped to the
probability that the candidate is relevant, so a score means the same in every query and every world size:
an isotonic map of the raw score fitted on out-of-fold predictions in LoCoMo's pools (about 350 candidates),
then a logistic one of that and the pool's size, fitted on pools of every size (`bench.calibration`: a
session or a few of a conversation, as small worlds), since the trees read ranks and z-scores within the pool
and a raw score means more among twenty candidates than among hundreds. The model ships as `ranker.json`
(LightGBM's `dump_model()`, trimmed to the trees) and is walked here with numpy: LightGBM is needed to train it,
never to search.

A world chooses it with `retrieval.ranker` ("learned", the default, or "fusion": the hand-tuned fusion alone).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from importlib import resources
from typing import Any

import numpy as np

from engram.model.heuristics import Heuristics
from engram.model.search import IndexDocument
from engram.retrieval import evidence
from engram.retrieval.evidence import Evidence
from engram.retrieval.features import Query, features
from engram.retrieval.fusion import Key, Scored, fuse

MODEL_FILE = "ranker.json"
_ZERO = 1e-35  # LightGBM's kZeroThreshold: what counts as zero for a "Zero" missing type
_MISSING = {"None": 0, "Zero": 1, "NaN": 2}
_EPSILON = 1e-4  # the isotonic probability is kept this far from 0 and 1 before its logit
_MIN_SLOPE = 0.01  # the pool map's slope on the isotonic logit, at least: the order stays the trees'


@dataclass(frozen=True)
class Sample:
    """One query's candidates as the ranker saw them (for training): keys, feature columns, fusion's scores."""

    keys: list[Key]
    columns: dict[str, list[float]]
    scored: dict[Key, Scored]
    docs: dict[Key, IndexDocument]
    evidence: dict[str, list[float]]  # the evidence columns (`evidence.COLUMNS`): what its map is fitted on
    inputs: Ranked | None = None  # what `rank` was given: a smaller world's pool is ranked again from it


@dataclass(frozen=True)
class Ranked:
    """What `rank` read besides the documents (for training: a part of the pool is scored again from it)."""

    rankings: Mapping[str, list[Key]]
    weights: Mapping[str, float]
    keyword_scores: Mapping[Key, float]
    similarity: Mapping[Key, float]
    neighbours: Mapping[Key, Sequence[Key]]
    query: Query
    now: datetime
    heuristics: Heuristics


_RECORDER: ContextVar[Callable[[Sample], None] | None] = ContextVar("engram_ranker_recorder", default=None)


@contextmanager
def recording() -> Iterator[list[Sample]]:
    """Every search in this context hands its candidates' features to the list yielded (the training data)."""
    samples: list[Sample] = []
    token = _RECORDER.set(samples.append)
    try:
        yield samples
    finally:
        _RECORDER.reset(token)


class Model:
    """A LightGBM tree ensemble (the trimmed `dump_model()` JSON) walked with numpy, all trees at once, the
    isotonic map from its raw score to a probability, the pool's map (`PoolMap`; None: the isotonic alone) and
    the evidence's map (None in a file without one)."""

    def __init__(self, document: Mapping[str, Any]) -> None:
        self.feature_names: list[str] = list(document["feature_names"])
        self.evidence = Evidence.read(document.get("evidence"))
        calibration = document.get("calibration") or {"x": [0.0], "y": [0.0]}
        self.calibration_x = np.asarray(calibration["x"], dtype=np.float64)
        self.calibration_y = np.asarray(calibration["y"], dtype=np.float64)
        self.pool = PoolMap.read(calibration.get("pool"))
        feature: list[int] = []
        threshold: list[float] = []
        default_left: list[bool] = []
        missing: list[int] = []
        left: list[int] = []
        right: list[int] = []
        value: list[float] = []
        roots: list[int] = []
        depth = 0

        def add(node: Mapping[str, Any], level: int) -> int:
            nonlocal depth
            at = len(feature)
            feature.append(-1)
            threshold.append(0.0)
            default_left.append(False)
            missing.append(0)
            left.append(at)
            right.append(at)
            value.append(float(node.get("leaf_value", 0.0)))
            if "split_feature" in node:
                if node.get("decision_type", "<=") != "<=":
                    raise ValueError(f"unsupported split {node.get('decision_type')!r}: numerical splits only")
                feature[at] = int(node["split_feature"])
                threshold[at] = float(node["threshold"])
                default_left[at] = bool(node.get("default_left", True))
                missing[at] = _MISSING[str(node.get("missing_type", "None"))]
                left[at] = add(node["left_child"], level + 1)
                right[at] = add(node["right_child"], level + 1)
            depth = max(depth, level)
            return at

        for tree in document["tree_info"]:
            roots.append(add(tree["tree_structure"], 0))
        self.feature = np.asarray(feature, dtype=np.int32)
        self.threshold = np.asarray(threshold, dtype=np.float64)
        self.default_left = np.asarray(default_left, dtype=bool)
        self.missing = np.asarray(missing, dtype=np.int8)
        self.left = np.asarray(left, dtype=np.int32)
        self.right = np.asarray(right, dtype=np.int32)
        self.value = np.asarray(value, dtype=np.float64)
        self.roots = np.asarray(roots, dtype=np.int32)
        self.depth = depth
        # The features some tree splits on: the only columns a search needs to build (the others are never read).
        self.used = frozenset(self.feature_names[f] for f in set(feature) if f >= 0)

    def matrix(self, columns: Mapping[str, Sequence[float]], rows: int) -> np.ndarray:
        """The model's features in its order; a feature the search did not give (a brain absent) is 0, and so is
        one no tree reads."""
        x = np.zeros((rows, len(self.feature_names)), dtype=np.float64)
        for j, name in enumerate(self.feature_names):
            if name in self.used and (values := columns.get(name)) is not None:
                x[:, j] = values
        return x

    def raw(self, x: np.ndarray) -> np.ndarray:
        """The ensemble's raw scores (LightGBM's `predict(raw_score=True)`), one per row of `x`."""
        rows = x.shape[0]
        if rows == 0 or len(self.roots) == 0:
            return np.zeros(rows)
        at = np.broadcast_to(self.roots, (rows, len(self.roots)))
        plain = not self.missing.any()  # no split with a missing type: NaN is 0, one comparison decides
        x = np.nan_to_num(x, nan=0.0) if plain and np.isnan(x).any() else x
        flat = np.ascontiguousarray(x).ravel()
        start = (np.arange(rows, dtype=np.int32) * x.shape[1])[:, None]
        for _ in range(self.depth):
            # A leaf is its own child both ways (its feature, -1, reads a value it ignores): it stays put.
            v = flat[start + self.feature[at]]
            if plain:
                go_left = v <= self.threshold[at]
            else:
                kind = self.missing[at]
                nan = np.isnan(v)
                v = np.where(nan & (kind != 2), 0.0, v)  # NaN is 0 unless NaN is the missing value
                by_default = ((kind == 1) & (np.abs(v) <= _ZERO)) | ((kind == 2) & nan)
                go_left = np.where(by_default, self.default_left[at], v <= self.threshold[at])
            at = np.where(go_left, self.left[at], self.right[at])
        return self.value[at].sum(axis=1)

    def probability(self, raw: np.ndarray, candidates: int | None = None) -> np.ndarray:
        """The calibrated probability of relevance for raw scores of one pool of `candidates` (monotone in the
        raw score, 0..1); without a pool size (or a pool map), the isotonic map alone."""
        isotonic = np.clip(np.interp(raw, self.calibration_x, self.calibration_y), 0.0, 1.0)
        if self.pool is None or candidates is None:
            return isotonic
        return self.pool.probability(isotonic, candidates)


@dataclass(frozen=True)
class PoolMap:
    """The logistic map from the isotonic probability and the pool's size to the probability of relevance:
    `logit p = (slope + slope_by_size * log(1 + n)) * logit(isotonic) + by_size * log(1 + n) + bias`."""

    slope: float
    by_size: float
    slope_by_size: float
    bias: float

    @classmethod
    def read(cls, document: Mapping[str, Any] | None) -> PoolMap | None:
        """The map as `ranker.json` keeps it (`{"weights": [slope, by_size, slope_by_size], "bias": b}`)."""
        if not document:
            return None
        slope, by_size, slope_by_size = (float(w) for w in document["weights"])
        return cls(slope, by_size, slope_by_size, float(document["bias"]))

    def document(self) -> dict[str, Any]:
        """The map as `ranker.json` keeps it."""
        return {"inputs": ["isotonic_logit", "log1p_candidates", "isotonic_logit*log1p_candidates"],
                "weights": [round(self.slope, 6), round(self.by_size, 6), round(self.slope_by_size, 6)],
                "bias": round(self.bias, 6)}

    def probability(self, isotonic: np.ndarray, candidates: int) -> np.ndarray:
        """The probability of relevance of isotonic probabilities in a pool of `candidates`."""
        size = math.log1p(max(candidates, 0))
        p = np.clip(isotonic, _EPSILON, 1.0 - _EPSILON)
        slope = max(self.slope + self.slope_by_size * size, _MIN_SLOPE)
        z = slope * np.log(p / (1.0 - p)) + self.by_size * size + self.bias
        return np.asarray(1.0 / (1.0 + np.exp(-z)))


@cache
def shipped() -> Model:
    """The model in the package (read once per process)."""
    text = resources.files("engram.retrieval").joinpath(MODEL_FILE).read_text(encoding="utf-8")
    return Model(json.loads(text))


def rank(rankings: Mapping[str, list[Key]], weights: Mapping[str, float], keyword_scores: Mapping[Key, float],
         similarity: Mapping[Key, float], docs: Mapping[Key, IndexDocument],
         neighbours: Mapping[Key, Sequence[Key]], query: Query, now: datetime, h: Heuristics,
         model: Model | None = None) -> dict[Key, Scored]:
    """Scores for every candidate in `docs`: the hand-tuned fusion's, or (`retrieval.ranker` "learned") the
    learned model's probability of relevance, fusion's parts kept for the explanation."""
    scored = fuse(rankings, weights, keyword_scores, similarity, docs, neighbours, query.entities, now, h,
                  speakers=query.speakers, windows=query.windows)
    recorder = _RECORDER.get()
    if not scored or (h.retrieval.ranker == "fusion" and recorder is None):
        return scored
    keys = list(scored)
    model = model or shipped()
    # Training records every feature; a search builds only those the model's trees read.
    columns = features(keys, rankings, scored, keyword_scores, similarity, docs, neighbours, query, now, h,
                       wanted=None if recorder is not None else model.used)
    if recorder is not None:
        recorder(Sample(keys, columns, scored, dict(docs), evidence.columns(
            keys, rankings, similarity, docs, query.terms, query.entities),
            Ranked(rankings, weights, keyword_scores, similarity, neighbours, query, now, h)))
    if h.retrieval.ranker == "fusion":
        return scored
    raw = model.raw(model.matrix(columns, len(keys)))
    probability = model.probability(raw, len(keys))
    # Best raw score first: where the calibration is flat (its ends), the order is still the model's.
    out = {}
    for i in np.argsort(-raw, kind="stable").tolist():
        s = scored[keys[i]]
        out[keys[i]] = Scored(s.rrf, s.match, s.signal, s.base, float(probability[i]), s.context)
    return out


def relevant(scored: Mapping[Key, Scored], h: Heuristics, best_evidence: float = 1.0) -> list[Key]:
    """The candidates at or above the relevance floor (`search_min_relevance`), best first; none when the
    question's best evidence (`evidence.best`) is under `search_min_evidence`. The relevance floor is the
    ranker's probability: it holds for the learned ranker only (fusion's scores mean nothing across queries);
    the evidence floor holds for both. Equal scores keep the order of `scored`."""
    if best_evidence < h.retrieval.search_min_evidence:
        return []
    floor = h.retrieval.search_min_relevance if h.retrieval.ranker == "learned" else -math.inf
    return sorted((k for k, s in scored.items() if s.score >= floor), key=lambda k: scored[k].score, reverse=True)
