"""A property: for random interleavings of two users' ingests, the enrichment steps of their batches (resolve,
extract, index, in any order across batches), consolidation runs and one erasure of the first user (between two
operations, or inside one of them, before its k-th call to the store), once every batch has finished: nothing the
erased user said before the erasure is stored, indexed, found by search, listed as an entity, kept in a memory or
exported; what they said after it is remembered (a new start); and the other user's memory is what it would be had
the erased user never spoken."""

from __future__ import annotations

import dataclasses
import itertools
from collections import deque
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engram.enrichment.extract import extract_events
from engram.enrichment.indexing import index_pending
from engram.enrichment.resolve import resolve_events
from engram.memory import lifecycle
from engram.memory.erase import erase_user
from engram.memory.portability import export_page
from engram.ports.clients import Clients
from engram.retrieval.search import search
from tests.builder import consolidate
from tests.erasure import EraseMidway, as_json, index_hits, ingest, naming, rows_naming

pytestmark = pytest.mark.integration
EXAMPLES = 25
T0 = datetime(2026, 7, 1, 9, 0, tzinfo=UTC)
VERA = ["My passport number is XK4471920.", "I live in Seville and my bank PIN is Zebra 4921.",
        "I decided to move to Granada. Should I sell the flat first?", "My card PIN is Orchid 7730 at Caixa Bank."]
VERA_SECRETS = ("XK4471920", "Zebra 4921", "Seville", "Granada", "Orchid 7730", "Caixa")
VERA_AGAIN = ["I live in Valencia now.", "I work at Brisa Labs."]  # after the erasure: a new start
BEN = ["I live in Porto and I work at Olivo Labs.", "I prefer tea over coffee.", "My manager is Rui Costa.",
       "Olivo Labs moved to the Lisbon office."]
STEPS: dict[str, Callable[[Clients, str, list[str]], Any]] = {  # each resolves its world, as its handler does
    "resolve": lambda c, w, ids: resolve_events(c, c.world(w), ids),
    "extract": lambda c, w, ids: extract_events(c, c.world(w), ids), "index": index_pending}
_worlds = itertools.count()


@dataclasses.dataclass
class Batch:
    user: str
    ids: list[str]
    lines: list[str]
    after_erasure: bool
    steps: deque[str] = dataclasses.field(default_factory=lambda: deque(STEPS))


# An operation: ("ingest", user), ("step", which pending batch), ("consolidate", 0). The erasure lands before
# operation `at` (after the last when `at` is past them); with `inside`, in the first operation from `at` on that
# reads the erased user's events (a step of one of their batches, a consolidation): before (or after) its k-th
# call among POINTS, the store calls around which a step reads and writes.
Operation = tuple[str, Any]
Inside = tuple[int, bool]
POINTS = frozenset({
    "get_events", "recorded_mentions", "create_entity_with_ref", "match_name", "create_entity", "record_resolutions",
    "set_event_embeddings", "add_alias", "find_facts", "record_facts", "upsert_relationship", "event_entity_ids",
    "insert_episodic", "signal_cursors", "insert_signals", "save_signal_cursors", "sync_insight_states",
    "record_inflection_check", "offer_intervention", "documents", "set_entity_embeddings", "scope_facts",
    "scope_events", "save_summary", "user_fact_sightings", "save_procedure"})
operations = st.lists(st.one_of(st.tuples(st.just("ingest"), st.sampled_from(["vera", "vera", "ben"])),
                                st.tuples(st.just("step"), st.integers(0, 5)),
                                st.tuples(st.just("consolidate"), st.just(0))), min_size=2, max_size=12)


@st.composite
def interleavings(draw: st.DrawFn) -> tuple[list[Operation], int, Inside | None]:
    ops = draw(operations)
    return ops, draw(st.integers(0, len(ops))), draw(st.none() | st.tuples(st.integers(1, 10), st.booleans()))


