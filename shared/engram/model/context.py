"""QueryContext: what the model sees for one query, stored under the query id between steps.

It holds full entities and entity summaries, relationships, memories and events (all as context
items), and the conversation context. An entity arrives as a summary; expanding it brings its full
record, which replaces the summary in place."""

from __future__ import annotations

from collections import Counter
from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

from engram.model.queries import ContextItem, InfoRequest


class ContextStats(BaseModel):
    items: int
    characters: int
    estimated_tokens: int
    full_entities: int = 0
    entity_summaries: int = 0
    by_kind: dict[str, int] = Field(default_factory=dict)


class QueryContext(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query_id: str
    world_id: str
    question: str
    items: list[ContextItem] = Field(default_factory=list)
    conversation: list[str] = Field(default_factory=list)  # formatted conversation-context lines
    expanded_entity_ids: list[str] = Field(default_factory=list)
    conversation_ids: list[str] = Field(default_factory=list)  # conversations the model may ask about
    definitions: list[str] = Field(default_factory=list)  # entity definitions (types) the model has been shown
    pending_requests: list[InfoRequest] = Field(default_factory=list)  # asked for, not yet fulfilled
    missing: list[str] = Field(default_factory=list)  # why a request could not be served: said in the forced answer
    # the world's `query_referenced_entities`: may requests also name entities other items only mention?
    referenced_entities: bool = False
    # the world's `query_memory_capabilities`: are engram's capabilities beyond Resonance's six offered?
    memory_capabilities: bool = True
    as_of: datetime | None = None  # the query's `as_of`: every capability reads memory as it stood then

    def merge(self, items: list[ContextItem]) -> int:
        """Add items not already present (by kind and id); a full entity record replaces its summary.
        Returns how many items were new or upgraded."""
        position = {(i.kind, i.id): n for n, i in enumerate(self.items)}
        changed = 0
        for item in items:
            at = position.get((item.kind, item.id))
            if at is None:
                position[(item.kind, item.id)] = len(self.items)
                self.items.append(item)
                changed += 1
            elif item.kind == "entity" and item.full and not self.items[at].full:
                self.items[at] = item.model_copy(update={"score": max(item.score, self.items[at].score)})
                changed += 1
        return changed

    def mark_expanded(self, entity_id: str) -> None:
        if entity_id not in self.expanded_entity_ids:
            self.expanded_entity_ids.append(entity_id)

    def all_entity_ids(self) -> list[str]:
        """Every entity the context knows: those held in full or as a summary; with `referenced_entities`, also
        those the other items only mention (after the held ones)."""
        ids = dict.fromkeys(item.id for item in self.items if item.kind == "entity")
        if self.referenced_entities:
            ids.update(dict.fromkeys(eid for item in self.items for eid in item.entity_ids))
        return list(ids)

    def full_entity_ids(self) -> list[str]:
        return [i.id for i in self.items if i.kind == "entity" and i.full]

    def summary_entity_ids(self) -> list[str]:
        return [i.id for i in self.items if i.kind == "entity" and not i.full]

    def expandable_entity_ids(self) -> list[str]:
        """Entities the model may expand: the summaries not loaded in full yet (with `referenced_entities`, any
        entity the context knows whose full record it does not hold)."""
        full = set(self.full_entity_ids()) | set(self.expanded_entity_ids)
        return [e for e in self.all_entity_ids() if e not in full]

    def cited_ids(self) -> set[str]:
        return {i.id for i in self.items}

    def stats(self, chars_per_token: float = 4.0) -> ContextStats:
        chars = sum(len(i.text) + len(i.replying_to or "") for i in self.items) + sum(len(c) for c in self.conversation)
        return ContextStats(items=len(self.items), characters=chars, estimated_tokens=int(chars / chars_per_token),
                            full_entities=len(self.full_entity_ids()), entity_summaries=len(self.summary_entity_ids()),
                            by_kind=dict(Counter(i.kind for i in self.items)))
