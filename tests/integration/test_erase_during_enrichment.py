"""An erasure that arrives while the user's events are being enriched holds: whichever step runs, and wherever in
that step the erasure lands (between its reads and its writes included), nothing of the user is readable afterwards,
the step completes having written nothing for them, and the other user's enrichment is whole. Events the same user id
sends after the erasure are a new start."""

from __future__ import annotations

import contextlib
import dataclasses
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import psycopg
import pytest

from engram.app.inline import InlineWorkflows
from engram.consolidation.run import consolidate_scope, finish_run, plan
from engram.enrichment.extract import extract_events
from engram.enrichment.indexing import index_pending
from engram.enrichment.resolve import resolve_events
from engram.errors import NotFound
from engram.memory.erase import erase_user
from engram.model.queries import QueryRequest
from engram.ports.clients import Clients
from engram.query.submit import submit_query
from engram.retrieval.search import search
from tests.asgi import api_client
from tests.builder import consolidate
from tests.erasure import EraseMidway, index_hits, ingest, naming, routes_text, rows_naming
from tests.fakes.workflows import RecordingWorkflows

pytestmark = pytest.mark.integration
T0 = datetime(2026, 5, 1, 9, 0, tzinfo=UTC)
VERA = ["My passport number is XK4471920 and I live in Seville.", "My bank PIN is Zebra 4921. I work at Olivo Labs.",
        "I decided to move to Granada. Should I sell the flat first?"]
BEN = ["I live in Porto and I work at Olivo Labs.", "I prefer tea over coffee."]
SECRETS = ("XK4471920", "Zebra 4921", "Seville", "Granada")  # long enough never to be part of a hash
STEPS = ("resolve", "extract", "index")
_worlds = iter(range(1000))


def _markers(vera_ids: Sequence[str]) -> list[str]:
    return [*SECRETS, *vera_ids, "vera"]


def _step(clients: Clients, world: str, step: str, ids: Sequence[str]) -> Any:
    if step == "resolve":
        return resolve_events(clients, clients.world(world), ids)
    if step == "extract":
        return extract_events(clients, clients.world(world), ids)
    return index_pending(clients, world, ids)


@pytest.fixture(scope="module")
def api(clients: Clients) -> Iterator[httpx.Client]:
    with api_client(clients) as client:
        yield client


@dataclasses.dataclass
class Shared:
    """A world where Vera and then Ben spoke in one conversation, nothing enriched yet."""

    world: str
    vera: list[str]
    ben: list[str]


@pytest.fixture()
def shared(clients: Clients, api: httpx.Client) -> Shared:
    world = f"during-{next(_worlds)}"
    vera = ingest(clients, world, "vera", "shared", VERA, T0)
    ben = ingest(clients, world, "ben", "shared", BEN, T0 + timedelta(hours=1))
    return Shared(world, vera, ben)


def _assert_nothing_of_vera_and_ben_whole(clients: Clients, api: httpx.Client, s: Shared) -> None:
    markers = _markers(s.vera)
    assert rows_naming(clients, s.world, markers, except_tables=("erased_users",)) == []
    assert index_hits(clients, s.world, SECRETS) == []
    shown = routes_text(api, s.world, users=["vera", "ben"], conversations=["shared"],
                        searches=["passport XK4471920", "Zebra 4921 PIN", "Seville Granada", "vera"])
    assert naming(shown, markers) == [], [shown[max(0, i - 200):i + 80] for m in markers for i in [shown.lower().find(m.lower())] if i >= 0][:2]
    assert {e.enrichment_status for e in clients.store.get_events(s.world, s.ben)} == {"enriched"}
    facts = {(f.predicate, f.object_value) for f in clients.store.user_memories(s.world, "ben", "semantic", 50)}
    assert {("lives_in", "Porto"), ("works_at", "Olivo Labs")} <= facts
    assert any("Porto" in h.text for h in search(clients, clients.world(s.world), "Where does Ben live?", user_id="ben").hits)
    assert clients.store.find_entity_by_name(s.world, "Olivo Labs") is not None


# ---------------------------------------------------------------- between two steps
@pytest.mark.parametrize("done", range(len(STEPS) + 1), ids=["before-resolve", "after-resolve", "after-extract",
                                                           "after-index"])
