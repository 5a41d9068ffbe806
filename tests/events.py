"""Sample events from `events/`, as the handlers receive them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

EVENTS = Path(__file__).resolve().parents[1] / "events"


def load_event(name: str) -> dict[str, Any]:
    """The sample event `events/<name>` (e.g. "query/ask.json") as a dict."""
    return dict(json.loads((EVENTS / name).read_text(encoding="utf-8")))
