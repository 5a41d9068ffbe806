"""Erasing a user takes with them what was made of their words: the entities their statements created (a passport
number, a bank PIN), the aliases and edges learned from them, the summaries that quote them (a shared
conversation's summary attributed to the other speaker included) and the other users' answers built on them.
What another user also said stays, as that user said it."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from engram.adapters.offline.llm import OfflineLLM
from engram.memory.erase import erase_user
from engram.model.entities import EntitySighting
from engram.model.memories import OntologyPredicate
from engram.model.queries import QueryRequest
from engram.ports import ExtractedTriple, ExtractionResult, LLMReply, Reference, WindowEvent
from engram.ports.clients import Clients
from engram.query.submit import submit_query
from engram.retrieval.search import search
from tests.asgi import api_client
from tests.builder import consolidate, enrich
from tests.erasure import index_hits, ingest, naming, routes_text, rows_naming

pytestmark = pytest.mark.integration
T0 = datetime(2026, 4, 1, 9, 0, tzinfo=UTC)
WORLD = "derived"
VERA = ["My passport number is XK4471920 and my bank PIN is Zebra 4921.",
        "My card PIN is Orchid 7730 at Caixa Bank, where Helga Brandvold is my adviser."]
BEN = ["I live in Porto and I work at Olivo Labs.", "Vera told me about Caixa Bank."]
SECRETS = ("XK4471920", "Zebra 4921", "Orchid 7730", "PIN")  # long enough never to be part of a hash
VERA_EVENTS = ("vera-shared-0", "vera-shared-1")
# The entities the language engine names in her words only (a code or a PIN's word is no name it knows).
MADE_OF_HER_WORDS = {"pin", "helga brandvold"}


@pytest.fixture(scope="module")
def shared(clients: Clients) -> Iterator[tuple[Clients, httpx.Client]]:
    """Vera, then Ben, in one conversation; a consolidation (its summary is Ben's: the lowest user id) and Ben's
    question about what Vera said (the passport number: the offline model answers it from the summary quoting
    her, as her words are not attributed to her there); then Vera is erased."""
    with api_client(clients) as api:
        enrich(clients, WORLD, ingest(clients, WORLD, "vera", "shared", VERA, T0))
        enrich(clients, WORLD, ingest(clients, WORLD, "ben", "shared", BEN, T0 + timedelta(hours=1)))
        consolidate(clients, WORLD)
        submit_query(clients, WORLD, QueryRequest(user_id="ben", question="What is the passport number?"))
        yield clients, api


def test_before_erasure_her_words_are_entities_and_the_shared_summary_quotes_them(
        shared: tuple[Clients, httpx.Client]) -> None:
    clients, _api = shared
    names = {e.name.lower() for e in clients.store.list_entities(WORLD, None, 200)}
    assert names >= MADE_OF_HER_WORDS
    summary = clients.store.get_summary(WORLD, "conversation", "shared")
    assert summary is not None and summary.user_id == "ben" and "XK4471920" in summary.content


def test_erasing_her_takes_the_entities_made_only_of_her_words(shared: tuple[Clients, httpx.Client]) -> None:
    clients, api = shared
    erasure = erase_user(clients, clients.world(WORLD), "vera")

    assert erasure.deleted["chat_events"] == 2
    assert erasure.deleted["canonical_entities"] >= len(MADE_OF_HER_WORDS)
    entities = {e.name.lower(): e for e in clients.store.list_entities(WORLD, None, 200)}
    assert not MADE_OF_HER_WORDS & set(entities)
    assert not [h for h in search(clients, clients.world(WORLD), "PIN Helga Brandvold", user_id=None, limit=50).hits
                if h.kind == "entity"]
    listed = api.get(f"/v1/worlds/{WORLD}/entities", params={"name": "PIN"}).json()
    assert [e["name"] for e in listed if e["name"].lower() in MADE_OF_HER_WORDS] == []


def test_an_entity_the_other_user_also_named_stays_but_no_longer_stands_for_her_account(
        shared: tuple[Clients, httpx.Client]) -> None:
    clients, _api = shared
    entities = {e.name.lower(): e for e in clients.store.list_entities(WORLD, None, 200)}
    assert {"caixa bank", "porto", "olivo labs", "ben"} <= set(entities)
    vera = entities.get("vera")  # Ben said "Vera told me": the person he named stays
    assert vera is not None and vera.external_ref is None and vera.description is None


def test_the_shared_summary_that_quoted_her_is_dropped_then_rebuilt_from_the_other_user_alone(
        shared: tuple[Clients, httpx.Client]) -> None:
    clients, _api = shared
    assert clients.store.get_summary(WORLD, "conversation", "shared") is None
    assert not [s for s in clients.store.list_summaries(WORLD, None, 100) if naming(s.content, SECRETS)]

    consolidate(clients, WORLD)

    rebuilt = clients.store.get_summary(WORLD, "conversation", "shared")
    assert rebuilt is not None and rebuilt.user_id == "ben"
    assert naming(rebuilt.content, SECRETS) == [] and "Porto" in rebuilt.content
    assert not set(rebuilt.source_ids) & set(VERA_EVENTS)


def test_the_other_users_answer_that_drew_on_her_memory_is_withdrawn_and_his_question_stays(
        shared: tuple[Clients, httpx.Client]) -> None:
    clients, api = shared
    [asked] = clients.store.list_queries(WORLD, "ben", 10)
    assert asked.question == "What is the passport number?"
    assert asked.answer is None and asked.status == "failed" and asked.error is not None and "erased" in asked.error
    shown = api.get(f"/v1/worlds/{WORLD}/queries/{asked.query_id}")
    assert shown.status_code == 200 and naming(shown.text, SECRETS) == []


def test_nothing_of_her_words_is_left_in_any_table_the_index_or_any_route(
        shared: tuple[Clients, httpx.Client]) -> None:
    clients, api = shared
    markers = [*SECRETS, *VERA_EVENTS]
    assert rows_naming(clients, WORLD, markers) == []
    assert index_hits(clients, WORLD, SECRETS) == []
    shown = routes_text(api, WORLD, users=["ben", "vera"], conversations=["shared"],
                        searches=["passport PIN", "Zebra 4921", "Orchid 7730", "XK4471920", "Caixa Bank"])
    assert naming(shown, markers) == [], [shown[max(0, i - 300):i + 100] for m in markers for i in [shown.lower().find(m.lower())] if i >= 0][:2]


def test_the_other_users_memory_is_intact(shared: tuple[Clients, httpx.Client]) -> None:
    clients, _api = shared
    assert {e.event_id for e in clients.store.user_events(WORLD, "ben", 10)} == {"ben-shared-0", "ben-shared-1"}
    facts = {(f.predicate, f.object_value) for f in clients.store.user_memories(WORLD, "ben", "semantic", 50)}
    assert {("lives_in", "Porto"), ("works_at", "Olivo Labs")} <= facts
    found = search(clients, clients.world(WORLD), "Where does Ben live?", user_id="ben").hits
    assert any("Porto" in h.text for h in found)
    assert "ben-shared-1" in {h.doc_id for h in clients.index.search(WORLD, "Caixa", limit=20)}


# ---------------------------------------------------------------- her words about another user's facts
class _ToldAboutBen(OfflineLLM):
    """The offline model, plus what Vera says about Ben as facts about him: "Ben works at Olivo Labs" restates
    Ben's fact, "Ben lives in Lisbon" contradicts his "Porto"."""

    def extract(self, events: Sequence[WindowEvent], known_entities: Sequence[str], *,
                references: Sequence[Reference] = (), candidates: Sequence[EntitySighting] = (),
                predicates: Sequence[OntologyPredicate] = ()) -> LLMReply[ExtractionResult]:
        reply = super().extract(events, known_entities, references=references, candidates=candidates,
                                predicates=predicates)
        told = [ExtractedTriple(subject="ben", predicate=p, object=o, object_is_entity=True, confidence=0.95,
                                event_id=e.event_id)
                for e in events if e.speaker == "vera" for p, o in _ABOUT_BEN if o in e.content]
        return dataclasses.replace(reply, value=reply.value.model_copy(update={"triples": [*reply.value.triples,
                                                                                           *told]}))


_ABOUT_BEN = (("works_at", "Olivo Labs"), ("lives_in", "Lisbon"))


@pytest.fixture()
def told(clients: Clients) -> Iterator[Clients]:
    _tell_about_ben(clients, "told")
    yield clients


def _tell_about_ben(clients: Clients, world: str) -> None:
    """Ben says where he lives and works; ninety days later Vera restates his employer and says he moved."""
    llm = clients.llm
    clients.llm = _ToldAboutBen()
    try:
        enrich(clients, world, ingest(clients, world, "ben", "b1", ["I live in Porto and I work at Olivo Labs."], T0))
        enrich(clients, world, ingest(clients, world, "vera", "v1", ["Ben works at Olivo Labs, you know.",
                                                                     "Ben lives in Lisbon now, he moved."],
                                       T0 + timedelta(days=90)))
    finally:
        clients.llm = llm


def _ben_facts(clients: Clients, world: str) -> dict[tuple[str, str], Any]:
    return {(f.predicate, f.object_value): f for f in clients.store.user_memories(world, "ben", "semantic", 50)}


def test_her_restatement_of_his_fact_and_her_contradiction_of_it_leave_his_facts_as_his_own_words_made_them(
        told: Clients) -> None:
    # Each user's facts live their own lifecycle (issue 17, finding 1): her restatement is her own fact, not a
    # reinforcement of his, and her "Lisbon" supersedes nothing of his. Erasing her leaves his facts as they were.
    clients, world = told, "told"
    before = _ben_facts(clients, world)
    works, lives = before[("works_at", "Olivo Labs")], before[("lives_in", "Porto")]
    assert works.source_event_ids == ["ben-b1-0"] and works.reinforcement_count == 0
    assert lives.status == "active"

    erase_user(clients, clients.world(world), "vera")

    after = _ben_facts(clients, world)
    works, lives = after[("works_at", "Olivo Labs")], after[("lives_in", "Porto")]
    assert works.source_event_ids == ["ben-b1-0"] and works.reinforcement_count == 0
    assert works.confidence == pytest.approx(before[("works_at", "Olivo Labs")].factors.base
                                             * before[("works_at", "Olivo Labs")].factors.source_weight)
    assert lives.status == "active" and lives.valid_to is None
    ben = clients.store.find_entity_by_external_ref(world, "user:ben")
    assert ben is not None
    edges = {(r.relation, r.target_entity_id) for r in clients.store.neighbours(world, [ben.entity_id])}
    porto = clients.store.find_entity_by_name(world, "Porto")
    assert porto is not None and ("lives_in", porto.entity_id) in edges
    assert clients.store.find_entity_by_name(world, "Lisbon") is None
    assert clients.store.list_conflicts(world, None) == []
    assert rows_naming(clients, world, ["vera-v1-0", "vera-v1-1", "Lisbon"]) == []


def test_facts_stored_before_per_user_lifecycles_lose_her_restatement_and_her_overturning_when_she_is_erased(
        clients: Clients) -> None:
    # Facts stored before each user's facts had their own lifecycle: her restatement reinforced his fact and her
    # "Lisbon" superseded his "Porto". Written here as that version stored them; erasing her undoes both.
    world = "told-before"
    _tell_about_ben(clients, world)
    ben = _ben_facts(clients, world)
    works, lives = ben[("works_at", "Olivo Labs")], ben[("lives_in", "Porto")]
    hers = {(f.predicate, f.object_value): f for f in clients.store.user_memories(world, "vera", "semantic", 50)}
    lisbon = hers[("lives_in", "Lisbon")]
    with clients.store.tx(world) as cur:  # type: ignore[attr-defined]
        cur.execute("UPDATE semantic_memories SET source_event_ids = source_event_ids || %s::text, "
                    "reinforcement_count = 1, confidence = least(0.95, confidence + 0.05) "
                    "WHERE world_id = %s AND memory_id = %s", ("vera-v1-0", world, works.memory_id))
        cur.execute("UPDATE semantic_memories SET status = 'superseded', valid_to = %s WHERE world_id = %s "
                    "AND memory_id = %s", (T0 + timedelta(days=90), world, lives.memory_id))
        cur.execute("INSERT INTO memory_conflicts (world_id, conflict_id, memory_id, conflicting_memory_id, status, "
                    "strategy, winner_memory_id) VALUES (%s, 'conflict-legacy', %s, %s, 'resolved', 'recency', %s)",
                    (world, lives.memory_id, lisbon.memory_id, lisbon.memory_id))

    erase_user(clients, clients.world(world), "vera")

    after = _ben_facts(clients, world)
    works, lives = after[("works_at", "Olivo Labs")], after[("lives_in", "Porto")]
    assert works.source_event_ids == ["ben-b1-0"] and works.reinforcement_count == 0
    assert works.confidence == pytest.approx(works.factors.base * works.factors.source_weight)
    assert lives.status == "active" and lives.valid_to is None
    assert clients.store.list_conflicts(world, None) == []
    assert rows_naming(clients, world, ["vera-v1-0", "vera-v1-1", "Lisbon"]) == []
