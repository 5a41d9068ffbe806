"""Web search through the DuckDuckGo Instant Answer API (httpx): an abstract, a direct answer, a definition
and related topics, no key needed. Off unless enabled. Any failure (unreachable, slow, an error status,
a body that is not the expected JSON) yields no results: a conversation never fails for the web."""

from __future__ import annotations

from typing import Any

import httpx

from engram.model.web import WebResult
from engram.observability import logger

DUCKDUCKGO_URL = "https://api.duckduckgo.com/"


class DuckDuckGoInstantAnswer:
    """WebSearch port."""

    name = "duckduckgo-instant-answer"

    def __init__(self, *, base_url: str = DUCKDUCKGO_URL, timeout_s: float = 3.0,
                 client: httpx.Client | None = None) -> None:
        self.base_url = base_url
        self.client = client or httpx.Client(timeout=httpx.Timeout(timeout_s), follow_redirects=True,
                                             headers={"User-Agent": "engram (memory service)"})

    def search(self, query: str, limit: int) -> list[WebResult]:
        params = {"q": query, "format": "json", "no_html": "1", "skip_disambig": "1", "no_redirect": "1"}
        try:
            response = self.client.get(self.base_url, params=params)
            response.raise_for_status()
            return _results(response.json(), limit)
        except (httpx.HTTPError, ValueError, TypeError, KeyError, AttributeError) as exc:
            logger.warning("web search unavailable; going on without it", extra={"error": exc.__class__.__name__})
            return []


def _results(body: dict[str, Any], limit: int) -> list[WebResult]:
    found: list[WebResult] = []
    heading = str(body.get("Heading") or "").strip()
    if body.get("Answer"):
        found.append(WebResult(title=heading or "Answer", snippet=str(body["Answer"]).strip(), url=None))
    if body.get("AbstractText"):
        found.append(WebResult(title=heading or str(body.get("AbstractSource") or "Abstract"),
                               snippet=str(body["AbstractText"]).strip(), url=body.get("AbstractURL") or None))
    if body.get("Definition"):
        found.append(WebResult(title=heading or "Definition", snippet=str(body["Definition"]).strip(),
                               url=body.get("DefinitionURL") or None))
    for topic in _topics(body.get("RelatedTopics") or []):
        text = str(topic.get("Text") or "").strip()
        if text:
            found.append(WebResult(title=text.split(" - ")[0][:80], snippet=text, url=topic.get("FirstURL") or None))
    return found[:limit]


def _topics(topics: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Related topics, groups ("Topics": [...]) flattened in order."""
    out: list[dict[str, Any]] = []
    for topic in topics:
        out += _topics(topic["Topics"]) if isinstance(topic.get("Topics"), list) else [topic]
    return out
