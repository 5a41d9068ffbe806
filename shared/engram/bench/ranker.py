"""`engram bench train-ranker`: the learned ranker trained on LoCoMo, cross-validated by conversation.

Every question of categories 1 to 4 is searched once with the hand-tuned fusion, and each candidate's
features are kept (`retrieval.ranker.recording`), labelled relevant when it is an evidence turn or stands for
them (a fact or summary at least half of whose source turns are evidence). Then leave one conversation out: a LightGBM lambdarank
model trained on the other conversations ranks the held-out one's candidates, and Recall@10 (overall and by
category) is measured on the events the ranking stands for, next to the hand-tuned fusion's ranking of the
same candidates. The out-of-fold predictions fit the isotonic map from raw score to probability of relevance,
and, with those of LoCoMo's small worlds (`bench.calibration`: a session or three of a conversation, each
question's candidates cut to them and ranked again), the pool map that makes the score mean the same in a
world of twenty turns (reliability tables by pool, before and after, with their expected calibration error);
the evidence's logistic map (`retrieval.evidence`: absolute columns only, the question's floor) is fitted on the
same conversations as the model, and both are reported by leave-one-conversation-out reliability (score bucket:
mean score, share relevant) with the questions the default evidence floor would leave with nothing.
The shipped model is trained on the conversations not held out (`--held-out`, as `bench retrieval` reports
them apart: its held-out rows stay unseen) and written, trimmed, where the search reads it.

LightGBM is a development dependency (the `dev` extra): it has no wheel for the Lambda's architecture, and the
search walks the trees itself (`retrieval.ranker.Model`).
"""

from __future__ import annotations

import json
import random
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from engram.bench import calibration, losses, metrics
from engram.bench.calibration import HITS, Pool, pool_reliability, pooled, reliability
from engram.bench.locomo import CATEGORIES, Conversation, load, world_of
from engram.bench.progress import ConsoleProgress, Progress
from engram.bench.retrieval import DEPTH, HELD_OUT, _data_dir, _fingerprint, _ingest_all
from engram.model.heuristics import DEFAULT_HEURISTICS
from engram.retrieval.evidence import COLUMNS, Evidence
from engram.retrieval.ranker import MODEL_FILE, Sample, recording

# Small and shallow, leaves of many examples: few parameters to fit, so what it learns carries over.
PARAMS: dict[str, Any] = {
    "objective": "lambdarank", "metric": "ndcg", "eval_at": [10], "lambdarank_truncation_level": 20,
    "learning_rate": 0.125, "num_leaves": 8, "max_depth": 3, "min_data_in_leaf": 200, "feature_fraction": 0.8,
    "bagging_fraction": 0.8, "bagging_freq": 1, "lambda_l2": 10.0, "verbose": -1, "num_threads": 1,
    "deterministic": True, "seed": 7,
}
ROUNDS = 60  # 150 rounds at 0.05 gave the same CV Recall@10 (0.809 against 0.807) at 2.5 times the walk
_SEED = 20  # the draw of the questions a small world cannot answer
# LightGBM seeds the cross-validation is repeated with (its bagging and feature sampling draw from them): how far
# the figure moves with the draw alone, which a change to the ranking must clear to be more than chance
SEEDS = (7, 1, 2)


@dataclass
class Question:
    """One question's candidates: features, labels, the events each stands for, fusion's scores."""

    sample_id: str
    category: str
    evidence: tuple[str, ...]
    names: list[str]
    x: np.ndarray
    labels: np.ndarray
    events: list[list[str]]
    fusion: np.ndarray
    absolute: np.ndarray  # the evidence columns (`retrieval.evidence.COLUMNS`), one row per candidate
    pool: str = "full"  # the world searched: "full" (the conversation) or a small one ("1 session", "3 sessions")


def run(dataset: Path, out_dir: Path, *, cache_dir: Path | None = None, model_path: Path | None = None,
        held_out: Sequence[str] = HELD_OUT, embedder: str = "minilm", seeds: Sequence[int] = SEEDS,
        progress: Progress | None = None) -> dict[str, Any]:
    """Collect, cross-validate, fit the calibration, train and write the model (`model_path`, by default the
    package's) and `out_dir/ranker.json` (the cross-validated figures); returns that report."""
    progress = progress or ConsoleProgress()
    conversations = load(dataset)
    with _data_dir(cache_dir, _fingerprint(dataset, embedder)) as data_dir:
        from engram.bench.stack import embedded_clients

        with embedded_clients(data_dir, embedder=embedder) as clients:
            _ingest_all(clients, data_dir, conversations, progress)
            questions = collect(clients, conversations, progress)
    report, model = train(questions, [c.sample_id for c in conversations], held_out)
    if seeds:
        report["seeds"] = seed_spread(questions, [c.sample_id for c in conversations], seeds)
    report["dataset"] = dataset.name
    target = model_path or Path(__file__).resolve().parent.parent / "retrieval" / MODEL_FILE
    target.write_text(json.dumps(model, separators=(",", ":")) + "\n")
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "ranker.json").write_text(json.dumps(report, indent=2))
    report["model_path"] = str(target)
    return report