def test_an_erasure_between_two_steps_leaves_nothing_of_the_user(clients: Clients, api: httpx.Client, shared: Shared,
                                                                 done: int) -> None:
    for step in STEPS[:done]:
        _step(clients, shared.world, step, shared.vera)
        _step(clients, shared.world, step, shared.ben)
    erase_user(clients, clients.world(shared.world), "vera")
    for step in STEPS[done:]:
        _step(clients, shared.world, step, shared.vera)  # the rest of her execution runs, and writes nothing
        _step(clients, shared.world, step, shared.ben)
    consolidate(clients, shared.world)
    _assert_nothing_of_vera_and_ben_whole(clients, api, shared)


# ---------------------------------------------------------------- inside a step, between its reads and its writes
MIDWAY = [
    ("resolve", "find_entity_by_external_ref", False),  # her own entity is about to be made
    ("resolve", "match_name", False),  # a name of hers is about to become an entity
    ("resolve", "create_entity", True),  # an entity of her words was made; her mentions not yet recorded
    ("resolve", "record_resolutions", False),
    ("extract", "ontology_predicates", False),  # her events were read
    ("extract", "find_facts", False),  # the model has read her window; her facts are next
    ("extract", "record_facts", True),  # one fact written, the rest of her window to come
    ("extract", "insert_episodic", False),
    ("extract", "signal_cursors", False),  # her signals are next
    ("extract", "sync_insight_states", False),
    ("index", "documents", True),  # her documents were read; the index is written next
]


@pytest.mark.parametrize(("step", "at", "after"), MIDWAY, ids=[f"{s}-{'after' if a else 'before'}-{m}"
                                                                for s, m, a in MIDWAY])
def test_an_erasure_in_the_middle_of_a_step_leaves_nothing_of_the_user(
        clients: Clients, api: httpx.Client, shared: Shared, step: str, at: str, after: bool) -> None:
    position = STEPS.index(step)
    for earlier in STEPS[:position]:
        _step(clients, shared.world, earlier, shared.vera)
    midway = EraseMidway(clients.store, at, lambda: erase_user(clients, clients.world(shared.world), "vera"), after=after)
    _step(dataclasses.replace(clients, store=midway), shared.world, step, shared.vera)  # completes, no error
    assert midway.fired, f"{step} never called {at}: {midway.calls}"
    for later in STEPS[position + 1:]:
        _step(clients, shared.world, later, shared.vera)
    for each in STEPS:
        _step(clients, shared.world, each, shared.ben)
    consolidate(clients, shared.world)
    _assert_nothing_of_vera_and_ben_whole(clients, api, shared)


@pytest.mark.parametrize(("at", "after"), [("scope_facts", True), ("scope_events", True), ("save_summary", False)])
def test_an_erasure_in_the_middle_of_a_consolidation_leaves_no_summary_of_the_user(
        clients: Clients, api: httpx.Client, shared: Shared, at: str, after: bool) -> None:
    for step in STEPS:
        _step(clients, shared.world, step, shared.vera)
        _step(clients, shared.world, step, shared.ben)
    midway = EraseMidway(clients.store, at, lambda: erase_user(clients, clients.world(shared.world), "vera"), after=after)
    erasing = dataclasses.replace(clients, store=midway)
    run = plan(clients, clients.world(shared.world))
    finish_run(clients, run.run_id, [consolidate_scope(erasing, erasing.world(s.world_id), s) for s in run.scopes],
               [consolidate_scope(clients, clients.world(s.world_id), s) for s in run.worlds])
    assert midway.fired
    _assert_nothing_of_vera_and_ben_whole(clients, api, shared)
    conversation = clients.store.get_summary(shared.world, "conversation", "shared")
    assert conversation is None or naming(conversation.content, SECRETS) == []


# ---------------------------------------------------------------- truly at once
class _PausingCursor:
    """A cursor that, once, right after a statement locking rows for a write (FOR KEY SHARE), holds its
    transaction open until released, as a slow step would."""

    def __init__(self, cursor: Any, entered: threading.Event, release: threading.Event) -> None:
        self._cursor, self._entered, self._release = cursor, entered, release

    def execute(self, query: Any, *args: Any, **kwargs: Any) -> Any:
        result = self._cursor.execute(query, *args, **kwargs)
        if "FOR KEY SHARE" in str(query) and not self._entered.is_set():
            self._entered.set()
            self._release.wait(20)
        return result

    def __getattr__(self, name: str) -> Any:
        return getattr(self._cursor, name)


