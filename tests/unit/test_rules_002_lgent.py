"""L-gent query (seed 002), rule by rule: the keyword brain's query syntax, the semantic brain's threshold,
query classification and its weights, reciprocal rank fusion, the response, interpretation and serendipity.
Rows are the document's own examples and lists; docs/rules.md maps each to its code."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime, timedelta

import pytest

from engram.adapters.tantivy_index import TantivyIndex
from engram.model.heuristics import DEFAULT_HEURISTICS, Heuristics
from engram.model.search import IndexDocument, KeywordHit, SearchResponse, SemanticHit, Suggestion
from engram.model.world import World
from engram.retrieval.classify import EXACT_NAME, RELATIONSHIP_KEYWORDS, TYPE_MARKERS, classify_query
from engram.retrieval.fusion import fuse, key
from engram.retrieval.search import INTERPRETED_AS, find_similar, search
from engram.rules.keyword_query import has_syntax
from engram.rules.relevance import rrf
from tests.fakes.conversations import T0, remember, said
from tests.fakes.ports import FakePorts

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)


# ---------------------------------------------------------------- Brain 1: keyword search (BM25), query syntax
# The catalog of the document's examples, as engram documents (engram's fields: text, speaker, kind, conversation).
CATALOG = {
    "news": "NewsParser reads news feeds",
    "pdf": "pdf parser for reports",
    "extract": "pdf extractor of tables",
    "html": "html parser for web pages",
    "summ": "summarizer that writes an executive summary",
    "fin": "financial analysis of quarterly reports",
}


@pytest.fixture(scope="module")
def keyword_index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TantivyIndex]:
    index = TantivyIndex(tmp_path_factory.mktemp("lgent") / "index")
    index.upsert([IndexDocument(world_id="w", doc_id=doc_id, kind="event", text=text, user_id="u",
                                speaker="F-gent" if doc_id == "summ" else "Dana", conversation_id="c")
                  for doc_id, text in CATALOG.items()])
    index.upsert([IndexDocument(world_id="w", doc_id="parser", kind="entity", text="parser", user_id=None)])
    yield index
    index.close()


@pytest.mark.parametrize(("form", "query", "found"), [
    ("simple terms", "summarizer", {"summ"}),
    ("simple terms", "pdf parser", {"pdf", "extract", "html", "parser"}),
    ("exact phrase", '"executive summary"', {"summ"}),
    ("exact phrase", '"financial analysis"', {"fin"}),
    ("field-specific", "speaker:F-gent", {"summ"}),
    ("boolean", "pdf AND (parser OR extractor)", {"pdf", "extract"}),
    ("boolean", "(pdf OR html) AND parser", {"pdf", "html"}),
    ("wildcard", "News*", {"news"}),
])
def test_the_keyword_brain_answers_each_form_of_the_query_syntax(keyword_index: TantivyIndex, form: str, query: str,
                                                                 found: set[str]) -> None:
    assert {h.doc_id for h in keyword_index.search("w", query, limit=10)} == found, form


@pytest.mark.parametrize(("query", "syntax"), [
    ("pdf parser", False),
    ('"financial analysis"', True),
    ("speaker:Dana", True),
    ("pdf AND (parser OR extractor)", True),
    ("News*", True),
])
def test_a_query_in_the_syntax_reaches_the_keyword_brain_as_written_and_plain_terms_as_words(
        query: str, syntax: bool) -> None:
    assert has_syntax(query) is syntax


def test_filters_narrow_the_keyword_search_to_the_kinds_asked(keyword_index: TantivyIndex) -> None:
    assert {h.doc_id for h in keyword_index.search("w", "parser", kinds=["entity"])} == {"parser"}


def test_a_keyword_result_has_an_id_a_bm25_score_and_highlighted_snippets(keyword_index: TantivyIndex) -> None:
    assert {"doc_id", "score", "highlights"} <= set(KeywordHit.model_fields)
    [hit] = keyword_index.search("w", "summarizer")
    assert hit.score > 0 and hit.highlights == ["<b>summarizer</b> that writes an executive summary"]


def test_each_brain_returns_ten_results_unless_asked_otherwise() -> None:
    assert _default_limit(TantivyIndex.search) == 10
    assert _default_limit(search) == 10 and DEFAULT_HEURISTICS.retrieval.search_limit == 10


def _default_limit(function: Callable[..., object]) -> object:
    return inspect.signature(function).parameters["limit"].default


# ---------------------------------------------------------------- Brain 2: semantic search
def test_the_semantic_brain_keeps_neighbours_at_least_half_similar(monkeypatch: pytest.MonkeyPatch) -> None:
    ports = FakePorts()
    world = World("wx")
    remember(ports, world, said("I love hiking in the mountains on weekends."))
    asked: list[float] = []
    inner = ports.store.semantic_search

    def recording(world_id: str, embedding: Sequence[float], **kwargs: object) -> list[SemanticHit]:
        asked.append(kwargs["min_similarity"])  # type: ignore[arg-type]
        return inner(world_id, embedding, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(ports.store, "semantic_search", recording)
    search(ports, world, "something about the outdoors", user_id=None, now=T0 + timedelta(hours=1))
    assert DEFAULT_HEURISTICS.retrieval.semantic_brain_min_similarity == 0.5 and asked == [0.5]


def test_find_similar_returns_five_neighbours_without_the_memory_itself() -> None:
    ports = FakePorts()
    world = World("wx", DEFAULT_HEURISTICS.with_overrides({"semantic_min_similarity": -1.0}))
    remember(ports, world, said(*[f"I went hiking near Lisbon on day {n}." for n in range(8)]))
    similar = find_similar(ports, world, "event", "e1")
    assert _default_limit(find_similar) == 5
    assert len(similar) == 5 and "e1" not in [h.doc_id for h in similar]


# ---------------------------------------------------------------- query classification
@pytest.mark.parametrize(("query", "query_type"), [
    # EXACT_NAME: ^[A-Z][a-zA-Z]*(_v\d+)?$
    ("NewsParser", "exact_name"),
    ("Summarizer_v4", "exact_name"),
    ("PDFParser_v2", "exact_name"),
    ("SentimentEngine", "exact_name"),
    ("Implements", "exact_name"),  # checked before the relationship keywords
    ("newsParser", "semantic"),
    ("News Parser", "semantic"),
    ("v2.x", "semantic"),
    ("forged_by:F-gent", "semantic"),
    ("authentication", "semantic"),
    # TYPE_QUERY: '->' in query or 'input:' in query or 'output:' in query
    ("path from RawHTML -> Summary", "type"),
    ("input: PDF", "type"),
    ("output: SentimentScore", "type"),
    ("PDF -> SentimentScore depends", "type"),  # checked before the relationship keywords
    ("Input: PDF", "semantic"),  # the markers are matched as written
    # RELATIONSHIP: 'depends', 'compatible', 'implements' anywhere in query.lower()
    ("what depends on StockTicker?", "relationship"),
    ("agents compatible with NewsParser output", "relationship"),
    ("what Implements the Parser protocol", "relationship"),
    ("incompatible formats", "relationship"),
    ("what does StockTicker depend on?", "semantic"),
    # SEMANTIC_INTENT: the default
    ("Find an agent that processes PDF financial documents", "semantic"),
    ("something that cleans up messy text", "semantic"),
    ("like a translator but for data formats", "semantic"),
    ("what exists for sentiment analysis?", "semantic"),
    ("process financial PDFs and extract sentiment", "semantic"),
])
def test_a_query_is_classified_by_the_documents_rules_in_their_order(query: str, query_type: str) -> None:
    assert classify_query(query) == query_type


def test_the_classification_rules_are_the_documents_pattern_markers_and_keywords() -> None:
    assert EXACT_NAME.pattern == r"^[A-Z][a-zA-Z]*(_v\d+)?$"
    assert TYPE_MARKERS == ("->", "input:", "output:")
    assert RELATIONSHIP_KEYWORDS == ("depends", "compatible", "implements")
    assert DEFAULT_HEURISTICS.retrieval.query_classifier == "lgent"


def test_a_world_may_read_conversational_questions_instead() -> None:
    tuned = DEFAULT_HEURISTICS.with_overrides({"query_classifier": "conversational"})
    assert tuned.retrieval.query_classifier == "conversational"
    assert classify_query("When did Dana move to Lisbon?", tuned.retrieval.query_classifier) == "temporal"
    assert classify_query("When did Dana move to Lisbon?") == "semantic"


@pytest.mark.parametrize(("query_type", "keyword", "semantic", "graph"), [
    ("exact_name", 0.8, 0.1, 0.1),
    ("type", 0.2, 0.2, 0.6),
    ("relationship", 0.1, 0.2, 0.7),
    ("semantic", 0.2, 0.6, 0.2),
])
def test_each_query_type_weights_the_three_brains_as_the_document_states(query_type: str, keyword: float,
                                                                          semantic: float, graph: float) -> None:
    weights = DEFAULT_HEURISTICS.retrieval.fusion_weights[query_type]
    # engram's fourth brain (expansion: multi-hop turns) weighs apart from the document's three
    assert {b: w for b, w in weights.items() if b != "expansion"} == {"keyword": keyword, "semantic": semantic,
                                                                       "graph": graph}


# ---------------------------------------------------------------- reciprocal rank fusion
def test_the_rrf_constant_is_sixty() -> None:
    assert DEFAULT_HEURISTICS.retrieval.rrf_k == 60


@pytest.mark.parametrize(("rankings", "expected"), [
    ({"keyword": ["a", "b"]}, {"a": 0.8 / 61, "b": 0.8 / 62}),
    ({"keyword": ["a"], "semantic": ["b", "a"]}, {"a": 0.8 / 61 + 0.1 / 62, "b": 0.1 / 61}),
    ({"keyword": [], "semantic": [], "graph": ["c"]}, {"c": 0.1 / 61}),
])
def test_rrf_sums_each_brains_weight_over_k_plus_its_rank(rankings: dict[str, list[str]],
                                                          expected: dict[str, float]) -> None:
    weights = DEFAULT_HEURISTICS.retrieval.fusion_weights["exact_name"]
    assert rrf(rankings, weights, 60) == pytest.approx(expected)


def test_with_the_other_signals_off_the_fused_order_is_the_weighted_rrf_order() -> None:
    pure = Heuristics().with_overrides({"fusion_match_weight": 0.0, "fusion_signal_weight": 0.0,
                                        "fusion_speaker_weight": 0.0, "fusion_time_weight": 0.0,
                                        "search_neighbour_weight": 0.0, "search_session_weight": 0.0})
    docs = {key("event", d): IndexDocument(world_id="w", doc_id=d, kind="event", text=d, importance=i)
            for d, i in [("a", 0.1), ("b", 0.9), ("c", 0.5)]}
    rankings = {"keyword": ["event:c", "event:a"], "semantic": ["event:a", "event:b"], "graph": ["event:b"]}
    weights = pure.retrieval.fusion_weights["semantic"]
    scored = fuse(rankings, weights, {"event:c": 9.0}, {"event:b": 0.9}, docs, {}, [], NOW, pure)
    expected = rrf(rankings, weights, 60)
    assert sorted(scored, key=lambda k: -scored[k].score) == sorted(expected, key=lambda k: -expected[k])


# ---------------------------------------------------------------- the response, interpretation, serendipity
def test_the_response_carries_results_serendipity_interpretation_total_matches_and_time() -> None:
    assert {"hits", "serendipity", "interpretation", "total_matches", "search_time_ms"} <= set(
        SearchResponse.model_fields)
    assert {"entity_id", "reason", "confidence"} <= set(Suggestion.model_fields)


@pytest.mark.parametrize(("query_type", "said"), [
    ("exact_name", "exact name"),
    ("type", "type query"),
    ("relationship", "relationship"),
    ("semantic", "semantic intent"),
])
def test_the_interpretation_names_the_query_type_as_the_document_does(query_type: str, said: str) -> None:
    assert INTERPRETED_AS[query_type] == said  # type: ignore[index]


def test_a_search_explains_how_it_understood_the_query() -> None:
    ports = FakePorts()
    remember(ports, World("wx"), said("I love hiking in the mountains on weekends."))
    result = search(ports, World("wx"), "something that cleans up messy text", user_id=None,
                    now=T0 + timedelta(hours=1))
    assert result.interpretation.startswith("Understood as semantic intent; brains weighted keyword 0.2, "
                                            "semantic 0.6, graph 0.2")
    assert result.total_matches >= len(result.hits) and result.search_time_ms >= 0
