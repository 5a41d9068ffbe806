"""The web search port: current information for the conversation context."""

from __future__ import annotations

from typing import Protocol

from engram.model.web import WebResult


class WebSearch(Protocol):
    """Current information from the web, for questions the trigger rules send there. An adapter degrades
    to no results (never an error) when the service is unreachable."""

    name: str

    def search(self, query: str, limit: int) -> list[WebResult]: ...
