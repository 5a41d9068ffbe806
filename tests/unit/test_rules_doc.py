"""docs/rules.md, the table of every rule of the five source documents, points at code and tests that exist: a
rule whose implementation or test was moved or renamed fails here instead of leaving a dead reference."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
RULES = REPO / "docs" / "rules.md"
STATUSES = ("as stated", "fixed", "deliberate difference", "not applicable", "partly", "differs", "bench")

CODE = re.compile(r"(?:\.\./)?(shared/engram/[\w/]+\.py|functions/[\w/]+\.py|infra/[\w/]+\.py)")
TEST = re.compile(r"(tests/[\w/]+\.py)(?:::(\w+))?")


def _rows() -> list[str]:
    return [line for line in RULES.read_text(encoding="utf-8").splitlines()
            if line.startswith("|") and not re.match(r"^\|\s*-", line) and "status" not in line.lower().split("|")[-2]]


def test_the_rules_table_exists_and_covers_the_five_documents() -> None:
    text = RULES.read_text(encoding="utf-8")
    for seed in ("000", "001", "002", "003", "004"):
        assert re.search(rf"^## .*{seed}|^## .*\({seed}", text, re.M) or f"seeds/{seed}" in text, seed


@pytest.mark.parametrize("path", sorted({m.group(1) for m in CODE.finditer(RULES.read_text(encoding="utf-8"))}))
def test_every_module_the_table_names_exists(path: str) -> None:
    assert (REPO / path).is_file(), path


def _defined_tests() -> set[str]:
    return {m.group(1) for path in (REPO / "tests").rglob("*.py")
            for m in re.finditer(r"^\s*def (test_\w+)\(", path.read_text(encoding="utf-8"), re.M)}


def test_every_test_the_table_names_exists() -> None:
    text = RULES.read_text(encoding="utf-8")
    files = {path.stem for path in (REPO / "tests").rglob("test_*.py")}
    for path in {m.group(1) for m in TEST.finditer(text)}:
        assert (REPO / path).is_file(), path
    named = set(re.findall(r"\b(test_\w+)", text)) - files
    assert named, "the table names the tests that check its rules"
    assert not named - _defined_tests(), sorted(named - _defined_tests())


def test_every_rule_has_a_status_the_table_explains() -> None:
    rows = _rows()
    assert len(rows) > 50, "every rule of the five documents, one row each"
    missing = [row[:80] for row in rows if not any(status in row.lower() for status in STATUSES)]
    assert not missing, missing