def collect(clients: Any, conversations: list[Conversation], progress: Progress) -> list[Question]:
    """Every question searched with the hand-tuned fusion, its candidates' features recorded; then in the
    small worlds it is asked (`calibration.asked`), its candidates cut to them (pool "1 session"...)."""
    from engram.retrieval.search import search

    out: list[Question] = []
    rng = random.Random(_SEED)
    with progress.bar("searching and recording features", sum(len(c.questions) for c in conversations)) as advance:
        for conv in conversations:
            world = clients.world(world_of(conv))
            world = replace(world, heuristics=world.heuristics.with_overrides({"ranker": "fusion"}))
            known = {t.dia_id for t in conv.turns}
            small = _small_worlds(conv, rng)
            for n, q in enumerate(conv.questions):
                with recording() as samples:
                    search(clients, world, q.question, user_id=None, limit=DEPTH)
                sample = samples[-1] if samples else None
                out.append(_question(conv.sample_id, q.category, q.evidence, sample, known))
                for sessions, answerable in small.get(n, []):
                    cut = calibration.cut(sample, sessions) if sample else None
                    if cut is not None:
                        out.append(replace(_question(conv.sample_id, q.category, q.evidence if answerable else (),
                                                     cut, known), pool=f"{len(sessions)} session"
                                           + ("s" if len(sessions) > 1 else "")))
                advance(1)
    return out


def _small_worlds(conv: Conversation, rng: random.Random) -> dict[int, list[tuple[frozenset[int], bool]]]:
    """Each question's small worlds (its index: the sessions, whether they hold its evidence)."""
    sessions = sorted({s for s in (calibration.session_of(t.dia_id) for t in conv.turns) if s is not None})
    asked = [(n, frozenset(s for s in (calibration.session_of(e) for e in q.evidence) if s is not None))
             for n, q in enumerate(conv.questions)]
    out: dict[int, list[tuple[frozenset[int], bool]]] = {}
    for world in calibration.worlds(sessions):
        for n, answerable in calibration.asked(asked, world, rng):
            out.setdefault(n, []).append((world, answerable))
    return out


def _question(sample_id: str, category: str, evidence: tuple[str, ...], sample: Sample | None,
              known: set[str]) -> Question:
    if sample is None:
        return Question(sample_id, category, evidence, [], np.zeros((0, 0)), np.zeros(0), [], np.zeros(0),
                        np.zeros((0, len(COLUMNS))))
    names = sorted(sample.columns)
    x = np.asarray([sample.columns[n] for n in names], dtype=np.float64).T
    events = [[e for e in ([d.doc_id] if d.kind == "event" else d.event_ids) if e in known]
              for d in (sample.docs[k] for k in sample.keys)]
    wanted = set(evidence)
    # Relevant when at least half the events it stands for are evidence: an episode of ten turns, one of them the
    # answer, ranked first would push nine others into the top ten.
    labels = np.asarray([1.0 if e and 2 * len(wanted.intersection(e)) >= len(e) else 0.0 for e in events])
    fusion = np.asarray([sample.scored[k].score for k in sample.keys])
    columns = np.asarray([sample.evidence[c] for c in COLUMNS], dtype=np.float64).T.reshape(-1, len(COLUMNS))
    return Question(sample_id, category, evidence, names, x, labels, events, fusion, columns)


def ranked_events(question: Question, scores: np.ndarray) -> list[str]:
    """The events the candidates stand for, best score first, each once, the first DEPTH."""
    seen: dict[str, None] = {}
    for i in np.argsort(-scores, kind="stable"):
        for e in question.events[i]:
            seen.setdefault(e, None)
    return list(seen)[:DEPTH]


