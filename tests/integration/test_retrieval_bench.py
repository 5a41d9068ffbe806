"""`engram bench retrieval` end to end on a tiny LoCoMo-shaped file (the hash embedder, so it takes
seconds): the worlds are ingested through the pipeline, every system is scored, the JSON has the shape
the issue prescribes, and the malformed evidence of the real data set is read for what it means."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rich.console import Console

from engram.bench import metrics
from engram.bench.locomo import evidence_ids, load, session_time
from engram.bench.progress import ConsoleProgress
from engram.bench.retrieval import run, table
from engram.local.cli import main

pytestmark = pytest.mark.integration
QUIET = ConsoleProgress(Console(quiet=True))


def _sample(sample_id: str, a: str, b: str, facts: list[tuple[str, str]]) -> dict:
    turns = []
    for n, (mine, yours) in enumerate(facts, start=1):
        turns += [{"speaker": a, "dia_id": f"D1:{2 * n - 1}", "text": mine},
                  {"speaker": b, "dia_id": f"D1:{2 * n}", "text": yours}]
    return {
        "sample_id": sample_id,
        "conversation": {"speaker_a": a, "speaker_b": b, "session_1_date_time": "1:56 pm on 8 May, 2023",
                         "session_1": turns, "session_2_date_time": "3:00 pm on 20 May, 2023",
                         "session_2": [{"speaker": a, "dia_id": "D2:1", "text": "I adopted a puppy named Rex!",
                                        "blip_caption": "a photo of a small brown dog"}]},
        "qa": [
            {"question": f"What did {a} adopt?", "answer": "a puppy", "evidence": ["D2:1"], "category": 4},
            {"question": f"When did {a} start pottery?", "answer": "May 2023", "evidence": ["D1:01"], "category": 2},
            {"question": "Ignored: adversarial", "adversarial_answer": "x", "evidence": ["D1:2"], "category": 5},
            {"question": "No usable evidence", "answer": "x", "evidence": ["D9:99"], "category": 1},
        ],
    }


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("locomo") / "tiny.json"
    path.write_text(json.dumps([
        _sample("conv-a", "Ana", "Ben", [("I started a pottery class last week.", "That's great, Ana!"),
                                         ("My sister lives in Lisbon.", "Lisbon is lovely.")]),
        _sample("conv-b", "Cy", "Di", [("I started a pottery class yesterday.", "Cool!"),
                                       ("I run marathons on weekends.", "Impressive, Cy.")]),
    ]))
    return path


def test_the_bench_ingests_scores_every_system_and_writes_the_prescribed_json(dataset: Path, tmp_path: Path) -> None:
    outcome = run(dataset, tmp_path, cache_dir=None, held_out=("conv-b",), embedder="hash", progress=QUIET)
    written = json.loads((tmp_path / "retrieval.json").read_text())
    assert written == json.loads(json.dumps(outcome.document))
    assert written["dataset"] == "tiny.json" and written["questions"] == 4
    assert set(written["systems"]) >= {"engram", "bm25", "dense"}
    for system in written["systems"].values():
        assert set(system["overall"]) == {"recall@1", "recall@5", "recall@10", "recall@20", "ndcg@10"}
        assert set(system["by_category"]) == {"multi-hop", "temporal", "open-domain", "single-hop"}
        assert system["by_split"]["held-out"]["questions"] == 2 and system["by_split"]["tuning"]["questions"] == 2
    assert written["conversations"]["conv-b"]["split"] == "held-out"
    assert written["systems"]["engram"]["overall"]["recall@10"] == 1.0  # two short conversations: all found
    assert "held-out" in table(written) and "single-hop" in table(written)
    assert [p.name for p in outcome.plots] == ["retrieval-recall-at-k.png", "retrieval-recall-at-10.png"]
    assert all(p.parent == tmp_path and p.read_bytes().startswith(b"\x89PNG") for p in outcome.plots)


def test_a_split_without_questions_has_no_row_in_the_json_the_table_or_the_plots(dataset: Path,
                                                                                   tmp_path: Path) -> None:
    from engram.bench.plots import retrieval_plots
    from engram.bench.retrieval import score

    conversations = load(dataset)
    ranked = {(c.sample_id, qi): [t.dia_id for t in c.turns] for c in conversations for qi in range(len(c.questions))}
    for held_out in [(), ("conv-x",), ("conv-a", "conv-b")]:
        document = score("tiny.json", conversations, {"bm25": ranked}, held_out).document
        empty = "held-out" if not set(held_out) & {"conv-a", "conv-b"} else "tuning"
        assert list(document["systems"]["bm25"]["by_split"]) == [s for s in ("tuning", "held-out") if s != empty]
        assert not any(line.split()[1:2] == [empty] for line in table(document).splitlines() if line.strip())
        assert len(retrieval_plots(document, tmp_path)) == 2


def test_the_command_runs_the_bench_in_process(dataset: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    import engram.bench.retrieval as bench

    real = bench.run
    monkeypatch.setattr(bench, "run", lambda *a, **kw: real(*a, **{**kw, "embedder": "hash"}))
    assert main(["bench", "retrieval", "--dataset", str(dataset), "--out", str(tmp_path), "--no-cache"]) == 0
    assert "recall@10" in capsys.readouterr().out
    assert (tmp_path / "retrieval.json").exists()


def test_evidence_ids_are_read_for_what_they_plainly_mean() -> None:
    known = {"D11:26", "D30:5", "D8:6", "D9:17", "D1:3"}
    assert evidence_ids(["D:11:26"], known) == ("D11:26",)
    assert evidence_ids(["D30:05"], known) == ("D30:5",)
    assert evidence_ids(["D8:6; D9:17"], known) == ("D8:6", "D9:17")
    assert evidence_ids(["D", "D99:1"], known) == ()


def test_sessions_keep_their_date_and_the_order_of_their_turns(dataset: Path) -> None:
    [a, _b] = load(dataset)
    assert session_time("1:56 pm on 8 May, 2023").isoformat() == "2023-05-08T13:56:00+00:00"
    assert [t.occurred_at for t in a.turns] == sorted(t.occurred_at for t in a.turns)
    assert a.turns[-1].content == "I adopted a puppy named Rex! [image: a photo of a small brown dog]"
    assert [q.category for q in a.questions] == ["single-hop", "temporal"]


def test_recall_and_ndcg_follow_their_definitions() -> None:
    assert metrics.recall_at(["x", "a", "b"], ["a", "c"], 2) == 0.5
    assert metrics.ndcg_at(["a", "x"], ["a"], 10) == 1.0
    assert metrics.ndcg_at(["x", "a"], ["a"], 10) == pytest.approx(1 / 1.5849625)
    assert metrics.mean([]) == {"recall@1": 0.0, "recall@5": 0.0, "recall@10": 0.0, "recall@20": 0.0, "ndcg@10": 0.0}


def test_the_latency_bench_loads_a_world_in_bulk_and_times_both_searches() -> None:
    from engram.bench.latency import run as latency

    result = latency(3_000, progress=QUIET, measure_minilm=False, timed=5)
    document = result.document()
    assert document["memories"] == 3_000
    assert result.fused_ms["p50"] > 0 and result.bare_ms["p50"] > 0
    assert result.fused_ms["p95"] >= result.fused_ms["p50"]
    assert document["fused_to_bare"]["p95"] == round(result.fused_ms["p95"] / result.bare_ms["p95"], 1)
