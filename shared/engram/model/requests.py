"""What the model may ask for: the capabilities of the query loop and one request for more information
(shared by the loop's NeedsMoreInfo and the research plan's sub-questions)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from engram.model.common import Frozen

Capability = Literal[
    "expand_entity",
    "expand_entities",
    "search_entities",
    "get_entity_by_name",
    "get_relationships",
    "list_entity_definitions",
    "get_entities_by_definition",
    "search_memories",
    "get_conversation_history",
    "get_entity_timeline",
    "find_path",
]


class InfoRequest(Frozen):
    capability: Capability
    params: dict[str, Any] = Field(default_factory=dict)
    reason: str = ""
