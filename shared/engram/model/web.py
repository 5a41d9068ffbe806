"""What a web search returns: a few short, attributed snippets."""

from __future__ import annotations

from engram.model.common import Frozen


class WebResult(Frozen):
    title: str
    snippet: str
    url: str | None = None
