"""What `engram bench` leaves for people to look at: PNG plots beside the JSON, drawn from small result
objects here, and progress that reads well in a log (stdout not a TTY) as well as on a terminal."""

from __future__ import annotations

import io
import json
import struct
from datetime import UTC, datetime
from pathlib import Path

import pytest
from rich.console import Console

from engram.bench.latency import BARE, FUSED, LatencyResult
from engram.bench.locomo import Conversation, Question, Turn
from engram.bench.plots import DPI, RECALL_AT_10, RECALL_AT_K
from engram.bench.progress import ConsoleProgress
from engram.bench.retrieval import score
from engram.local.cli import main

pytestmark = pytest.mark.integration
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _png_size(path: Path) -> tuple[int, int]:
    """Width and height from a PNG's header, after checking that it is one."""
    data = path.read_bytes()
    assert data[:8] == PNG_SIGNATURE and data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def _conversation(sample_id: str) -> Conversation:
    at = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    turns = [Turn(f"D1:{i}", "Ana", f"turn {i}", None, "session_1", at) for i in range(1, 31)]
    questions = [Question("Where does Ana live?", "single-hop", ("D1:3",)),
                 Question("When did Ana move?", "temporal", ("D1:12", "D1:20")),
                 Question("What does Ana like?", "open-domain", ("D1:25",)),
                 Question("Who did Ana meet?", "multi-hop", ("D1:1", "D1:2"))]
    return Conversation(sample_id, ("Ana", "Ben"), turns, questions)


def test_the_retrieval_plots_are_pngs_of_the_curves_and_bars_beside_the_json(tmp_path: Path) -> None:
    conversations = [_conversation("conv-a"), _conversation("conv-b")]
    order = [f"D1:{i}" for i in range(1, 31)]
    rankings = {"engram": {(c.sample_id, qi): order[:20] for c in conversations for qi in range(4)},
                "bm25": {(c.sample_id, qi): order[::-1][:20] for c in conversations for qi in range(4)},
                "dense": {(c.sample_id, qi): [] for c in conversations for qi in range(4)}}
    document = score("tiny.json", conversations, rankings, held_out=("conv-b",)).document
    engram = document["systems"]["engram"]["recall_at_k"]
    assert len(engram["all"]) == 20 and engram["all"][0] <= engram["all"][-1]
    assert engram["by_category"]["multi-hop"][1] == 1.0  # both evidence turns within the first two
    assert document["systems"]["dense"]["recall_at_k"]["all"] == [0.0] * 20

    from engram.bench.plots import retrieval_plots

    written = retrieval_plots(document, tmp_path / "out")
    assert [p.name for p in written] == [RECALL_AT_K, RECALL_AT_10]
    for path in written:
        width, height = _png_size(path)
        assert 600 <= width <= 2000 and 300 <= height <= 1200
        assert 5_000 < path.stat().st_size < 400_000  # a real picture, small enough to commit
    assert _png_size(written[0]) == (int(4.2 * 3 * DPI), int(3.3 * 2 * DPI))  # six panels: all, held-out, 4 kinds


def test_the_latency_result_writes_its_json_and_the_distribution_plot(tmp_path: Path) -> None:
    fused = [40.0 + (i % 17) * 1.5 for i in range(200)]
    bare = [3.5 + (i % 7) * 0.2 for i in range(200)]
    result = LatencyResult(memories=1_000, fused_ms={"p50": 52.0, "p95": 63.0}, bare_ms={"p50": 4.1, "p95": 4.7},
                           load_s=1.0, index_s=0.5, minilm_query_ms=None, samples_ms={FUSED: fused, BARE: bare})
    json_path, png = result.write(tmp_path)
    assert json.loads(json_path.read_text())["samples_ms"][FUSED] == fused
    assert png.name == "latency.png" and _png_size(png) == (11 * DPI, int(4.2 * DPI))
    assert 5_000 < png.stat().st_size < 400_000