def train(questions: list[Question], conversations: list[str], held_out: Sequence[str],
          params: dict[str, Any] | None = None, rounds: int = ROUNDS) -> tuple[dict[str, Any], dict[str, Any]]:
    """Leave-one-conversation-out figures (learned next to fusion), then the shipped model (trained on the
    conversations not in `held_out`) with the calibration fitted on the out-of-fold predictions."""
    import lightgbm as lgb
    from scipy.optimize import isotonic_regression

    params = {**PARAMS, **(params or {})}
    small = [q for q in questions if q.pool != "full"]
    questions = [q for q in questions if q.pool == "full"]
    names = _names(questions)
    aligned = [_aligned(q, names) for q in questions]
    small_raw: list[np.ndarray] = [np.zeros(0)] * len(small)
    folds, oof_raw, oof_labels, oof_evidence, oof_ranked = [], [], [], [], {}
    scored: dict[str, list[tuple[str, dict[str, float]]]] = {"learned": [], "fusion": []}
    for conv in conversations:
        train_q = [i for i, q in enumerate(questions) if q.sample_id != conv]
        test_q = [i for i, q in enumerate(questions) if q.sample_id == conv]
        booster = _fit(lgb, [questions[i] for i in train_q], [aligned[i] for i in train_q], names, params, rounds)
        evidence = fit_evidence([questions[i] for i in train_q])
        rows: dict[str, list[tuple[str, dict[str, float]]]] = {"learned": [], "fusion": []}
        for i in test_q:
            q = questions[i]
            raw = booster.predict(aligned[i], raw_score=True) if len(q.labels) else np.zeros(0)
            oof_raw.append(raw)
            oof_labels.append(q.labels)
            oof_evidence.append(_evidence(evidence, q))
            oof_ranked[i] = ranked_events(q, raw)
            rows["learned"].append((q.category, metrics.scores(oof_ranked[i], q.evidence)))
            rows["fusion"].append((q.category, metrics.scores(ranked_events(q, q.fusion), q.evidence)))
        for i, q in enumerate(small):
            if q.sample_id == conv and len(q.labels):
                small_raw[i] = booster.predict(_aligned(q, names), raw_score=True)
        folds.append({"held_out": conv, "questions": len(test_q), **{s: _summary(r) for s, r in rows.items()}})
        for system in scored:
            scored[system] += rows[system]
    raw_all, labels_all = np.concatenate(oof_raw), np.concatenate(oof_labels)
    isotonic = _calibration(isotonic_regression, raw_all, labels_all)
    pools = [Pool(q.sample_id, q.pool, raw, q.labels)
             for q, raw in zip([*questions, *small], [*oof_raw, *small_raw], strict=True) if len(q.labels)]
    pool_map = calibration.fit(*pooled(isotonic, pools))
    fit_on = [i for i, q in enumerate(questions) if q.sample_id not in held_out] or list(range(len(questions)))
    booster = _fit(lgb, [questions[i] for i in fit_on], [aligned[i] for i in fit_on], names, params, rounds)
    model = trimmed(booster.dump_model(), {**isotonic, "pool": pool_map.document()})
    model["evidence"] = fit_evidence([questions[i] for i in fit_on]).document()
    model["trained_on"] = sorted({questions[i].sample_id for i in fit_on})
    probability = np.clip(np.interp(raw_all, isotonic["x"], isotonic["y"]), 0.0, 1.0)
    report = {
        "cv": {system: _summary(rows) for system, rows in scored.items()}, "folds": folds,
        "trained_on": model["trained_on"], "params": params, "rounds": rounds, "features": len(names),
        "importance": dict(sorted(zip(names, booster.feature_importance("gain").round(1).tolist(), strict=True),
                                  key=lambda kv: -kv[1])[:20]),
        "calibration_points": len(isotonic["x"]), "pool_map": model["calibration"]["pool"],
        "base_rate": round(float(labels_all.mean()), 5),
        "evidence": model["evidence"],
        "reliability": {"ranker": reliability(probability, labels_all),
                        "evidence": reliability(np.concatenate(oof_evidence), labels_all)},
        "pools": pool_reliability(isotonic, pools),
        "nothing_relevant": _floored(questions, oof_raw, oof_evidence),
        "losses": losses.losses(questions, [oof_ranked.get(i, []) for i in range(len(questions))]),
    }
    return report, model


