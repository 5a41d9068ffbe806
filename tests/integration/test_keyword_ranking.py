"""How the keyword brain scores, beyond what it finds: filters add nothing to a score, and a word is as
rare as it is in the world searched, not in the whole multi-world index (tantivy: scores are BM25; the
OpenSearch adapter weights words the same way, but osmem's scores are not BM25, so only membership is
checked there)."""

from __future__ import annotations

from pathlib import Path

import pytest

from engram.adapters.opensearch_index import OpenSearchIndex
from engram.adapters.postgres.base import PostgresBase
from engram.adapters.postgres_fts_index import PostgresFtsIndex
from engram.adapters.tantivy_index import TantivyIndex
from engram.model.search import IndexDocument
from engram.ports import KeywordIndex

pytestmark = pytest.mark.integration


def _doc(world: str, doc_id: str, text: str, kind: str = "event") -> IndexDocument:
    return IndexDocument(world_id=world, doc_id=doc_id, kind=kind, text=text, user_id="u", speaker="")  # type: ignore[arg-type]


def _worlds() -> list[IndexDocument]:
    """World "a": every turn names Dana, one names Lisbon. World "b": Lisbon everywhere, no Dana."""
    docs = [_doc("a", f"a{i}", f"Dana said thing number {i}") for i in range(10)]
    docs.append(_doc("a", "a-lisbon", "Dana moved to Lisbon"))
    docs += [_doc("b", f"b{i}", f"Lisbon is lovely, part {i}") for i in range(60)]
    return docs


def test_a_word_every_turn_of_a_world_carries_weighs_little_in_that_world(tmp_path: Path) -> None:
    index = TantivyIndex(tmp_path / "index")
    index.upsert(_worlds())
    hits = index.search("a", "dana lisbon", limit=5)
    assert hits[0].doc_id == "a-lisbon"
    # Lisbon is common in the index but rare in world a; Dana the other way round: Lisbon decides.
    assert hits[1].score < 0.5 * hits[0].score
    assert all(h.doc_id.startswith("a") for h in hits)


def test_filters_narrow_the_search_and_add_nothing_to_a_score(tmp_path: Path) -> None:
    index = TantivyIndex(tmp_path / "index")
    index.upsert([*(_doc("w", f"e{i}", f"an event about tea {i}") for i in range(20)),
                  _doc("w", "ent", "tea", kind="entity"), _doc("w", "ev", "tea", kind="event")])
    hits = {h.doc_id: h.score for h in index.search("w", "tea", kinds=["event", "entity"], limit=30)}
    assert hits["ent"] == pytest.approx(hits["ev"])  # a rare kind is no reason to rank higher


def test_searching_every_kind_scores_as_searching_without_kinds_and_a_word_nobody_wrote_changes_nothing(
        tmp_path: Path) -> None:
    index = TantivyIndex(tmp_path / "index")
    index.upsert([*(_doc("w", f"e{i}", f"an event about tea {i} and cake" if i % 3 else f"tea {i}") for i in range(20)),
                  _doc("w", "ent", "tea", kind="entity"), _doc("w", "fact", "tea with cake", kind="semantic")])
    index.upsert([_doc("w", "e1", "an event about tea 1 and more cake")])  # a document replaced: one deleted
    every = ["event", "episodic", "semantic", "summary", "procedural", "entity"]

    def found(query: str, **scope: object) -> list[tuple[str, float, list[str]]]:
        return [(h.doc_id, h.score, h.highlights) for h in index.search("w", query, limit=30, **scope)]  # type: ignore[arg-type]

    assert found("tea cake", kinds=every) == found("tea cake") == found("tea cake zebra", kinds=every)
    assert [d for d, _, _ in found("tea cake", kinds=["event", "entity"])] != [d for d, _, _ in found("tea cake")]


def test_the_opensearch_adapter_weights_words_by_world_and_finds_the_same_documents(osmem_url: str) -> None:
    index = OpenSearchIndex(osmem_url, index_prefix="ranking")
    index.upsert(_worlds())
    hits = index.search("a", "dana lisbon", limit=20)
    assert {h.doc_id for h in hits} == {f"a{i}" for i in range(10)} | {"a-lisbon"}
    assert index.search("a", "nowhere", limit=5) == []