def test_progress_in_a_log_is_plain_lines_at_each_tenth_without_terminal_codes() -> None:
    log = io.StringIO()
    progress = ConsoleProgress(Console(file=log), prefix="engram: ")  # a file: not a terminal
    with progress.bar("ingesting 2 conversations", 40) as advance:
        for _ in range(10):
            advance(4)
    progress.note("ingested conv-a: 40 turns in 1 s")
    lines = log.getvalue().splitlines()
    assert len(lines) == 11 and "\x1b" not in log.getvalue()
    assert lines[0].startswith("engram: ingesting 2 conversations: 4/40 (10%)")
    assert lines[9].startswith("engram: ingesting 2 conversations: 40/40 (100%)")
    assert lines[10] == "engram: ingested conv-a: 40 turns in 1 s"


def test_progress_on_a_terminal_draws_a_bar_that_ends_full() -> None:
    screen = io.StringIO()
    progress = ConsoleProgress(Console(file=screen, force_terminal=True, width=100))
    with progress.bar("searching with engram", 3) as advance:
        for _ in range(3):
            advance(1)
    assert "searching with engram" in screen.getvalue() and "3/3" in screen.getvalue()


def test_the_latency_command_piped_to_a_file_shows_progress_and_writes_json_and_png(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    import engram.bench.latency as bench

    real = bench.run
    monkeypatch.setattr(bench, "run", lambda *a, **kw: real(*a, **{**kw, "measure_minilm": False}))
    assert main(["bench", "latency", "--memories", "2000", "--queries", "10", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out  # pytest's capture is not a terminal
    assert "engram: loading 2,000 events: 2,000/2,000 (100%)" in out
    assert "engram: timing fused search: 20/20 (100%)" in out  # as many warm-up queries (at most 20), then 10 timed
    assert "fused search   p50" in out and "\x1b" not in out
    # Of the first ten default questions, the first, fifth and ninth name one of the world's entities.
    assert "  naming an entity (3): p50" in out and "  the others (7): p50" in out
    document = json.loads((tmp_path / "latency.json").read_text())
    assert document["memories"] == 2_000
    assert document["fused_search_ms_by_question"]["naming an entity"]["queries"] == 3
    assert _png_size(tmp_path / "latency.png")[0] == 11 * DPI


def test_the_latency_command_keeps_its_world_and_checks_the_top_10_against_an_earlier_run(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    import engram.bench.latency as bench

    real = bench.run_in
    monkeypatch.setattr(bench, "run_in", lambda *a, **kw: real(*a, **{**kw, "measure_minilm": False}))
    world = tmp_path / "world"
    command = ["bench", "latency", "--memories", "2000", "--queries", "4", "--data-dir", str(world)]
    assert main([*command, "--out", str(tmp_path / "first")]) == 0
    assert "loading 2,000 events" in capsys.readouterr().out
    first = tmp_path / "first" / "latency.json"
    top = json.loads(first.read_text())["top_10"]
    assert top and all(len(hits) == 10 for hits in top.values())

    assert main([*command, "--out", str(tmp_path / "second"), "--same-top-10-as", str(first)]) == 0
    out = capsys.readouterr().out
    assert "loading" not in out and "all the same" in out  # the world was kept, and searched alike

    doctored = tmp_path / "doctored.json"
    doctored.write_text(json.dumps({"top_10": {q: list(reversed(hits)) for q, hits in top.items()}}))
    assert main([*command, "--out", str(tmp_path / "third"), "--same-top-10-as", str(doctored)]) == 1
    assert f"{len(top)} differ" in capsys.readouterr().out  # every question the doctored run reversed
    assert main(["bench", "latency", "--memories", "3000", "--queries", "4", "--data-dir", str(world),
                 "--out", str(tmp_path / "fourth")]) == 2
    assert "holds a world of 2000 events, not 3000: pass --memories 2000" in capsys.readouterr().err
    assert not (tmp_path / "fourth").exists() and (world / "loaded").read_text().strip() == "2000"


def test_train_ranker_refuses_seeds_that_are_not_integers_before_it_reads_anything(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["bench", "train-ranker", "--dataset", str(tmp_path / "none.json"), "--out", str(tmp_path / "out"),
              "--seeds", "7,one"])
    assert exit_.value.code == 2
    assert "not a comma-separated list of integers: '7,one'" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
