"""The three keyword-index adapters behave the same: tantivy on disk, OpenSearch (over HTTP, osmem) and
PostgreSQL full-text search (the embedded server)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engram.adapters.opensearch_index import OpenSearchIndex
from engram.adapters.postgres.base import PostgresBase
from engram.adapters.postgres_fts_index import PostgresFtsIndex
from engram.adapters.tantivy_baseline import BM25Baseline
from engram.adapters.tantivy_index import TantivyIndex
from engram.app.factory import build_index
from engram.config import Settings
from engram.errors import ConfigurationError
from engram.memory.erase import erase_user
from engram.memory.reindex import rebuild_index
from engram.model.search import IndexDocument
from engram.ports import KeywordIndex
from engram.ports.clients import Clients
from tests.builder import remember

pytestmark = pytest.mark.integration


def _doc(world: str, doc_id: str, text: str, *, user: str | None = "u1", kind: str = "event",
         speaker: str = "Dana") -> IndexDocument:
    return IndexDocument(world_id=world, doc_id=doc_id, kind=kind, text=text, user_id=user,  # type: ignore[arg-type]
                         speaker=speaker, conversation_id="c1")


@pytest.fixture(scope="module")
def fts_database(pg_url: str) -> Iterator[PostgresBase]:
    """A pool on the module's migrated database, for the full-text index."""
    db = PostgresBase(pg_url, max_size=2)
    yield db
    db.close()


@pytest.fixture(params=["tantivy", "opensearch", "postgres"])
def index(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[KeywordIndex]:
    if request.param == "tantivy":
        ix: KeywordIndex = TantivyIndex(tmp_path / "index")
    elif request.param == "opensearch":
        ix = OpenSearchIndex(request.getfixturevalue("osmem_url"), index_prefix="test")
    else:
        db: PostgresBase = request.getfixturevalue("fts_database")
        with db.all_worlds_tx() as cur:  # the app role may not TRUNCATE: a fresh index is every world's rows deleted
            cur.execute("DELETE FROM keyword_documents")
        ix = PostgresFtsIndex(db)
    ix.upsert([
        _doc("a", "1", "Dana loves hiking in the mountains near Lisbon"),
        _doc("a", "2", "Bob hikes on weekends with his dog", user="u2", speaker="Bob"),
        _doc("a", "ent_dana", "Dana", user=None, kind="entity"),
        _doc("b", "1", "Dana loves hiking in the mountains near Lisbon", user="u1"),
    ])
    yield ix


def _ids(hits: list) -> set[str]:
    return {h.doc_id for h in hits}


def test_a_search_never_returns_another_worlds_documents(index: KeywordIndex) -> None:
    for query in ["hiking", "world_id:b", "Lisbon OR dog", "NOT nothing", '"loves hiking"', "hik*"]:
        for hit in index.search("b", query):
            assert hit.doc_id == "1"
    assert _ids(index.search("b", "dog")) == set()


def test_stemming_finds_other_forms_of_a_word(index: KeywordIndex) -> None:
    assert _ids(index.search("a", "hiking")) == {"1", "2"}


def test_phrases_booleans_prefixes_and_fields_follow_the_query_syntax(index: KeywordIndex) -> None:
    assert _ids(index.search("a", '"loves hiking"')) == {"1"}
    assert _ids(index.search("a", "hiking AND NOT mountains")) == {"2"}
    assert _ids(index.search("a", "Lisbon OR dog")) == {"1", "2"}
    assert _ids(index.search("a", "hik*")) >= {"1", "2"}
    assert _ids(index.search("a", "speaker:bob")) == {"2"}


def test_the_user_filter_keeps_the_users_own_and_the_worlds_shared_documents(index: KeywordIndex) -> None:
    assert _ids(index.search("a", "dana OR hiking", user_id="u1")) == {"1", "ent_dana"}
    assert _ids(index.search("a", "dana", kinds=["entity"])) == {"ent_dana"}


def test_highlights_mark_the_matching_words(index: KeywordIndex) -> None:
    [hit] = index.search("a", "mountains")
    assert any("<b>mountains</b>" in h for h in hit.highlights)


def test_malformed_syntax_degrades_to_plain_terms_instead_of_failing(index: KeywordIndex) -> None:
    assert "1" in _ids(index.search("a", '"unbalanced lisbon'))
    assert index.search("a", "((") == []
    assert index.search("a", "") == []


def test_upsert_replaces_delete_removes_and_erasing_a_user_spares_the_rest(index: KeywordIndex) -> None:
    index.upsert([_doc("a", "2", "Bob swims now", user="u2", speaker="Bob")])
    assert _ids(index.search("a", "hiking")) == {"1"}
    index.delete("a", [("event", "1")])
    assert _ids(index.search("a", "hiking")) == set()
    assert _ids(index.search("b", "hiking")) == {"1"}
    assert index.delete_world_user("a", "u2") == 1
    assert _ids(index.search("a", "swims")) == set()
    assert _ids(index.search("b", "hiking")) == {"1"}


def test_documents_of_different_kinds_may_share_an_id_and_each_is_deleted_alone(index: KeywordIndex) -> None:
    """An event id is the client's choice: one equal to a fact's or an entity's id names another document."""
    index.upsert([_doc("a", "x7", "Dana adopted a parrot named Kiwi"),
                  _doc("a", "x7", "Dana owns parrot Kiwi", kind="semantic"),
                  _doc("a", "x7", "Kiwi the parrot", user=None, kind="entity")])
    found = {(h.kind, h.doc_id) for h in index.search("a", "parrot")}
    assert found == {("event", "x7"), ("semantic", "x7"), ("entity", "x7")}
    index.delete("a", [("event", "x7")])
    assert {(h.kind, h.doc_id) for h in index.search("a", "parrot")} == {("semantic", "x7"), ("entity", "x7")}
    index.upsert([_doc("a", "x7", "Kiwi the grey parrot", user=None, kind="entity")])  # replaces its own kind only
    assert {(h.kind, h.doc_id) for h in index.search("a", "parrot")} == {("semantic", "x7"), ("entity", "x7")}
    assert index.delete_world_user("a", "u1") >= 1
    assert {(h.kind, h.doc_id) for h in index.search("a", "kiwi")} == {("entity", "x7")}


def test_a_field_query_searches_that_field_only(index: KeywordIndex) -> None:
    assert _ids(index.search("a", "kind:entity")) == {"ent_dana"}
    assert _ids(index.search("a", "speaker:dana")) == {"1", "ent_dana"}


# Any text, and text made of what the query parsers read as syntax: quotes and backticks, brackets, range and
# field marks, the operators' words in either case, glued to ordinary words.
_SYNTAX_PIECES = ["`", '"', "'", "(", ")", "[", "]", "{", "}", ":", "^", "~", "*", "?", "+", "-", "!", "\\", "/",
                  "<", ">", "=", "&", "|", "&&", "||", "AND", "OR", "NOT", "IN", "TO", "and", "to", "Deborah`s",
                  "Lisbon", "hiking", "speaker:", "kind:entity", "5", ".", ",", "\x00", "é", "\u2019"]
ANY_TEXT = st.one_of(st.text(max_size=60), st.lists(st.sampled_from(_SYNTAX_PIECES), max_size=8).map("".join),
                     st.lists(st.sampled_from(_SYNTAX_PIECES), max_size=8).map(" ".join))


@settings(max_examples=150, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])  # searches leave the index as it was
@given(query=ANY_TEXT)
def test_any_text_searches_without_error(index: KeywordIndex, query: str) -> None:
    assert _ids(index.search("a", query)) <= {"1", "2", "ent_dana"}
    assert _ids(index.search("a", query, user_id="u1", kinds=["event"])) <= {"1"}


