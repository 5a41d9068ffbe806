"""How the keyword brain scores, beyond what it finds: filters add nothing to a score, and a word is as
rare as it is in the world searched, not in the whole multi-world index (tantivy: scores are BM25; the
OpenSearch adapter weights words the same way, but osmem's scores are not BM25, so only membership is
checked there)."""

from __future__ import annotations

from pathlib import Path

import pytest

from engram.adapters.opensearch_index import OpenSearchIndex
from engram.adapters.tantivy_index import TantivyIndex
from engram.model.search import IndexDocument

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


def test_the_opensearch_adapter_weights_words_by_world_and_finds_the_same_documents(osmem_url: str) -> None:
    index = OpenSearchIndex(osmem_url, index_prefix="ranking")
    index.upsert(_worlds())
    hits = index.search("a", "dana lisbon", limit=20)
    assert {h.doc_id for h in hits} == {f"a{i}" for i in range(10)} | {"a-lisbon"}
    assert index.search("a", "nowhere", limit=5) == []