def seed_spread(questions: list[Question], conversations: list[str], seeds: Sequence[int],
                params: dict[str, Any] | None = None, rounds: int = ROUNDS) -> dict[str, Any]:
    """The learned ranker's leave-one-conversation-out Recall@10 with each LightGBM seed: each seed's figure
    (overall and by category) and, per figure, the lowest, the mean and the highest over the seeds."""
    import lightgbm as lgb

    questions = [q for q in questions if q.pool == "full"]
    names = _names(questions)
    aligned = [_aligned(q, names) for q in questions]
    runs: dict[str, dict[str, float]] = {}
    for seed in seeds:
        rows: list[tuple[str, dict[str, float]]] = []
        for conv in conversations:
            train_q = [i for i, q in enumerate(questions) if q.sample_id != conv]
            booster = _fit(lgb, [questions[i] for i in train_q], [aligned[i] for i in train_q], names,
                           {**PARAMS, **(params or {}), "seed": seed}, rounds)
            rows += [(q.category, metrics.scores(ranked_events(q, booster.predict(aligned[i], raw_score=True)
                                                               if len(q.labels) else np.zeros(0)), q.evidence))
                     for i, q in enumerate(questions) if q.sample_id == conv]
        summary = _summary(rows)
        runs[str(seed)] = {"overall": summary["overall"]["recall@10"],
                           **{c: m["recall@10"] for c, m in summary["by_category"].items()}}
    figures = list(next(iter(runs.values()), {}))
    spread = {}
    for figure in figures:
        values = [r[figure] for r in runs.values()]
        spread[figure] = {"min": min(values), "mean": round(statistics.fmean(values), 4), "max": max(values)}
    return {"seeds": list(seeds), "recall_at_10": runs, "spread": spread}


def fit_evidence(questions: Sequence[Question]) -> Evidence:
    """The evidence's logistic map fitted on the questions' candidates (L2 of 1 on the weights: 4 of them, under
    a million candidates, so it barely matters but keeps an unseen column finite)."""
    from scipy.optimize import minimize

    x = np.vstack([q.absolute for q in questions if len(q.labels)])
    y = np.concatenate([q.labels for q in questions if len(q.labels)])
    design = np.column_stack([x, np.ones(len(x))])

    def loss(w: np.ndarray) -> tuple[float, np.ndarray]:
        z = design @ w
        p = 1.0 / (1.0 + np.exp(-z))
        penalty = np.append(w[:-1], 0.0)
        return float(np.sum(np.logaddexp(0.0, z) - y * z) + 0.5 * penalty @ penalty), design.T @ (p - y) + penalty

    w = minimize(loss, np.zeros(design.shape[1]), jac=True, method="L-BFGS-B").x
    return Evidence(tuple(float(v) for v in w[:-1]), float(w[-1]))


def _evidence(evidence: Evidence, q: Question) -> np.ndarray:
    return evidence.probability({c: q.absolute[:, j].tolist() for j, c in enumerate(COLUMNS)})


def _floored(questions: list[Question], raw: list[np.ndarray], evidence: list[np.ndarray]) -> dict[str, Any]:
    """The questions whose best out-of-fold evidence is under the default floor (search says nothing relevant),
    and the Recall@10 of the learned ranking they lose."""
    floor = DEFAULT_HEURISTICS.retrieval.search_min_evidence
    lost = [(q.sample_id, metrics.scores(ranked_events(q, r), q.evidence)["recall@10"])
            for q, r, e in zip(questions, raw, evidence, strict=True) if len(q.labels) and float(e.max()) < floor]
    return {"floor": floor, "questions": len(lost), "recall_at_10_lost": round(sum(r for _c, r in lost), 3),
            "by_conversation": {c: sum(1 for s, _r in lost if s == c) for c in sorted({s for s, _r in lost})}}


def _names(questions: list[Question]) -> list[str]:
    return sorted({n for q in questions for n in q.names})


def _aligned(q: Question, names: list[str]) -> np.ndarray:
    out = np.zeros((len(q.labels), len(names)))
    where = {n: j for j, n in enumerate(q.names)}
    for j, n in enumerate(names):
        if n in where:
            out[:, j] = q.x[:, where[n]]
    return out


def _fit(lgb: Any, questions: list[Question], xs: list[np.ndarray], names: list[str], params: dict[str, Any],
         rounds: int) -> Any:
    keep = [i for i, q in enumerate(questions) if len(q.labels)]
    data = lgb.Dataset(np.vstack([xs[i] for i in keep]), np.concatenate([questions[i].labels for i in keep]),
                       group=[len(questions[i].labels) for i in keep], feature_name=names, free_raw_data=False)
    return lgb.train(params, data, num_boost_round=rounds)


def _calibration(isotonic: Any, raw: np.ndarray, labels: np.ndarray) -> dict[str, list[float]]:
    """The isotonic fit's blocks as points (mean raw score, share relevant): interpolated between, monotone."""
    order = np.argsort(raw, kind="stable")
    x, y = raw[order], labels[order]
    fitted = isotonic(y).x
    points_x, points_y = [], []
    start = 0
    for end in range(1, len(fitted) + 1):
        if end == len(fitted) or fitted[end] != fitted[start]:
            points_x.append(round(float(x[start:end].mean()), 6))
            points_y.append(round(float(fitted[start]), 6))
            start = end
    return {"x": points_x, "y": points_y}