@settings(max_examples=300, deadline=None, derandomize=True)
@given(question=ANY_TEXT)
def test_the_bm25_baseline_ranks_any_question(question: str) -> None:
    assert set(_BASELINE.rank(question, 5)) <= {"1", "2"}


def test_the_bm25_baseline_searches_a_question_its_parser_refuses_by_its_words() -> None:
    assert _BASELINE.rank("Which of Deborah`s family went hiking?", 5)[0] == "1"
    assert _BASELINE.rank("IN [Lisbon TO", 5) == ["1"]


_BASELINE = BM25Baseline([("1", "Deborah's family loves hiking near Lisbon"), ("2", "Bob walks his dog")])


def test_the_document_matching_more_of_the_query_ranks_first(index: KeywordIndex) -> None:
    hits = index.search("a", "mountains Lisbon hiking")
    assert hits[0].doc_id == "1" and _ids(hits) == {"1", "2"}
    assert hits[0].score > hits[1].score


def test_the_keyword_index_setting_chooses_full_text_search_over_the_stores_own_pool(
        fts_database: PostgresBase, tmp_path: Path) -> None:
    chosen = build_index(Settings(keyword_index="postgres"), fts_database)  # type: ignore[arg-type]
    assert isinstance(chosen, PostgresFtsIndex) and chosen.db is fts_database
    assert isinstance(build_index(Settings(data_dir=tmp_path)), TantivyIndex)
    with pytest.raises(ConfigurationError):
        build_index(Settings(keyword_index="postgres"))


def test_an_index_shared_by_worlds_left_by_an_earlier_version_is_split_by_world_when_opened(tmp_path: Path) -> None:
    import tantivy

    from engram.adapters.tantivy_index import WORLDS, _schema

    root = tmp_path / "index"
    root.mkdir()
    shared = tantivy.Index(_schema(), path=str(root))  # the earlier layout: every world in the root's one index
    writer = shared.writer(heap_size=15_000_000, num_threads=1)
    for world, doc_id, kind, user, text in [("a", "1", "event", "u1", "Dana loves hiking near Lisbon"),
                                            ("a", "ent_dana", "entity", "", "Dana"),
                                            ("b", "1", "event", "u2", "Bob hikes with his dog")]:
        writer.add_document(tantivy.Document(key=f"{world}\x1f{doc_id}", world_id=world, doc_id=doc_id, kind=kind,
                                             user_id=user, conversation="c1", speaker="Dana", text=text))
    writer.commit()
    writer.wait_merging_threads()
    del writer, shared

    index = TantivyIndex(root)
    assert {(h.kind, h.doc_id) for h in index.search("a", "dana")} == {("event", "1"), ("entity", "ent_dana")}
    assert _ids(index.search("a", "hiking", user_id="u1")) == {"1"} and _ids(index.search("a", "dog")) == set()
    assert _ids(index.search("b", "hiking")) == {"1"}
    assert [p.name for p in root.iterdir()] == [WORLDS]  # the shared index is gone
    assert _ids(TantivyIndex(root).search("b", "dog")) == {"1"}  # and opening again changes nothing