# ---------------------------------------------------------------- the scoring side channel (issue 17, finding 4)
# A world that wants to know whether another world ever used a word holds two documents of its own, one with
# the word and one with a word nobody else has, and compares their ranks: if the index scored with statistics
# of every world, the word being common elsewhere would lower its weight and flip the ranks. Each query form
# reaches the engine by its own path (plain words are weighted by hand, the rest goes through its parser).
GUESSES = ("falcon", "quartz", "meadow", "harbor", "violet", "copper", "lantern", "glacier", "saffron", "tundra")
FORMS = {
    "plain words": "{word} {anchor}",
    "or": "{word} OR {anchor}",
    "phrase": '"{word} note" OR "{anchor} note"',
    "field": "text:{word} OR text:{anchor}",
    "prefix": "{word} {anchor} no*",
    "and not": "({word} OR {anchor}) AND NOT absent",
}


def _prober(world: str) -> list[IndexDocument]:
    """The probing world: for each guess, a document saying it twice and one saying an anchor of its own once.
    Scored with the probing world's statistics only, the first always ranks first under BM25; with every world's,
    the second overtakes it when the guess is common elsewhere."""
    return [doc for i, word in enumerate(GUESSES) for doc in (
        _doc(world, f"{word}-probe", f"{word} {word} note"), _doc(world, f"{word}-anchor", f"anchor{i} note note"))]


def _other(world: str, *, with_guesses: bool) -> list[IndexDocument]:
    """The other world: the same number of documents of the same lengths, with the guessed words or without."""
    return [_doc(world, f"{i}-{n}", f"we spoke about {word if with_guesses else f'topic{i}'} today")
            for i, word in enumerate(GUESSES) for n in range(20)]


def _scoring_index(kind: str, name: str, tmp_path: Path, request: pytest.FixtureRequest) -> KeywordIndex:
    if kind == "tantivy":
        return TantivyIndex(tmp_path / name)
    if kind == "opensearch":
        return OpenSearchIndex(request.getfixturevalue("osmem_url"), index_prefix=name)
    db = PostgresBase(request.getfixturevalue("pg_url"), max_size=2)
    request.addfinalizer(db.close)
    return PostgresFtsIndex(db)


@pytest.mark.parametrize("form", list(FORMS))
@pytest.mark.parametrize("kind", ["tantivy", "opensearch", "postgres"])
def test_a_worlds_scores_tell_nothing_of_the_words_of_another_world(
        kind: str, form: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    seen: dict[bool, list[list[tuple[str, float]]]] = {}
    for with_guesses in (False, True):
        name = f"scoring-{with_guesses}".lower()
        index = _scoring_index(kind, name, tmp_path, request)
        prober, other = f"{name}-prober", f"{name}-other"  # worlds of their own where the index is shared
        index.upsert([*_prober(prober), *_other(other, with_guesses=with_guesses)])
        seen[with_guesses] = [
            [(h.doc_id, round(h.score, 6)) for h in index.search(prober, FORMS[form].format(word=word, anchor=f"anchor{i}"))]
            for i, word in enumerate(GUESSES)]
    distinguishable = [word for word, absent, present in zip(GUESSES, seen[False], seen[True], strict=True)
                       if absent != present]
    assert distinguishable == [], f"{len(distinguishable)} of {len(GUESSES)} guesses told apart by {form!r}"
    for word, hits in zip(GUESSES, seen[True], strict=True):  # and the probe found what it asked for
        assert {doc_id for doc_id, _ in hits} >= {f"{word}-probe", f"{word}-anchor"}


def test_each_world_has_an_opensearch_index_of_its_own(osmem_url: str) -> None:
    index = OpenSearchIndex(osmem_url, index_prefix="own")
    index.upsert(_worlds())
    names = sorted(index.client.indices.get(index="own-*"))
    held = {name: {d["_source"]["world_id"] for d in index.client.search(
        index=name, body={"size": 100, "query": {"match_all": {}}})["hits"]["hits"]} for name in names}
    assert sorted(map(sorted, held.values())) == [["a"], ["b"]]  # OpenSearch scores with a shard's statistics
