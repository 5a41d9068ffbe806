"""The LoCoMo benches' cache: an ingested world is reused only while the code that built it is unchanged."""
from __future__ import annotations

import shutil
from importlib import resources
from pathlib import Path

import pytest

from engram.bench import retrieval

ROOT = Path(str(resources.files("engram")))


@pytest.mark.parametrize("name", retrieval._INGEST_MODULES + retrieval._QUERY_TIME_MODULES)
def test_every_module_the_fingerprint_names_exists(name: str) -> None:
    assert (ROOT / name).exists(), f"{name} was moved or renamed: the cache would outlive a change to it"


@pytest.mark.parametrize("module", ["enrichment/extract.py", "adapters/offline/understanding.py",
                                    "adapters/spacy_engine.py", "consolidation/run.py"])
def test_the_code_that_reads_a_turn_is_in_the_fingerprint(module: str) -> None:
    covered = any(module == name or module.startswith(name + "/") for name in retrieval._INGEST_MODULES)
    assert covered and module not in retrieval._QUERY_TIME_MODULES


def test_a_change_to_the_extraction_changes_the_fingerprint(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    dataset = tmp_path / "data.json"
    dataset.write_text("[]")
    before = retrieval._fingerprint(dataset, "hash")
    copy = tmp_path / "engram"

    shutil.copytree(ROOT, copy, ignore=shutil.ignore_patterns("__pycache__"))
    (copy / "adapters/offline/understanding.py").write_text("# changed\n", encoding="utf-8")
    monkeypatch.setattr(retrieval.resources, "files", lambda _name: copy)
    assert retrieval._fingerprint(dataset, "hash") != before
    (copy / "adapters/offline/understanding.py").write_bytes((ROOT / "adapters/offline/understanding.py").read_bytes())
    (copy / "adapters/offline/spans.py").write_text("# changed: read only when a question is asked\n", encoding="utf-8")
    assert retrieval._fingerprint(dataset, "hash") == before