def test_a_document_of_another_world_in_a_worlds_index_is_never_returned(tmp_path: Path) -> None:
    # Search filters on no world (a world's index holds its own documents alone): each hit's world is checked, so a
    # document written to the wrong directory, which no code path does, still stays where it belongs.
    import tantivy

    index = TantivyIndex(tmp_path / "index")
    index.upsert([_doc("a", "1", "Dana loves hiking near Lisbon")])
    with index._writer("a") as (_, writer):
        writer.add_document(tantivy.Document(key="event\x1f2", world_id="b", doc_id="2", kind="event", user_id="u1",
                                             conversation="c1", speaker="Bob", text="Bob loves hiking with his dog"))
    for user, kinds in [(None, None), ("u1", None), (None, ["event"])]:
        assert _ids(index.search("a", "hiking", user_id=user, kinds=kinds)) == {"1"}
        assert _ids(index.search("a", "dog", user_id=user, kinds=kinds)) == set()


def _drive(clients: Clients, world: str, events: list[dict[str, str]]) -> None:
    """Events ingested and enriched, their documents indexed through the outbox."""
    remember(clients, world, events)


def test_an_event_whose_id_is_an_entitys_keeps_the_entity_findable_through_enrichment_and_erasure(
        clients: Clients) -> None:
    def drive(events: list[dict[str, str]]) -> None:
        _drive(clients, "ids", events)

    drive([{"event_id": "ids-1", "user_id": "ana", "conversation_id": "c", "role": "user",
            "content": "My sister Priya works at Acme Robotics in Lisbon."}])
    [entity] = [h for h in clients.index.search("ids", "Priya", kinds=["entity"])]
    # Another user sends an event under the entity's id: a document of its own, beside the entity's.
    drive([{"event_id": entity.doc_id, "user_id": "eve", "conversation_id": "e", "role": "user",
            "content": "Nothing to see here, just weather talk."}])
    assert {(h.kind, h.doc_id) for h in clients.index.search("ids", "Priya OR weather")} >= {
        ("entity", entity.doc_id), ("event", entity.doc_id)}
    erase_user(clients, clients.world("ids"), "eve")
    found = {(h.kind, h.doc_id) for h in clients.index.search("ids", "Priya OR weather")}
    assert ("entity", entity.doc_id) in found and ("event", entity.doc_id) not in found


@pytest.fixture(scope="module")
def rebuilt_world(clients: Clients) -> str:
    """A world enriched into the database (and the clients' own index)."""
    _drive(clients, "rebuilt", [
        {"event_id": "r-1", "user_id": "ana", "conversation_id": "c", "role": "user",
         "content": "My sister Priya works at Acme Robotics in Lisbon."},
        {"event_id": "r-2", "user_id": "ana", "conversation_id": "c", "role": "user", "content": "Priya hates rain."}])
    return "rebuilt"


def test_a_world_is_rebuilt_from_the_database_and_forgets_what_the_database_no_longer_holds(
        index: KeywordIndex, clients: Clients, rebuilt_world: str) -> None:
    index.upsert([_doc(rebuilt_world, "gone", "Priya left a note nobody keeps")])
    written = rebuild_index(clients.store, index, rebuilt_world)
    found = {(h.kind, h.doc_id) for h in index.search(rebuilt_world, "Priya", limit=50)}
    assert {("event", "r-1"), ("event", "r-2")} <= found and any(kind == "entity" for kind, _ in found)
    assert ("event", "gone") not in found
    assert written == {rebuilt_world: len(clients.store.indexed_refs(rebuilt_world))}
    assert _ids(index.search("a", "hiking")) == {"1", "2"}  # the other worlds as they were
    assert rebuilt_world in clients.store.indexed_worlds()


def test_engram_reindex_rebuilds_every_worlds_index_in_the_data_directory(
        clients: Clients, rebuilt_world: str, pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    from engram.config import get_settings
    from engram.local.cli import main

    for name, value in {"DATABASE_URL": pg_url, "ENGRAM_DATA_DIR": str(tmp_path), "ENGRAM_EMBEDDER": "hash",
                        "ENGRAM_KEYWORD_INDEX": "tantivy"}.items():
        monkeypatch.setenv(name, value)
    get_settings.cache_clear()
    try:
        assert main(["reindex"]) == 0
    finally:
        get_settings.cache_clear()
    assert f"{rebuilt_world}: " in capsys.readouterr().out
    assert {"r-1", "r-2"} <= _ids(TantivyIndex(tmp_path / "index").search(rebuilt_world, "Priya"))