@dataclasses.dataclass
class Run:
    clients: Clients
    world: str
    batches: list[Batch] = dataclasses.field(default_factory=list)
    said: dict[str, int] = dataclasses.field(default_factory=lambda: {"vera": 0, "ben": 0, "vera-again": 0})
    erased: bool = False
    minute: int = 0

    def ingest(self, user: str) -> None:
        source, key = (VERA_AGAIN, "vera-again") if user == "vera" and self.erased else (
            VERA if user == "vera" else BEN, user)
        if self.said[key] >= len(source):
            return
        line = source[self.said[key]]
        self.said[key] += 1
        self.minute += 1
        prefix = f"{key}-{self.said[key]}"
        ids = ingest(self.clients, self.world, user, "c", [line], T0 + timedelta(minutes=self.minute), prefix=prefix)
        self.batches.append(Batch(user, ids, [line], self.erased))

    def step(self, which: int, clients: Clients | None = None) -> None:
        pending = [b for b in self.batches if b.steps]
        if pending:
            batch = pending[which % len(pending)]
            STEPS[batch.steps.popleft()](clients or self.clients, self.world, batch.ids)

    def erase(self) -> None:
        erase_user(self.clients, self.clients.world(self.world), "vera")
        self.erased = True

    def reads_vera(self, op: Operation) -> bool:
        """Whether the operation reads the erased user's events: a step of one of their batches, a consolidation."""
        pending = [b for b in self.batches if b.steps]
        return not self.erased and (op[0] == "consolidate" or (
            op[0] == "step" and bool(pending) and pending[op[1] % len(pending)].user == "vera"))

    def run(self, op: Operation, clients: Clients | None = None) -> None:
        kind, arg = op
        if kind == "ingest":
            self.ingest(arg)
        elif kind == "step":
            self.step(arg, clients)
        else:
            consolidate(clients or self.clients, self.world)


def _ben_facts(clients: Clients, world: str) -> set[tuple[str, str]]:
    return {(f.predicate, f.object_value) for f in clients.store.user_memories(world, "ben", "semantic", 100)
            if f.status == "active"}


@pytest.fixture(scope="module")
def ben_alone(clients: Clients) -> dict[int, set[tuple[str, str]]]:
    """Ben's facts after his first n statements, had Vera never spoken."""
    world, facts = "ben-alone", {0: set()}
    for n, line in enumerate(BEN, start=1):
        ids = ingest(clients, world, "ben", "c", [line], T0 + timedelta(minutes=n), prefix=f"ben-{n}")
        for step in STEPS.values():
            step(clients, world, ids)
        facts[n] = _ben_facts(clients, world)
    return facts


def _readable(clients: Clients, world: str) -> str:
    """What search, the entity listing, each user's memories and the world's export show."""
    parts = [as_json([h.model_dump() for q in ("passport PIN", "Seville Granada", "Zebra Orchid Caixa", "vera")
                      for user in (None, "vera", "ben") for h in search(clients, clients.world(world), q, user_id=user,
                                                                         limit=50).hits])]
    parts.append(as_json([e.model_dump() for e in clients.store.list_entities(world, None, 500)]))
    parts += [as_json(lifecycle.user_memories(clients, clients.world(world), user, layer, 200))  # type: ignore[arg-type]
              for user in ("vera", "ben") for layer in ("episodic", "semantic", "procedural", "summary")]
    parts.append(export_page(clients, world, None, vectors=False).text.split("\n", 1)[1])
    return "\n".join(parts)


@settings(max_examples=EXAMPLES, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(interleaving=interleavings())
def test_after_any_interleaving_nothing_the_erased_user_said_before_is_readable_and_the_other_user_is_whole(
        clients: Clients, ben_alone: dict[int, set[tuple[str, str]]],
        interleaving: tuple[list[Operation], int, Inside | None]) -> None:
    ops, at, inside = interleaving
    run = Run(clients, f"prop-{next(_worlds)}")
    for position, op in enumerate([*ops, ("end", None)]):
        if position >= at and not run.erased:
            if inside is not None and run.reads_vera(op):
                call, after = inside
                midway = EraseMidway(clients.store, call, run.erase, after=after, points=POINTS)
                run.run(op, dataclasses.replace(clients, store=midway))
                if not midway.fired:
                    run.erase()
                continue
            if inside is None or op[0] == "end":
                run.erase()
        if op[0] != "end":
            run.run(op)
    while any(b.steps for b in run.batches):  # every execution runs to its end
        run.step(0)
    consolidate(clients, run.world)

    before = [b for b in run.batches if b.user == "vera" and not b.after_erasure]
    markers = [*VERA_SECRETS, *(i for b in before for i in b.ids)]
    assert rows_naming(clients, run.world, markers, except_tables=("erased_users",)) == [], ops
    assert index_hits(clients, run.world, VERA_SECRETS) == [], ops
    assert naming(_readable(clients, run.world), markers) == [], ops

    again = [b for b in run.batches if b.user == "vera" and b.after_erasure]
    for batch in again:  # a new start: kept, enriched, found
        [event] = clients.store.get_events(run.world, batch.ids)
        assert event.enrichment_status == "enriched", ops
        word = batch.lines[0].split()[-1].rstrip(".")
        assert event.event_id in {h.doc_id for h in clients.index.search(run.world, word, limit=20)}, ops

    ben = [b for b in run.batches if b.user == "ben"]
    assert {e.enrichment_status for e in clients.store.get_events(run.world, [i for b in ben for i in b.ids])} \
        <= {"enriched"}, ops
    assert _ben_facts(clients, run.world) == ben_alone[len(ben)], ops
