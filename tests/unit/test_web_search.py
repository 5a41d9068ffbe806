"""Web search: the trigger rules, and the DuckDuckGo Instant Answer adapter over httpx (served by respx),
which reads answers, abstracts, definitions and related topics and degrades to nothing when the
service fails; it is off unless enabled."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
import respx

from engram.adapters.web_search import DUCKDUCKGO_URL, DuckDuckGoInstantAnswer
from engram.app.factory import build_web_search
from engram.config import Settings
from engram.model.heuristics import Heuristics
from engram.rules.web_trigger import needs_web_search

H = Heuristics()


@pytest.mark.parametrize(("text", "fires"), [
    ("What's the latest news about Acme?", True),
    ("weather in Porto", False),  # no current-information keyword (the Komputa list has no "weather")
    ("Who is the CEO of Acme right now?", True),
    ("What is happening in Lisbon today?", True),
    ("Is the museum open this week?", True),
    ("I went hiking today", True),  # "today" is a current-information keyword by itself
    ("What did Dana say about hiking?", False),  # a question, but about the past in memory
    ("Remember that I prefer tea", False),
])
def test_the_web_is_asked_for_current_information_and_for_questions_set_in_the_present(text: str,
                                                                                       fires: bool) -> None:
    assert needs_web_search(text, H) is fires


def test_web_search_is_off_unless_enabled() -> None:
    assert build_web_search(Settings()) is None
    assert isinstance(build_web_search(Settings(web_search=True)), DuckDuckGoInstantAnswer)


@pytest.fixture
def ddg() -> Iterator[respx.Router]:
    with respx.mock(base_url=DUCKDUCKGO_URL, assert_all_called=False) as router:
        yield router


def test_an_instant_answer_is_read_as_answer_abstract_definition_and_topics(ddg: respx.Router) -> None:
    route = ddg.get("/").respond(200, json={
        "Heading": "Lisbon", "Answer": "", "AbstractText": "Lisbon is the capital of Portugal.",
        "AbstractURL": "https://en.wikipedia.org/wiki/Lisbon", "AbstractSource": "Wikipedia",
        "Definition": "", "RelatedTopics": [
            {"Text": "Porto - second city of Portugal", "FirstURL": "https://duckduckgo.com/Porto"},
            {"Name": "Places", "Topics": [{"Text": "Sintra - a town", "FirstURL": "https://duckduckgo.com/Sintra"}]},
        ]})
    results = DuckDuckGoInstantAnswer().search("Lisbon", limit=3)
    assert [r.title for r in results] == ["Lisbon", "Porto", "Sintra"]
    assert results[0].snippet == "Lisbon is the capital of Portugal."
    assert results[0].url == "https://en.wikipedia.org/wiki/Lisbon"
    sent = route.calls.last.request.url.params
    assert sent["q"] == "Lisbon" and sent["format"] == "json" and sent["no_html"] == "1"


def test_a_direct_answer_comes_first_and_the_limit_holds(ddg: respx.Router) -> None:
    ddg.get("/").respond(200, json={"Heading": "", "Answer": "42", "AbstractText": "", "Definition": "a number",
                                    "RelatedTopics": [{"Text": "x - y", "FirstURL": "u"}]})
    results = DuckDuckGoInstantAnswer().search("answer", limit=2)
    assert [(r.title, r.snippet) for r in results] == [("Answer", "42"), ("Definition", "a number")]


@pytest.mark.parametrize("failure", [
    httpx.ConnectError("unreachable"),
    httpx.ReadTimeout("slow"),
    httpx.Response(503),
    httpx.Response(200, text="<html>not json</html>"),
    httpx.Response(200, json=["not", "an", "object"]),
])
def test_any_failure_of_the_service_yields_no_results_instead_of_an_error(ddg: respx.Router,
                                                                          failure: object) -> None:
    route = ddg.get("/")
    if isinstance(failure, Exception):
        route.side_effect = failure
    else:
        route.return_value = failure  # type: ignore[assignment]
    assert DuckDuckGoInstantAnswer().search("anything", limit=3) == []


def test_nothing_found_is_an_empty_list(ddg: respx.Router) -> None:
    ddg.get("/").respond(200, json={"Heading": "", "AbstractText": "", "RelatedTopics": []})
    assert DuckDuckGoInstantAnswer().search("zzzz", limit=3) == []