def trimmed(dump: dict[str, Any], calibration: dict[str, Any]) -> dict[str, Any]:
    """LightGBM's `dump_model()` cut to what the tree walker reads, and the calibration."""
    keep = ("split_feature", "threshold", "decision_type", "default_left", "missing_type", "leaf_value")

    defaults = {"decision_type": "<=", "missing_type": "None"}  # the walker's defaults: left out

    def node(n: dict[str, Any]) -> dict[str, Any]:
        out = {k: n[k] for k in keep if k in n and defaults.get(k) != n[k]}
        if out.get("missing_type", "None") == "None":
            out.pop("default_left", None)  # read only for a missing value
        if "left_child" in n:
            out["left_child"], out["right_child"] = node(n["left_child"]), node(n["right_child"])
        return out

    return {"format": "lightgbm dump_model, trimmed", "objective": dump.get("objective"),
            "feature_names": dump["feature_names"],
            "tree_info": [{"tree_structure": node(t["tree_structure"])} for t in dump["tree_info"]],
            "calibration": calibration}


def _summary(rows: list[tuple[str, dict[str, float]]]) -> dict[str, Any]:
    by_category = {name: [s for c, s in rows if c == name] for name in CATEGORIES.values()}
    return {"questions": len(rows), "overall": metrics.mean([s for _c, s in rows]),
            "by_category": {name: metrics.mean(part) for name, part in by_category.items() if part}}


def table(report: dict[str, Any]) -> str:
    """Recall@10 per fold and cross-validated, overall and by category, learned next to fusion."""
    categories = list(CATEGORIES.values())
    lines = [f"learned ranker, leave one conversation out ({report.get('dataset', '')}; shipped model trained on "
             f"{', '.join(report['trained_on'])})",
             f"{'held out':<10} {'system':<8} {'n':>4} {'recall@10':>10} " + " ".join(f"{c:>12}" for c in categories)]
    for fold in [*report["folds"], {"held_out": "all (CV)", "questions": report["cv"]["learned"]["questions"],
                                    **report["cv"]}]:
        for system in ("learned", "fusion"):
            part = fold[system]
            lines.append(f"{fold['held_out']:<10} {system:<8} {fold['questions']:>4} "
                         f"{part['overall']['recall@10']:>10.3f} "
                         + " ".join(f"{part['by_category'][c]['recall@10']:>12.3f}" if c in part["by_category"]
                                    else f"{'-':>12}" for c in categories))
    for name, rows in report.get("reliability", {}).items():
        lines.append(f"reliability of the {name} probability (out of fold): bucket, candidates, mean, share relevant")
        lines += [f"  [{r['from']:.3f}, {r['to']:.3f}) {r['candidates']:>7} {r['mean_score']:>8.4f} "
                  f"{r['share_relevant']:>8.4f}" for r in rows]
    for kind, row in report.get("pools", {}).items():
        lines.append(f"the score's reliability, {kind} pools ({row['pools']}, median {row['median_candidates']} "
                     f"candidates), the search's first {HITS} hits out of fold: bucket, hits, mean, share relevant")
        for name in ("before", "after"):
            part = row[name]
            lines.append(f"  {name} (isotonic{'' if name == 'before' else ' and pool map, out of fold'}): ECE hits "
                         f"{part['ece_hits']:.4f}, every candidate {part['ece_candidates']:.4f}")
            lines += [f"    [{r['from']:.3f}, {r['to']:.3f}) {r['candidates']:>7} {r['mean_score']:>8.4f} "
                      f"{r['share_relevant']:>8.4f}" for r in part["hits"]]
    if "seeds" in report:
        spread = report["seeds"]["spread"]
        lines.append(f"learned, cross-validated Recall@10 over LightGBM seeds {', '.join(map(str, report['seeds']['seeds']))}"
                     ": lowest / mean / highest")
        lines += [f"  {figure:<12} {s['min']:.4f} / {s['mean']:.4f} / {s['max']:.4f}" for figure, s in spread.items()]
    lines += losses.table(report["losses"]) if "losses" in report else []
    if "nothing_relevant" in report:
        floored = report["nothing_relevant"]
        lines.append(f"evidence floor {floored['floor']}: {floored['questions']} questions with nothing relevant, "
                     f"Recall@10 lost {floored['recall_at_10_lost']:.3f} (a question's share)")
    return "\n".join(lines)

