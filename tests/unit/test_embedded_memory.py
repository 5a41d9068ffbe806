"""The embedded server's shared buffers: an eighth of the memory it may use, within 512 MB and 4 GB, a container's
limit counting when it is lower than the machine's memory."""

from __future__ import annotations

from pathlib import Path

import pytest

from engram.adapters.postgres.embedded import _memory_bytes, shared_buffers_mb

GB = 2**30


@pytest.mark.parametrize(("memory", "mb"), [(2 * GB, 512), (4 * GB, 512), (8 * GB, 1024), (24 * GB, 3072),
                                            (64 * GB, 4096), (0, 512)])
def test_shared_buffers_are_an_eighth_of_memory_within_512_mb_and_4_gb(memory: int, mb: int) -> None:
    assert shared_buffers_mb(memory) == mb


def test_a_container_limit_under_the_machines_memory_is_the_memory(tmp_path: Path) -> None:
    machine = _memory_bytes(limits=())
    assert machine > 0  # Linux and macOS tell it
    v2, v1 = tmp_path / "memory.max", tmp_path / "memory.limit_in_bytes"
    v2.write_text("max\n")  # cgroup v2 without a limit
    v1.write_text(f"{2 * GB}\n")
    assert _memory_bytes(limits=(str(v2),)) == machine
    assert _memory_bytes(limits=(str(v2), str(v1))) == min(machine, 2 * GB)
    assert _memory_bytes(limits=(str(tmp_path / "missing"),)) == machine
    v1.write_text(f"{machine * 4}\n")  # a limit above the machine's memory (v1's "no limit" is a huge number)
    assert _memory_bytes(limits=(str(v1),)) == machine
