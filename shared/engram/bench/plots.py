"""PNG plots of the benchmarks' JSON documents, written beside them: Recall@k curves and Recall@10 bars of
engram and the baselines (`engram bench retrieval`), latency distributions (`engram bench latency`).

matplotlib is imported here only, when a plot is drawn, and through its object API (a `Figure` saved by
the Agg canvas): no display, no pyplot state, nothing for the Lambda code to import."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

DPI = 100
# One look per system across every plot; engram drawn heavier than the baselines.
STYLES: dict[str, dict[str, Any]] = {
    "engram": {"color": "#d62728", "linewidth": 2.6, "marker": "o"},
    "bm25": {"color": "#1f77b4", "linewidth": 1.6, "marker": "s"},
    "dense": {"color": "#2ca02c", "linewidth": 1.6, "marker": "^"},
    "bm25+dense rrf": {"color": "#7f7f7f", "linewidth": 1.4, "marker": "", "linestyle": "--"},
    "fused search": {"color": "#d62728"},
    "bare pgvector top-10": {"color": "#1f77b4"},
}
RECALL_AT_K = "retrieval-recall-at-k.png"
RECALL_AT_10 = "retrieval-recall-at-10.png"
LATENCY = "latency.png"
GOAL_MS = 30.0  # DESIGN.md: fused search p95 under 30 ms at 100k memories


def retrieval_plots(document: dict[str, Any], out_dir: Path) -> list[Path]:
    """The Recall@k curves (all questions, held-out, each category) and the Recall@10 bars of a
    `retrieval.json` document, as PNG files in `out_dir`; the paths written."""
    out_dir.mkdir(parents=True, exist_ok=True)
    return [_save(_recall_curves(document), out_dir / RECALL_AT_K),
            _save(_recall_bars(document), out_dir / RECALL_AT_10)]


def latency_plots(document: dict[str, Any], out_dir: Path) -> list[Path]:
    """The distribution of every timed query of a `latency.json` document (histogram and CDF per system),
    as a PNG file in `out_dir`; the paths written."""
    out_dir.mkdir(parents=True, exist_ok=True)
    return [_save(_latency(document), out_dir / LATENCY)]


def _figure(width: float, height: float) -> Figure:
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), dpi=DPI, layout="constrained")


def _save(figure: Figure, path: Path) -> Path:
    from io import BytesIO

    from PIL import Image  # matplotlib's own dependency

    drawn = BytesIO()
    figure.savefig(drawn, format="png", dpi=DPI)
    # A plot has few colours: a 256-colour palette keeps it sharp at a third of the size (docs/img is committed).
    Image.open(drawn).convert("RGB").quantize(256).save(path, format="PNG", optimize=True)
    return path


def _style(system: str) -> dict[str, Any]:
    return STYLES.get(system, {"linewidth": 1.4})


def _panels(document: dict[str, Any]) -> list[tuple[str, str | None, str | None]]:
    """(title, split, category) for each panel: every question, the held-out conversations, each category."""
    held_out = [c for c, v in document["conversations"].items() if v["split"] == "held-out"]
    first = next(iter(document["systems"].values()))
    panels: list[tuple[str, str | None, str | None]] = [(f"all questions (n={document['questions']})", None, None)]
    if held_out and "held-out" in first["by_split"]:  # a held-out set without questions has no measures
        n = first["by_split"]["held-out"]["questions"]
        panels.append((f"held-out: {', '.join(held_out)} (n={n})", "held-out", None))
    counts = document.get("questions_by_category", {})
    panels += [(f"{category} (n={counts[category]})" if category in counts else category, None, category)
               for category in first["by_category"]]
    return panels


def _recall_curves(document: dict[str, Any]) -> Figure:
    panels = _panels(document)
    columns = 3
    rows = -(-len(panels) // columns)
    figure = _figure(4.2 * columns, 3.3 * rows)
    axes = figure.subplots(rows, columns, sharey=True, squeeze=False).ravel()
    for ax, (title, split, category) in zip(axes, panels, strict=False):
        for system, result in document["systems"].items():
            part = result if split is None else result["by_split"][split]
            curve = part["recall_at_k"]["all"] if category is None else part["recall_at_k"]["by_category"][category]
            ax.plot(range(1, len(curve) + 1), curve, label=system, markevery=[0, 4, 9, len(curve) - 1],
                    markersize=4, **_style(system))
        _recall_axes(ax, title)
    for ax in axes[len(panels):]:
        ax.set_visible(False)
    axes[0].legend(loc="lower right", fontsize=8)
    figure.suptitle(f"LoCoMo Recall@k ({document['dataset']}): engram's fused search next to the baselines")
    return figure


def _recall_axes(ax: Axes, title: str) -> None:
    ax.set_title(title, fontsize=10)
    ax.set_xlabel("k (events retrieved)", fontsize=9)
    ax.set_ylabel("Recall@k", fontsize=9)
    ax.set_ylim(0, 1)
    ax.set_xticks([1, 5, 10, 15, 20])
    ax.axvline(10, color="#bbbbbb", linewidth=0.8, linestyle=":")
    ax.grid(alpha=0.3)


def _recall_bars(document: dict[str, Any]) -> Figure:
    panels = _panels(document)
    systems = list(document["systems"])
    figure = _figure(11, 4.2)
    ax = figure.subplots()
    width = 0.8 / len(systems)
    for s, system in enumerate(systems):
        result = document["systems"][system]
        values = []
        for _title, split, category in panels:
            part = result if split is None else result["by_split"][split]
            values.append((part["overall"] if category is None else part["by_category"][category])["recall@10"])
        positions = [p + (s - (len(systems) - 1) / 2) * width for p in range(len(panels))]
        bars = ax.bar(positions, values, width, label=system, color=_style(system).get("color"))
        ax.bar_label(bars, fmt="%.2f", fontsize=7, padding=1)
    ax.set_xticks(range(len(panels)), [title.replace(" (", "\n(") for title, _s, _c in panels], fontsize=8)
    ax.set_ylabel("Recall@10")
    ax.set_ylim(0, 1.05)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=8, ncols=len(systems), loc="upper left")
    ax.set_title(f"LoCoMo Recall@10 by question category ({document['dataset']})")
    return figure


def _latency(document: dict[str, Any]) -> Figure:
    import numpy as np

    samples = {system: np.asarray(times, dtype=float) for system, times in document["samples_ms"].items() if times}
    figure = _figure(11, 4.2)
    histogram, cdf = figure.subplots(1, 2)
    everything = np.concatenate(list(samples.values()))
    low, high = max(everything.min(), 1e-3), everything.max()
    bins = np.geomspace(min(low, GOAL_MS) * 0.9, max(high, GOAL_MS) * 1.1, 50)
    for system, times in samples.items():
        color = _style(system).get("color")
        p50, p95 = np.median(times), np.percentile(times, 95, method="lower")  # as latency.json computes them
        label = f"{system}: p50 {p50:.1f} ms, p95 {p95:.1f} ms"
        histogram.hist(times, bins=bins, alpha=0.6, color=color, label=label)
        ordered = np.sort(times)
        cdf.step(ordered, np.arange(1, len(ordered) + 1) / len(ordered), where="post", color=color, label=system)
        for value, style in ((p50, "--"), (p95, ":")):
            histogram.axvline(value, color=color, linestyle=style, linewidth=1)
            cdf.axvline(value, color=color, linestyle=style, linewidth=1)
    for ax in (histogram, cdf):
        ax.axvline(GOAL_MS, color="#333333", linewidth=1.2, alpha=0.6)
        ax.annotate(f"goal: p95 < {GOAL_MS:.0f} ms", (GOAL_MS, 0.5), xycoords=("data", "axes fraction"),
                    rotation=90, fontsize=8, ha="right", va="center", color="#333333")
        ax.set_xscale("log")
        ax.set_xlabel("milliseconds per query (log scale; dashed p50, dotted p95)", fontsize=9)
        ax.grid(alpha=0.3, which="both")
    histogram.set_ylabel("queries")
    histogram.legend(fontsize=8)
    cdf.set_ylabel("share of queries done within x ms")
    cdf.set_ylim(0, 1.01)
    figure.suptitle(f"Search latency with {document['memories']:,} memories in one world "
                    f"({len(everything) // max(len(samples), 1)} timed queries per system)")
    return figure
