"""A model that reads each message as a test says it does: the triples given for a message's text, the offline
model's reading for any other. For tests of what memory does with a reading (a third-person move, a stated end,
a dated value) apart from how well the extractor reads it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from engram.adapters.offline.llm import OfflineLLM
from engram.model.entities import EntitySighting
from engram.model.memories import OntologyPredicate
from engram.ports import ExtractedTriple, ExtractionResult, LLMReply, Reference, WindowEvent


class ReadingLLM(OfflineLLM):
    """`readings` maps a message's exact text to its triples (dicts of ExtractedTriple's fields without
    `event_id`; `valid_from` an ISO date or datetime). The speaker is `__speaker__` in a triple."""

    def __init__(self, readings: Mapping[str, Sequence[Mapping[str, Any]]]) -> None:
        super().__init__()
        self.readings = readings

    def extract(self, events: Sequence[WindowEvent], known_entities: Sequence[str], *,
                references: Sequence[Reference] = (), candidates: Sequence[EntitySighting] = (),
                predicates: Sequence[OntologyPredicate] = ()) -> LLMReply[ExtractionResult]:
        read = super().extract(events, known_entities, references=references, candidates=candidates,
                               predicates=predicates)
        given = {e.event_id: e for e in events if e.content in self.readings}
        triples = [t for t in read.value.triples if t.event_id not in given]
        for event in given.values():
            speaker = event.speaker or "user"
            for fields in self.readings[event.content]:
                stated: dict[str, Any] = {k: (speaker if v == "__speaker__" else v) for k, v in fields.items()}
                if isinstance(stated.get("valid_from"), str):
                    when = datetime.fromisoformat(stated["valid_from"])
                    stated["valid_from"] = when if when.tzinfo else when.replace(tzinfo=UTC)
                triples.append(ExtractedTriple.model_validate({**stated, "event_id": event.event_id}))
        return LLMReply(read.value.model_copy(update={"triples": triples}), read.usage, read.model)
