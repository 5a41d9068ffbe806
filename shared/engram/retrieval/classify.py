"""Query classification: how a question reads decides how much each brain counts."""

from __future__ import annotations

import re
from typing import Literal

QueryClass = Literal["temporal", "entity", "exploratory", "factual"]
_TEMPORAL = re.compile(r"\b(when|what time|what date|how long|before|after|last|recent|yesterday|ago|year|month|"
                       r"week|date)\b", re.I)
_EXPLORATORY = re.compile(r"\b(why|how|tell me about|describe|explain|what do you know|summar)", re.I)
_PROPER = re.compile(r"(?<!^)(?<![.!?]\s)\b[A-Z][a-z]+")

WEIGHTS: dict[str, dict[str, float]] = {
    "temporal": {"keyword": 1.0, "semantic": 0.8, "graph": 0.5},
    "entity": {"keyword": 1.0, "semantic": 0.8, "graph": 1.2},
    "exploratory": {"keyword": 0.8, "semantic": 1.2, "graph": 0.8},
    "factual": {"keyword": 1.0, "semantic": 1.0, "graph": 0.8},
}


def classify_query(query: str) -> QueryClass:
    if _TEMPORAL.search(query):
        return "temporal"
    if _EXPLORATORY.search(query):
        return "exploratory"
    if _PROPER.search(query):
        return "entity"
    return "factual"
