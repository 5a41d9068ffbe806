"""Coreference by rules, the offline model's stand-in for the model's reading of a conversation.

A pronoun points at the most recent compatible entity the conversation mentioned before it ("she", "he": a
person; "it": anything but a person; "they": an organization or group, else a person), never at the speaker
and never further back than a few events. "my boss" points at the speaker's boss relationship; "the
customer" at the most recent entity of that type. The only candidates are the ones the pipeline offers.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from engram.model.entities import EntitySighting
from engram.rules.mentions import GROUP_PRONOUNS, PERSON_PRONOUNS, THING_PRONOUNS

_SAME_RELATION = {"manager": "boss", "supervisor": "boss", "mom": "mother", "mum": "mother", "dad": "father",
                  "neighbour": "neighbor", "wife": "spouse", "husband": "spouse", "client": "customer"}
_TYPE_OF_NOUN = {"company": "organization", "team": "organization", "client": "customer"}
_PLACE_TYPES = frozenset({"place", "location", "city", "country"})


@dataclass(frozen=True)
class CoreferenceRules:
    """The confidences the rules give and how far back they look (from the heuristics)."""

    relation: float
    unique: float
    recent: float
    max_distance_events: int


@dataclass(frozen=True)
class Link:
    entity_id: str
    confidence: float


def relation_name(noun: str) -> str:
    """The relation a noun names, synonyms folded ("manager" and "boss" are one relation)."""
    noun = noun.lower()
    return _SAME_RELATION.get(noun, noun)


def link_reference(text: str, kind: str, event_id: str, start: int, occurred_at: datetime,
                   speaker_entity_id: str | None, candidates: Sequence[EntitySighting],
                   rules: CoreferenceRules) -> Link | None:
    """The entity a pronoun or description refers to among `candidates`, with a confidence; None when the
    rules cannot tell."""
    words = text.lower().split()
    others = [c for c in candidates if c.entity_id != speaker_entity_id]
    if kind == "description" and len(words) >= 2:
        determiner, noun = words[0], words[-1]
        if determiner in ("my", "our"):
            related = [c for c in others if c.relation is not None and c.related_entity_id == speaker_entity_id
                       and relation_name(c.relation) == relation_name(noun)]
            if related:
                return Link(related[0].entity_id, rules.relation)
        wanted = _TYPE_OF_NOUN.get(noun, noun)
        return _most_recent(others, event_id, start, occurred_at, rules, lambda t: t == wanted)
    word = words[0] if words else ""
    if word in PERSON_PRONOUNS:
        return _most_recent(others, event_id, start, occurred_at, rules, lambda t: t == "person")
    if word in THING_PRONOUNS:
        return _most_recent(others, event_id, start, occurred_at, rules, lambda t: t != "person")
    if word in GROUP_PRONOUNS:
        group = _most_recent(others, event_id, start, occurred_at, rules,
                             lambda t: t != "person" and t not in _PLACE_TYPES)
        if group is not None:
            return group
        person = _most_recent(others, event_id, start, occurred_at, rules, lambda t: t == "person")
        return None if person is None else Link(person.entity_id, min(person.confidence, rules.recent))
    return None


def _most_recent(candidates: Sequence[EntitySighting], event_id: str, start: int, occurred_at: datetime,
                 rules: CoreferenceRules, compatible: Callable[[str], bool]) -> Link | None:
    """The latest compatible sighting before the reference, within the last events that mentioned anything:
    `unique` when it is the only compatible entity within reach, else `recent`."""
    before = [c for c in candidates if c.occurred_at is not None and c.event_id is not None
              and (c.occurred_at < occurred_at or (c.event_id == event_id and c.start < start))]
    before.sort(key=lambda c: (c.occurred_at, c.event_id == event_id, c.start), reverse=True)
    reach = list(dict.fromkeys(c.event_id for c in before))[:rules.max_distance_events]
    compatible_ids = list(dict.fromkeys(c.entity_id for c in before
                                        if c.event_id in reach and compatible(c.entity_type)))
    if not compatible_ids:
        return None
    return Link(compatible_ids[0], rules.unique if len(compatible_ids) == 1 else rules.recent)
