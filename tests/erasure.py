"""What a world still shows of someone: every row of every world table, the keyword index and every read route.
The erasure suites look there for an erased user's words and event ids."""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Iterable, Sequence
from datetime import datetime, timedelta
from typing import Any

import httpx

from engram.enrichment.ingest import ingest_events
from engram.model.events import IngestRequest
from engram.ports.clients import Clients

# Vectors are numbers: what a row says is in its other columns.
_NOT_TEXT = "ARRAY['embedding', 'context_embedding', 'document']::text[]"


def ingest(clients: Clients, world: str, user: str, conversation: str, lines: Sequence[str], start: datetime,
           prefix: str | None = None) -> list[str]:
    """One batch of a user's turns, a minute apart; returns the event ids (`<prefix or user>-<conversation>-<i>`)."""
    batch = IngestRequest.model_validate({"events": [
        {"event_id": f"{prefix or user}-{conversation}-{i}", "user_id": user, "conversation_id": conversation,
         "role": "user", "content": text, "occurred_at": (start + timedelta(minutes=i)).isoformat()}
        for i, text in enumerate(lines)]})
    return [e.event_id for e in ingest_events(clients, clients.world(world), batch).events]


def stored_rows(clients: Clients, world: str) -> dict[str, list[str]]:
    """Every row of every table with a world_id, as JSON text (vectors aside), by table."""
    with clients.store.tx(world) as cur:  # type: ignore[attr-defined]
        cur.execute("SELECT c.relname FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid "
                    "WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind = 'r' "
                    "AND a.attname = 'world_id' AND NOT a.attisdropped ORDER BY c.relname")
        tables = [r["relname"] for r in cur.fetchall()]
        rows: dict[str, list[str]] = {}
        for table in tables:
            cur.execute(f"SELECT (to_jsonb(t) - {_NOT_TEXT})::text AS row FROM {table} t WHERE world_id = %s",
                        (world,))
            rows[table] = [r["row"] for r in cur.fetchall()]
    return rows


def rows_naming(clients: Clients, world: str, markers: Iterable[str], *,
                except_tables: Sequence[str] = ()) -> list[str]:
    """The stored rows (`table: row`) that contain any of the markers (case-insensitive)."""
    wanted = [m.lower() for m in markers]
    return [f"{table}: {row}" for table, rows in stored_rows(clients, world).items() if table not in except_tables
            for row in rows if any(m in row.lower() for m in wanted)]


def index_hits(clients: Clients, world: str, markers: Iterable[str]) -> list[str]:
    """Keyword-index documents of the world that match any of the markers."""
    return [f"{hit.doc_id}: {hit.text}" for marker in markers for hit in clients.index.search(world, marker, limit=50)]


def routes_text(api: httpx.Client, world: str, *, users: Sequence[str], conversations: Sequence[str],
                searches: Sequence[str]) -> str:
    """Everything the read routes answer about a world, as one text: search (as anyone and as each user),
    entities with their details and relationships, users, their events, memories and exports, the world's
    export, conversations' signals and insights, queries, conflicts and disambiguations."""
    base = f"/v1/worlds/{world}"
    parts: list[str] = []

    def get(path: str, **params: Any) -> Any:
        response = api.get(base + path, params=params)
        assert response.status_code in (200, 404), (path, response.status_code, response.text)
        parts.append(response.text)
        return response.json() if response.headers.get("content-type", "").startswith("application/json") else None

    for q in searches:  # what was found (the response also says what was asked)
        for user in [None, *users]:
            found = api.get(f"{base}/search", params={"q": q, "limit": 50, **({"user_id": user} if user else {})})
            assert found.status_code == 200, found.text
            parts.append(as_json(found.json()["hits"]))
    for entity in get("/entities", limit=200) or []:
        get(f"/entities/{entity['entity_id']}")
        get(f"/entities/{entity['entity_id']}/relationships", depth=3)
    get("/users")
    for user in users:
        get(f"/users/{user}/events", limit=200)
        for layer in ("episodic", "semantic", "procedural", "summary"):
            get(f"/users/{user}/memories", layer=layer, limit=200)
        get("/queries", user_id=user, limit=100)
        parts.append(_export(api, f"{base}/users/{user}/export"))
    for conversation in conversations:
        get(f"/conversations/{conversation}/signals")
        get(f"/conversations/{conversation}/insights")
    get("/queries", limit=100)
    get("/conflicts")
    get("/disambiguations", limit=200)
    parts.append(_export(api, f"{base}/export"))
    return "\n".join(parts)


def _export(api: httpx.Client, path: str) -> str:
    """The records of every page of an export."""
    pages, cursor = [], None
    while True:
        response = api.get(path, params={"vectors": "false", **({"cursor": cursor} if cursor else {})})
        assert response.status_code == 200, response.text
        pages.append("\n".join(response.text.splitlines()[1:]))  # the header says what was asked
        cursor = response.headers.get("X-Engram-Next-Cursor")
        if not cursor:
            return "\n".join(pages)


def naming(text: str, markers: Iterable[str]) -> list[str]:
    """The markers a text contains (case-insensitive)."""
    lowered = text.lower()
    return [m for m in markers if m.lower() in lowered]


def as_json(value: Any) -> str:
    return json.dumps(value, default=str)


class EraseMidway:
    """The store as a step sees it, erasing a user in the middle of the step: just before the call named `at`
    (or the `at`-th call, counting from 1, of the methods named in `points`, of any method without), or just after
    it with `after`. The erasure runs on its own, through the real store, as a DELETE arriving while the step runs
    would."""

    def __init__(self, store: Any, at: str | int, erase: Callable[[], object], *, after: bool = False,
                 points: Collection[str] | None = None) -> None:
        self._store, self._at, self._erase, self._after, self._points = store, at, erase, after, points
        self.calls: list[str] = []
        self.fired = False

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._store, name)
        if not callable(attribute):
            return attribute

        def call(*args: Any, **kwargs: Any) -> Any:
            if self._points is None or name in self._points:
                self.calls.append(name)
            due = not self.fired and (name == self._at if isinstance(self._at, str) else len(self.calls) == self._at
                                      and (self._points is None or name in self._points))
            if due and not self._after:
                self.fired = True
                self._erase()
            result = attribute(*args, **kwargs)
            if due and self._after:
                self.fired = True
                self._erase()
            return result
        return call
