"""docs/rules.md, the table of every rule of the five source documents, points at code and tests that exist: a
rule whose implementation or test was moved or renamed fails here instead of leaving a dead reference."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
RULES = REPO / "docs" / "rules.md"
STATUSES = ("as stated", "fixed", "deliberate difference", "not applicable", "not checked yet")

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


@pytest.mark.parametrize("path,name", sorted({(m.group(1), m.group(2) or "")
                                              for m in TEST.finditer(RULES.read_text(encoding="utf-8"))}))
def test_every_test_the_table_names_exists(path: str, name: str) -> None:
    assert (REPO / path).is_file(), path
    if name:
        assert re.search(rf"def {re.escape(name)}\(", (REPO / path).read_text(encoding="utf-8")), f"{path}::{name}"


def test_every_rule_has_a_status_the_table_explains() -> None:
    rows = _rows()
    assert len(rows) > 50, "every rule of the five documents, one row each"
    missing = [row[:80] for row in rows if not any(status in row.lower() for status in STATUSES)]
    assert not missing, missing
