"""The three brains, their fusion and the conversation context on the real parts (PostgreSQL with
pgvector, tantivy, the hash embedder): what a caller of the search or the query loop would notice."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from engram.enrichment.extract import extract_events
from engram.enrichment.ingest import ingest_events
from engram.model.common import new_id
from engram.model.entities import Relationship
from engram.model.events import IngestRequest
from engram.model.web import WebResult
from engram.ports.clients import Clients
from engram.query import capabilities
from engram.retrieval import graph
from engram.retrieval.conversation import conversation_context
from engram.retrieval.search import search
from tests.builder import remember

pytestmark = pytest.mark.integration

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
NOW = T0 + timedelta(days=1)
TURNS = [  # (event id, speaker, conversation, content)
    ("r1", "dana", "trip", "I went to the LGBTQ support group yesterday and it was so powerful."),
    ("r2", "sam", "trip", "That sounds wonderful! What did you talk about there?"),
    ("r3", "dana", "trip", "We shared our stories about adoption agencies and counseling."),
    ("r4", "sam", "trip", "My sister Priya works at Acme Robotics in Lisbon."),
    ("r5", "dana", "work", "I started painting sunsets on the weekends."),
    ("r6", "sam", "work", "Acme Robotics builds warehouse robots."),
    ("r7", "dana", "work", "My boss Sarah prefers short status reports."),
]


def _drive(clients: Clients, world: str, turns: Sequence[tuple[str, str, str, str]]) -> None:
    events = [{"event_id": i, "user_id": who, "conversation_id": conv, "role": "user", "content": text,
               "occurred_at": (T0 + timedelta(minutes=n)).isoformat(), "metadata": {"speaker": who.capitalize()}}
              for n, (i, who, conv, text) in enumerate(turns)]
    remember(clients, world, events, received_at=T0, now=T0)


@pytest.fixture(scope="module")
def world(clients: Clients) -> str:
    _drive(clients, "wr", TURNS)
    # The same words in another world: nothing of it may ever come back from "wr".
    _drive(clients, "wr-other", [(f"x{i}", who, conv, text) for i, (_id, who, conv, text) in enumerate(TURNS)])
    return "wr"


def _ids(result: object) -> list[str]:
    return [h.doc_id for h in result.hits]  # type: ignore[attr-defined]


# ---------------------------------------------------------------- fused search
def test_a_question_finds_the_turn_that_answers_it_with_its_brains_ranks_and_an_explanation(
        clients: Clients, world: str) -> None:
    result = search(clients, clients.world(world), "What did Dana share about adoption agencies?", user_id=None, now=NOW)
    events = [h for h in result.hits if h.kind == "event"]
    assert events[0].doc_id == "r3"
    # The offline embedder puts the question at cosine 0.40 to it: under L-gent's 0.5 threshold (the semantic
    # brain's), so the keyword and graph brains find it and fusion still reads its similarity.
    assert events[0].ranks.get("keyword") and events[0].ranks.get("graph")
    assert events[0].explanation and events[0].explanation.startswith("found by")
    assert "; cosine " in events[0].explanation
    assert any("<b>" in h for h in events[0].highlights)
    assert events[0].event_ids == ["r3"]
    assert result.search_time_ms > 0 and result.total_matches >= sum(1 for h in result.hits if h.ranks)
    assert set(result.brains) == {"keyword", "semantic", "graph", "expansion"}  # expansion on by default
    assert result.keyword_query == "dana share adoption agencies"


def test_a_hit_score_is_a_probability_and_below_the_floor_search_finds_nothing_relevant(
        clients: Clients, world: str) -> None:
    base = clients.world(world)
    result = search(clients, base, "What did Dana share about adoption agencies?", user_id=None, limit=50, now=NOW)
    scores = [h.score for h in result.hits]
    assert scores == sorted(scores, reverse=True) and 0.0 <= scores[-1] < scores[0] < 1.0  # never rescaled to 1
    assert not result.nothing_relevant and min(scores) >= base.heuristics.retrieval.search_min_relevance
    strict = replace(base, heuristics=base.heuristics.with_overrides({"search_min_relevance": 0.999}))
    none = search(clients, strict, "What did Dana share about adoption agencies?", user_id=None, now=NOW)
    assert none.hits == [] and none.nothing_relevant and none.total_matches > 0
    fusion = replace(base, heuristics=base.heuristics.with_overrides({"ranker": "fusion",
                                                                      "search_min_relevance": 0.999}))
    hand = search(clients, fusion, "What did Dana share about adoption agencies?", user_id=None, now=NOW)
    assert hand.hits and not hand.nothing_relevant  # fusion's scores are not probabilities: no floor


def test_a_search_never_returns_another_worlds_data(clients: Clients, world: str) -> None:
    for query in ["adoption agencies", "Acme Robotics", "Who is Sam's sister?", '"support group"', "paint*",
                  "When did Dana go to the support group?"]:
        result = search(clients, clients.world(world), query, user_id=None, limit=50, now=NOW)
        assert result.hits, query
        assert not any(h.doc_id.startswith("x") for h in result.hits), query
        assert all(e.startswith("r") for h in result.hits for e in h.event_ids), query


def test_the_user_filter_keeps_the_users_own_and_the_worlds_shared_documents(clients: Clients, world: str) -> None:
    result = search(clients, clients.world(world), "Acme Robotics robots Lisbon", user_id="dana", limit=50, now=NOW)
    assert result.hits
    assert all(h.user_id in (None, "dana") for h in result.hits)


def test_a_turn_hits_context_item_carries_the_turn_it_replies_to_in_its_own_conversation(clients: Clients,
                                                                                        world: str) -> None:
    result = search(clients, clients.world(world), "What did Dana share about adoption agencies?", user_id="dana",
                    limit=20, now=NOW)
    items = {i.id: i for i in capabilities.hit_items(clients, world, result.hits)}

    # Sam's question is another user's turn: Dana took part in the conversation, so her reply shows what it answers.
    assert items["r3"].replying_to == "Sam: That sounds wonderful! What did you talk about there?"
    assert {h.doc_id: h.replying_to for h in result.hits}["r3"] == items["r3"].replying_to
    # A conversation's first turn replies to nothing, not to the last turn of another conversation.
    assert "r5" in items and items["r5"].replying_to is None
    assert "r1" in items and items["r1"].replying_to is None


def test_the_query_syntax_reaches_the_keyword_brain_as_written(clients: Clients, world: str) -> None:
    phrase = search(clients, clients.world(world), '"status reports"', user_id=None, now=NOW)
    assert phrase.keyword_query == '"status reports"' and phrase.hits[0].event_ids == ["r7"]
    excluded = search(clients, clients.world(world), "Acme AND NOT warehouse", user_id=None, limit=50, now=NOW)
    assert "r6" not in [h.doc_id for h in excluded.hits if h.ranks.get("keyword")]


@pytest.mark.parametrize(("query", "intent", "heaviest"), [
    ("Priya", "exact_name", "keyword"),
    ("Who depends on Acme Robotics?", "relationship", "graph"),
    ("Priya -> Acme Robotics", "type", "graph"),
    ("Why does Dana paint sunsets?", "semantic", "semantic"),
])
def test_the_query_is_read_and_its_brains_weighted_by_intent(clients: Clients, world: str, query: str,
                                                             intent: str, heaviest: str) -> None:
    result = search(clients, clients.world(world), query, user_id=None, now=NOW)
    assert result.query_class == intent
    assert max(result.weights, key=result.weights.__getitem__) == heaviest
    assert intent.replace("_", " ") in result.interpretation


def test_the_entities_a_question_names_seed_the_graph_brain(clients: Clients, world: str) -> None:
    result = search(clients, clients.world(world), "What does Priya do at Acme Robotics?", user_id=None, limit=20, now=NOW)
    assert {e.name for e in result.entities} >= {"Priya", "Acme Robotics"}
    graph_found = [h.doc_id for h in result.hits if "graph" in h.ranks]
    assert "r4" in graph_found  # the turn naming both


def test_the_graph_brain_reaches_what_a_users_entity_said_nearest_first(clients: Clients, world: str) -> None:
    dana = clients.store.create_entity_with_ref(world, "Dana", "person", "user:dana")
    [vector] = clients.embedder.embed(["Dana: We shared our stories about adoption agencies and counseling."])
    said = clients.store.entity_documents(world, {dana.entity_id: 1.0}, vector, user_id=None, kinds=["event"],
                                          limit=10)
    assert {h.doc_id for h in said} == {"r1", "r3", "r5", "r7"}  # Dana's turns, none of the other world's
    assert said[0].doc_id == "r3" and said == sorted(said, key=lambda h: h.score, reverse=True)
    nearest = clients.store.entity_documents(world, {dana.entity_id: 0.5}, vector, user_id=None, kinds=["event"],
                                             limit=1)
    assert [(h.doc_id, round(h.score, 6)) for h in nearest] == [("r3", round(said[0].score / 2, 6))]


def test_the_graph_brain_keeps_a_users_turns_from_another_asker_however_it_reaches_them(clients: Clients,
                                                                                        world: str) -> None:
    sam = clients.store.create_entity_with_ref(world, "Sam", "person", "user:sam")
    [priya] = [e.entity_id for e in search(clients, clients.world(world), "Where does Priya work?", user_id=None,
                                           now=NOW).entities]
    reached = {sam.entity_id: 1.0, priya: 0.5}  # r4 is Sam's turn and names Priya: reached both ways
    [vector] = clients.embedder.embed(["My sister works at a robotics company."])
    anyone = clients.store.entity_documents(world, reached, vector, user_id=None, kinds=["event"], limit=10)
    assert {h.doc_id for h in anyone} == {"r2", "r4", "r6"}
    assert clients.store.entity_documents(world, reached, vector, user_id="sam", kinds=["event"], limit=10) == anyone
    assert clients.store.entity_documents(world, reached, vector, user_id="dana", kinds=["event"], limit=10) == []


def test_the_graph_brain_ranks_every_kind_in_one_statement_as_it_would_each_kind_alone(clients: Clients,
                                                                                      world: str) -> None:
    reached = {e.entity_id: 1.0 / (n + 1) for n, e in enumerate(
        search(clients, clients.world(world), "What does Priya do at Acme Robotics?", user_id=None, now=NOW).entities)}
    [vector] = clients.embedder.embed(["Where does Priya work?"])
    kinds = ["event", "episodic", "semantic", "summary", "procedural", "entity"]
    together = clients.store.entity_documents(world, reached, vector, user_id=None, kinds=kinds, limit=50)
    alone = [h for kind in kinds for h in clients.store.entity_documents(world, reached, vector, user_id=None,
                                                                          kinds=[kind], limit=50)]
    assert {h.kind for h in together} >= {"event", "entity"}
    assert together == sorted(alone, key=lambda h: h.score, reverse=True)[:50]


def test_the_searchs_documents_are_the_stores_documents_with_their_similarity(clients: Clients, world: str) -> None:
    result = search(clients, clients.world(world), "Priya Acme Robotics painting", user_id=None, limit=30, now=NOW)
    refs = [(h.kind, h.doc_id) for h in result.hits]
    [vector] = clients.embedder.embed(["Priya Acme Robotics painting"])
    scored = clients.store.candidate_documents(world, refs, vector)
    assert {d.kind for d, _sim in scored} >= {"event", "entity"} and len(scored) == len(refs)
    assert [d for d, _sim in scored] == clients.store.documents(world, refs)  # validated, field for field
    for (kind, doc_id), (_doc, sim) in zip(refs, scored, strict=True):
        alone = clients.store.semantic_search(world, vector, user_id=None, kinds=[kind], limit=100, min_similarity=-1)
        assert sim == pytest.approx({h.doc_id: h.score for h in alone}[doc_id])


def test_the_searchs_documents_of_every_kind_read_a_stored_real_as_the_store_shows_it(clients: Clients) -> None:
    """The search reads its documents in binary, column by column: field for field what `documents` reads, a
    `real` included (0.3 stays 0.3, where its binary value is 0.30000001192092896)."""
    _drive(clients, "wr-docs", TURNS)
    tables = {"event": ("chat_events", "event_id"), "episodic": ("episodic_memories", "memory_id"),
              "semantic": ("semantic_memories", "memory_id"), "summary": ("memory_summaries", "summary_id"),
              "procedural": ("procedural_memories", "memory_id"), "entity": ("canonical_entities", "entity_id")}
    with clients.store.tx("wr-docs") as cur:  # type: ignore[attr-defined]
        cur.execute("UPDATE chat_events SET importance = 0.3 WHERE world_id = 'wr-docs' AND event_id = 'r1'")
        cur.execute(" UNION ALL ".join(f"(SELECT '{kind}' AS kind, {column} AS id FROM {table} "
                                       "WHERE world_id = 'wr-docs')" for kind, (table, column) in tables.items()))
        refs = [(r["kind"], r["id"]) for r in cur.fetchall()]
    [vector] = clients.embedder.embed(["Priya Acme Robotics painting"])
    scored = clients.store.candidate_documents("wr-docs", refs, vector, context_weight=0.5)
    assert {kind for kind, _id in refs} >= {"event", "entity", "semantic"} and len(scored) == len(refs)
    assert [d for d, _sim in scored] == clients.store.documents("wr-docs", refs)
    assert {d.doc_id: d.importance for d, _sim in scored}["r1"] == 0.3


# ---------------------------------------------------------------- semantic brain
def test_semantic_hits_are_at_least_as_similar_as_the_threshold(clients: Clients, world: str) -> None:
    [vector] = clients.embedder.embed(["adoption agencies and counseling"])
    hits = clients.store.semantic_search(world, vector, user_id=None, kinds=["event"], limit=10, min_similarity=0.3)
    assert hits and all(h.score >= 0.3 for h in hits)
    assert hits == sorted(hits, key=lambda h: h.score, reverse=True)
    assert hits[0].doc_id == "r3"


def test_a_filtered_vector_search_returns_a_full_result_set(clients: Clients) -> None:
    """Many rows of one user and a few of another: the HNSW scan keeps going until the filter has enough."""
    store = clients.store
    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(2_030, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    with store.tx("wr-many") as cur:  # type: ignore[attr-defined]
        cur.executemany(
            "INSERT INTO chat_events (world_id, event_id, user_id, conversation_id, role, content, content_type, "
            "occurred_at, importance, embedding) VALUES ('wr-many', %s, %s, 'c', 'user', 'x', 'userinput', now(), "
            "0.5, %s)", [(f"m{i}", "few" if i < 30 else "many", v) for i, v in enumerate(vectors)])
        cur.execute("ANALYZE chat_events")
    hits = store.semantic_search("wr-many", vectors[100], user_id="few", kinds=["event"], limit=25, min_similarity=-1)
    assert len(hits) == 25 and all(h.doc_id in {f"m{i}" for i in range(30)} for h in hits)


def test_find_similar_returns_a_memorys_neighbours_without_itself(clients: Clients, world: str) -> None:
    similar = clients.store.similar_to(world, "event", "r6", kinds=["event"], limit=3, min_similarity=-1)
    assert len(similar) == 3 and "r6" not in {h.doc_id for h in similar}


# ---------------------------------------------------------------- graph brain
@pytest.fixture(scope="module")
def chain(clients: Clients, world: str) -> dict[str, str]:
    """ann - bob - cid - dee, and ann - eve - cid: a small graph with a shared neighbour and two paths."""
    store = clients.store
    ids = {n: store.create_entity(world, n.capitalize(), "person").entity_id for n in ("ann", "bob", "cid", "dee", "eve")}
    for a, b, rel in [("ann", "bob", "knows"), ("bob", "cid", "works_with"), ("cid", "dee", "married_to"),
                      ("ann", "eve", "knows"), ("eve", "cid", "knows")]:
        store.upsert_relationship(Relationship(world_id=world, relationship_id=new_id("rel"), source_entity_id=ids[a],
                                               relation=rel, target_entity_id=ids[b], confidence=0.9, created_at=T0))
    return ids


def test_connected_entities_are_found_to_a_depth_nearest_first(clients: Clients, world: str,
                                                               chain: dict[str, str]) -> None:
    reached = dict(graph.connected(clients, world, [chain["ann"]], 2, 10))
    assert reached == {chain["bob"]: 1, chain["eve"]: 1, chain["cid"]: 2}
    assert chain["dee"] in dict(graph.connected(clients, world, [chain["ann"]], 3, 10))


def test_the_shortest_path_is_found_up_to_a_maximum_length(clients: Clients, world: str,
                                                           chain: dict[str, str]) -> None:
    path = graph.shortest_path(clients, world, chain["ann"], chain["dee"], 4)
    assert path is not None and len(path) == 3
    assert path[-1].relation == "married_to"
    assert graph.shortest_path(clients, world, chain["ann"], chain["dee"], 2) is None
    assert graph.shortest_path(clients, world, chain["ann"], chain["ann"], 2) == []


def test_entities_related_through_shared_connections(clients: Clients, world: str, chain: dict[str, str]) -> None:
    shared = graph.shared_connections(clients, world, chain["ann"], 5)
    assert shared[0][0] == chain["cid"] and shared[0][1] == 2
    assert set(shared[0][2]) == {chain["bob"], chain["eve"]}


def test_relationship_statistics_count_by_relation_and_find_the_hubs(clients: Clients, world: str,
                                                                     chain: dict[str, str]) -> None:
    stats = graph.statistics(clients, world, chain["cid"])
    assert stats["relationships"] == 3
    assert stats["by_relation"]["knows"]["count"] == 1
    assert stats["most_connected"][0] == (chain["cid"], 3)
    assert graph.relationships(clients, world, chain["ann"], 1)


def test_a_relationship_question_surfaces_connected_entities_as_serendipity(clients: Clients, world: str,
                                                                             chain: dict[str, str]) -> None:
    result = search(clients, clients.world(world), "Who depends on Ann?", user_id=None, now=NOW)
    assert result.query_class == "relationship"
    assert {e.entity_id for e in result.entities} == {chain["ann"]}
    suggested = {s.entity_id for s in result.serendipity}
    shown = {e for h in result.hits for e in h.entity_ids}
    assert suggested and not suggested & shown
    assert suggested <= {chain[n] for n in ("bob", "eve", "cid")}
    assert all(0 < s.confidence <= 1 for s in result.serendipity)  # the entity's graph weight


# ---------------------------------------------------------------- conversation context
def _conversation(clients: Clients, world: str, exchanges: int, extra: Sequence[tuple[str, str, float]] = ()) -> None:
    events = []
    for n in range(exchanges):
        events.append({"event_id": f"u{n}", "user_id": "lee", "conversation_id": "now", "role": "user",
                       "content": f"Question number {n} about the garden", "occurred_at": (T0 + timedelta(hours=n)).isoformat()})
        events.append({"event_id": f"a{n}", "user_id": "lee", "conversation_id": "now", "role": "assistant",
                       "content": f"Answer number {n} about the garden",
                       "occurred_at": (T0 + timedelta(hours=n, minutes=1)).isoformat()})
    for n, (event_id, content, _importance) in enumerate(extra):
        events.append({"event_id": event_id, "user_id": "lee", "conversation_id": "before", "role": "user",
                       "content": content, "occurred_at": (T0 - timedelta(days=10 - n)).isoformat()})
    ingest_events(clients, clients.world(world), IngestRequest.model_validate({"events": events}), now=T0)
    extract_events(clients, clients.world(world), [e["event_id"] for e in events], now=T0)


def test_a_long_conversation_gives_its_latest_eight_turns_in_order(clients: Clients) -> None:
    _conversation(clients, "wc-long", 6, [("old1", "I planted tomatoes in the garden", 0.9)])
    context = conversation_context(clients, clients.world("wc-long"), "lee", "now", "What did I plant in the garden?", NOW)
    ids = [e.event_id for e in context.events]
    assert ids == ["u2", "a2", "u3", "a3", "u4", "a4", "u5", "a5"]


def test_a_short_conversation_adds_similar_then_important_past_turns_up_to_eight(clients: Clients) -> None:
    past = [("p1", "I planted tomatoes in the garden", 0.5), ("p2", "My name is Lee and I live in Porto", 0.9),
            ("p3", "I always water the tomatoes at dawn", 0.9), ("p4", "Tomatoes need sun", 0.5),
            ("p5", "I work as a nurse", 0.9), ("p6", "The weather was nice", 0.5), ("p7", "I prefer tea", 0.9)]
    _conversation(clients, "wc-short", 2, past)
    context = conversation_context(clients, clients.world("wc-short"), "lee", "now", "Which tomatoes did I plant in the garden?", NOW)
    ids = [e.event_id for e in context.events]
    assert len(ids) == 8 and len(set(ids)) == 8
    assert {"u0", "a0", "u1", "a1"} <= set(ids)  # the whole conversation first
    assert "p1" in ids  # the most similar past turn
    times = [e.occurred_at for e in context.events]
    assert times == sorted(times)


class _FakeWeb:
    name = "fake"

    def __init__(self) -> None:
        self.asked: list[str] = []

    def search(self, query: str, limit: int) -> list[WebResult]:
        self.asked.append(query)
        return [WebResult(title="Weather", snippet="Sunny in Porto", url=None)][:limit]


def test_web_results_come_first_only_when_the_input_calls_for_them_and_search_is_enabled(clients: Clients) -> None:
    _conversation(clients, "wc-web", 1)
    web = _FakeWeb()
    enabled = Clients(**{**clients.__dict__, "web": web})
    current = conversation_context(enabled, enabled.world("wc-web"), "lee", "now", "What's the weather in Porto today?", NOW)
    assert web.asked == ["What's the weather in Porto today?"]
    assert current.lines("lee", NOW)[:2] == ["Here's current web search information relevant to your question:", "- Weather: Sunny in Porto"]
    remembered = conversation_context(enabled, enabled.world("wc-web"), "lee", "now", "What did I say about the garden?", NOW)
    assert remembered.web == [] and len(web.asked) == 1
    off = conversation_context(clients, clients.world("wc-web"), "lee", "now", "What's the weather in Porto today?", NOW)
    assert off.web == []
