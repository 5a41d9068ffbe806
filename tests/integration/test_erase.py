"""Erasing a user: everything of theirs goes, from the database and the keyword index, and nothing of
anyone else's, in this world or another."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from engram.adapters.postgres.erase import CLEARED_ELSEWHERE, KEPT, USER_TABLES
from engram.app.inline import InlineWorkflows
from engram.memory.erase import erase_user
from engram.model.events import IngestRequest
from engram.model.queries import QueryRequest
from engram.ports.clients import Clients
from engram.query.submit import submit_query
from engram.retrieval.search import search
from tests.builder import remember

pytestmark = pytest.mark.integration
T0 = datetime(2026, 4, 1, 9, 0, tzinfo=UTC)
STATEMENTS = {
    "ana": ["My name is Ana and I live in Seville.", "I work at Olivo Labs. I assume the launch slips to May.",
            "Should we move the launch? I prefer tea over coffee."],
    "ben": ["My name is Ben and I live in Seville too.", "I work at Olivo Labs as a designer."],
}


def _count(clients: Clients, table: str, world: str, where: str = "TRUE", params: tuple[object, ...] = ()) -> int:
    with clients.store.tx(world) as cur:  # type: ignore[attr-defined]
        cur.execute(f"SELECT count(*) AS n FROM {table} WHERE world_id = %s AND {where}", (world, *params))
        return int(cur.fetchone()["n"])


def _remember(clients: Clients, world: str) -> None:
    for user, lines in STATEMENTS.items():
        batch = IngestRequest.model_validate({"events": [
            {"event_id": f"{world}-{user}-{i}", "user_id": user, "conversation_id": f"{user}-c", "role": "user",
             "content": text, "occurred_at": (T0 + timedelta(minutes=i)).isoformat()}
            for i, text in enumerate(lines)]})
        remember(clients, world, batch)
        submit_query(clients, world, QueryRequest(user_id=user, question="Where do I work?"))


@pytest.fixture(scope="module")
def worlds(clients: Clients) -> Clients:
    clients.workflows = InlineWorkflows(clients, background=False)
    for world in ("erase-a", "erase-b"):
        _remember(clients, world)
    return clients


def test_every_table_with_a_user_id_is_erased_by_user(worlds: Clients) -> None:
    with worlds.store.tx(None) as cur:  # type: ignore[attr-defined]
        cur.execute("SELECT table_name FROM information_schema.columns WHERE table_schema = 'public' "
                    "AND column_name = 'user_id'")
        tables = {r["table_name"] for r in cur.fetchall()}
    assert tables == set(USER_TABLES) | set(CLEARED_ELSEWHERE) | set(KEPT)


def test_erasing_a_user_removes_their_memory_everywhere_and_reports_counts(worlds: Clients) -> None:
    before = {t: _count(worlds, t, "erase-a", "user_id = %s", ("ana",)) for t in USER_TABLES}
    assert before["chat_events"] == 3 and before["semantic_memories"] > 0 and before["signals"] > 0
    assert before["world_queries"] == 1
    assert "erase-a-ana-0" in {h.doc_id for h in worlds.index.search("erase-a", "Seville", limit=50)}

    erasure = erase_user(worlds, worlds.world("erase-a"), "ana")

    assert erasure.deleted["chat_events"] == 3 and erasure.deleted["world_queries"] == 1
    assert erasure.deleted["semantic_memories"] == before["semantic_memories"]
    assert erasure.index_documents >= 3
    assert all(_count(worlds, t, "erase-a", "user_id = %s", ("ana",)) == 0 for t in USER_TABLES)
    assert _count(worlds, "signal_cursors", "erase-a", "conversation_id = %s", ("ana-c",)) == 0
    found = search(worlds, worlds.world("erase-a"), "Ana Seville tea launch", user_id=None, limit=50).hits
    assert not [h for h in found if "ana" in h.doc_id or "Ana" in h.text or "tea" in h.text]
    assert not any(r.user_id == "ana" for r in worlds.store.list_queries("erase-a", None, 50))


def test_erasing_one_user_spares_the_others_and_every_other_world(worlds: Clients) -> None:
    assert _count(worlds, "chat_events", "erase-a", "user_id = %s", ("ben",)) == 2
    assert _count(worlds, "semantic_memories", "erase-a", "user_id = %s", ("ben",)) > 0
    assert _count(worlds, "chat_events", "erase-b", "user_id = %s", ("ana",)) == 3
    assert "erase-b-ana-0" in {h.doc_id for h in worlds.index.search("erase-b", "Seville", limit=50)}
    ben = search(worlds, worlds.world("erase-a"), "Where does Ben live?", user_id="ben").hits
    assert any("Seville" in h.text for h in ben)


def test_erasing_again_or_an_unknown_user_deletes_nothing(worlds: Clients) -> None:
    assert erase_user(worlds, worlds.world("erase-a"), "ana").deleted == {}
    assert erase_user(worlds, worlds.world("erase-a"), "nobody").deleted == {}