def test_a_write_holding_the_users_event_makes_the_erasure_wait_and_is_erased_with_it(
        clients: Clients, api: httpx.Client, shared: Shared) -> None:
    """An extract step's write locks the events it derives from in its own transaction; an erasure arriving
    meanwhile waits for it to commit, then removes what it wrote; the step's later writes find nothing."""
    resolve_events(clients, clients.world(shared.world), shared.vera)
    store: Any = clients.store
    entered, release = threading.Event(), threading.Event()
    original_tx = store.tx
    worker = threading.Thread(target=extract_events, args=(clients, clients.world(shared.world), shared.vera))

    @contextmanager
    def pausing_tx(world_id: str | None) -> Iterator[Any]:
        with original_tx(world_id) as cur:
            yield _PausingCursor(cur, entered, release) if threading.current_thread() is worker else cur

    erasures: list[Any] = []
    eraser = threading.Thread(target=lambda: erasures.append(erase_user(clients, clients.world(shared.world), "vera")))
    store.tx = pausing_tx
    try:
        worker.start()
        assert entered.wait(10), "no write of the extract step locked the events it derives from"
        eraser.start()
        assert _waiting_on_a_lock(store.url), "the erasure should wait for the write that holds the event"
        release.set()
        worker.join(30)
        eraser.join(30)
    finally:
        release.set()
        store.tx = original_tx
    assert erasures and erasures[0].deleted["chat_events"] == len(shared.vera)
    index_pending(clients, shared.world, shared.vera)
    for step in STEPS:
        _step(clients, shared.world, step, shared.ben)
    _assert_nothing_of_vera_and_ben_whole(clients, api, shared)


def _waiting_on_a_lock(url: str, timeout_s: float = 10.0) -> bool:
    """Whether a session of this database waits on a lock (the erasure, behind the write's lock)."""
    pause = threading.Event()
    with psycopg.connect(url, autocommit=True) as conn:
        for _ in range(int(timeout_s / 0.05)):
            row = conn.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                               "AND wait_event_type = 'Lock'").fetchone()
            if row and row[0]:
                return True
            pause.wait(0.05)
    return False


# ---------------------------------------------------------------- a query of the user, still running
def test_a_query_of_the_user_still_running_when_the_erasure_lands_leaves_nothing(clients: Clients,
                                                                                 shared: Shared) -> None:
    for step in STEPS:
        _step(clients, shared.world, step, shared.vera)
    query = submit_query(dataclasses.replace(clients, workflows=RecordingWorkflows()), shared.world,
                         QueryRequest(user_id="vera", question="What is my passport number?", mode="async"))
    midway = EraseMidway(clients.store, "save_query", lambda: erase_user(clients, clients.world(shared.world), "vera"))
    loop = InlineWorkflows(dataclasses.replace(clients, store=midway), background=False)
    with contextlib.suppress(NotFound):  # the loop's next step may find its query erased: it ends there
        loop.run_query(shared.world, query.query_id)
    assert midway.fired
    assert clients.store.get_query(shared.world, query.query_id) is None
    assert clients.store.load_context(shared.world, query.query_id) is None
    assert rows_naming(clients, shared.world, [*SECRETS, *shared.vera, query.query_id],
                       except_tables=("erased_users",)) == []


# ---------------------------------------------------------------- after the erasure
def test_events_the_same_user_id_sends_after_the_erasure_are_a_new_start(clients: Clients, api: httpx.Client,
                                                                         shared: Shared) -> None:
    resolve_events(clients, clients.world(shared.world), shared.vera)
    erasure = erase_user(clients, clients.world(shared.world), "vera")
    assert erasure.erased_at is not None
    again = ingest(clients, shared.world, "vera", "fresh", ["I live in Valencia now and I work at Brisa Labs."],
                   T0 + timedelta(days=1), prefix="vera2")
    for step in STEPS:
        _step(clients, shared.world, step, shared.vera)  # the erased execution finishes: nothing
        _step(clients, shared.world, step, again)
    facts = {(f.predicate, f.object_value) for f in clients.store.user_memories(shared.world, "vera", "semantic", 50)}
    assert facts == {("lives_in", "Valencia"), ("works_at", "Brisa Labs")}
    assert again[0] in {h.doc_id for h in clients.index.search(shared.world, "Valencia", limit=10)}
    assert rows_naming(clients, shared.world, [*SECRETS, *shared.vera]) == []
    assert index_hits(clients, shared.world, SECRETS) == []


def test_the_erasure_answers_when_it_happened(api: httpx.Client, clients: Clients, shared: Shared) -> None:
    erased = api.delete(f"/v1/worlds/{shared.world}/users/vera")
    assert erased.status_code == 200
    body = erased.json()
    assert body["deleted"]["chat_events"] == len(shared.vera) and body["erased_at"]
    assert api.get(f"/v1/worlds/{shared.world}/users/vera/events").json() == []
