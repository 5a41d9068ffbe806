"""QueryContext: what the model sees for one query, stored under the query id between steps."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from engram.model.queries import ContextItem, InfoRequest


class ContextStats(BaseModel):
    items: int
    characters: int
    estimated_tokens: int


class QueryContext(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query_id: str
    world_id: str
    question: str
    items: list[ContextItem] = Field(default_factory=list)
    conversation: list[str] = Field(default_factory=list)  # formatted conversation-context lines
    expanded_entity_ids: list[str] = Field(default_factory=list)
    conversation_ids: list[str] = Field(default_factory=list)  # conversations the model may ask about
    pending_requests: list[InfoRequest] = Field(default_factory=list)  # asked for, not yet fulfilled

    def merge(self, items: list[ContextItem]) -> int:
        """Add items not already present (by kind and id); return how many were new."""
        seen = {(i.kind, i.id) for i in self.items}
        new = [i for i in items if (i.kind, i.id) not in seen]
        self.items.extend(new)
        return len(new)

    def mark_expanded(self, entity_id: str) -> None:
        if entity_id not in self.expanded_entity_ids:
            self.expanded_entity_ids.append(entity_id)

    def all_entity_ids(self) -> list[str]:
        ids: dict[str, None] = {}
        for item in self.items:
            if item.kind == "entity":
                ids[item.id] = None
            for eid in item.entity_ids:
                ids[eid] = None
        return list(ids)

    def expandable_entity_ids(self) -> list[str]:
        return [e for e in self.all_entity_ids() if e not in self.expanded_entity_ids]

    def cited_ids(self) -> set[str]:
        return {i.id for i in self.items}

    def stats(self, chars_per_token: float = 4.0) -> ContextStats:
        chars = sum(len(i.text) for i in self.items) + sum(len(c) for c in self.conversation)
        return ContextStats(items=len(self.items), characters=chars, estimated_tokens=int(chars / chars_per_token))
