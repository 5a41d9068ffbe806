"""Benchmarks: each measures engram next to a baseline measured in the same run, prints a table and
writes JSON under `tests/artifacts/bench/` (ENGRAM_BENCH_OUT to change). Never timed assertions."""

from __future__ import annotations

import json
import os
import platform
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
LOCOMO = REPO.parent / "shared" / "data" / "locomo" / "locomo-dev.json"


@dataclass
class Row:
    measure: str
    value: float
    unit: str
    baseline: str | None = None
    baseline_value: float | None = None

    @property
    def ratio(self) -> float | None:
        if self.baseline_value in (None, 0):
            return None
        return round(self.value / self.baseline_value, 3)  # type: ignore[operator]


@dataclass
class BenchReport:
    name: str
    rows: list[Row] = field(default_factory=list)
    context: dict[str, object] = field(default_factory=dict)

    def add(self, measure: str, value: float, unit: str, *, baseline: str | None = None,
            baseline_value: float | None = None) -> None:
        self.rows.append(Row(measure, round(value, 3), unit, baseline,
                             None if baseline_value is None else round(baseline_value, 3)))

    def write(self, out_dir: Path) -> Path:
        out_dir.mkdir(parents=True, exist_ok=True)
        path = out_dir / f"{self.name}.json"
        doc = {"bench": self.name, "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
               "machine": {"cpus": os.cpu_count(), "python": platform.python_version()}, **self.context,
               "rows": [{**asdict(r), "ratio": r.ratio} for r in self.rows]}
        path.write_text(json.dumps(doc, indent=2))
        return path

    def table(self) -> str:
        lines = [f"\n== {self.name} ==", f"{'measure':<44} {'value':>12} {'unit':<10} {'baseline':<30} "
                 f"{'baseline value':>14} {'ratio':>7}"]
        for r in self.rows:
            ratio = "" if r.ratio is None else f"{r.ratio:.2f}"
            base = "" if r.baseline_value is None else f"{r.baseline_value:.3f}"
            lines.append(f"{r.measure:<44} {r.value:>12.3f} {r.unit:<10} {r.baseline or '':<30} {base:>14} "
                         f"{ratio:>7}")
        return "\n".join(lines)


@pytest.fixture(scope="session")
def bench_out() -> Path:
    return Path(os.environ.get("ENGRAM_BENCH_OUT", REPO / "tests" / "artifacts" / "bench"))


@pytest.fixture
def bench_report(request: pytest.FixtureRequest, bench_out: Path) -> Iterator[BenchReport]:
    """A report named after the bench module; printed and written when the test ends."""
    report = BenchReport(request.module.__name__.rsplit(".", 1)[-1].removeprefix("test_"))
    yield report
    path = report.write(bench_out)
    print(report.table())
    print(f"(written to {path})")
