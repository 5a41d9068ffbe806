"""`engram memory correct|delete` against the local server (issue 22)."""

from __future__ import annotations

import pytest

from engram.sdk.client import EngramClient
from tests.e2e.conftest import Server

pytestmark = pytest.mark.e2e
WORLD = "cli-edit"


def test_engram_memory_corrects_and_deletes_a_fact(local_server: Server) -> None:
    with EngramClient(local_server.url) as engram:
        engram.add_events(WORLD, [{"event_id": "ce1", "user_id": "ivo", "conversation_id": "c1", "role": "user",
                                   "content": "My name is Ivo and I live in Braga."}], wait=True)
        [fact] = [f.model_dump(mode="json") for f in engram.memories(WORLD, "ivo") if f.model_dump()["predicate"] == "lives_in"]
        mid = fact["memory_id"]

        fixed = local_server.cli("memory", "correct", mid, "--world", WORLD, "--value", "Faro", "--confidence",
                                 "0.8", "--valid-from", "2026-01-01T00:00:00Z", "--note", "moved")
        assert fixed.returncode == 0, fixed.stderr
        assert f"{mid}: lives_in = Faro (confidence 0.80" in fixed.stdout
        refused = local_server.cli("memory", "correct", mid, "--world", WORLD, "--confidence", "3")
        assert refused.returncode == 1 and "422" in refused.stderr
        assert [f["object_value"] for f in [m.model_dump(mode="json") for m in engram.memories(WORLD, "ivo")] if f["memory_id"] == mid] == ["Faro"]

        deleted = local_server.cli("memory", "delete", mid, "--world", WORLD, "--note", "wrong")
        assert deleted.returncode == 0, deleted.stderr
        assert f"{mid} deleted (audit aud_" in deleted.stdout
        again = local_server.cli("memory", "delete", mid, "--world", WORLD)
        assert again.returncode == 1 and "404" in again.stderr
        assert mid not in {f["memory_id"] for f in [m.model_dump(mode="json") for m in engram.memories(WORLD, "ivo")]}
        assert [a.action for a in engram.memory_audit(WORLD, mid)] == ["correct", "delete"]
