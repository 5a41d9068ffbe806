"""Procedural memory (pure): habits read from repetition. Two entities a user brings up together in enough
separate conversations, more often than their own frequencies explain (lift), make a pattern ("when Dana talks
about the Q3 report, Acme comes up too"); its support is the number of those conversations, its confidence
grows with it under the cap. Lift keeps out what comes up everywhere (a word that is in every conversation
co-occurs with everything, and says nothing). The second kind is an attribute that recurs: the same fact (same
subject, predicate and value) stated again in enough separate conversations ("Acme's invoices are paid late")."""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class CoOccurrence:
    """`second` comes up in `conversations` where `first` does (`first` the rarer of the two); `event_ids` are
    where each was first named in them."""

    first: str
    second: str
    conversations: tuple[str, ...]
    event_ids: tuple[str, ...]

    @property
    def support(self) -> int:
        return len(self.conversations)


def co_occurrences(sightings: Iterable[tuple[str, str, str]], min_support: int,
                   min_lift: float) -> list[CoOccurrence]:
    """From (conversation_id, entity_id, event_id) sightings, the entity pairs named together in at least
    `min_support` conversations with a lift (how much more often together than apart by chance) of at least
    `min_lift`, the best supported first."""
    by_conversation: dict[str, dict[str, str]] = defaultdict(dict)
    for conversation, entity, event in sightings:
        by_conversation[conversation].setdefault(entity, event)
    total = len(by_conversation)
    seen: dict[str, int] = defaultdict(int)
    pairs: dict[tuple[str, str], list[str]] = defaultdict(list)
    for conversation in sorted(by_conversation):
        for entity in by_conversation[conversation]:
            seen[entity] += 1
        for a, b in itertools.combinations(sorted(by_conversation[conversation]), 2):
            pairs[(a, b)].append(conversation)
    found = []
    for (a, b), conversations in pairs.items():
        support = len(conversations)
        if support < min_support or support * total < min_lift * seen[a] * seen[b]:
            continue
        first, second = (a, b) if (seen[a], a) <= (seen[b], b) else (b, a)
        events = tuple(dict.fromkeys(e for c in conversations
                                     for e in (by_conversation[c][first], by_conversation[c][second])))
        found.append(CoOccurrence(first, second, tuple(conversations), events))
    return sorted(found, key=lambda p: (-p.support, p.first, p.second))


@dataclass(frozen=True)
class Recurrence:
    """A fact stated again in `conversations`; `sources` are the episodes it was stated in (an event where no
    episode holds it) and the events that stated it, conversation by conversation."""

    memory_id: str
    conversations: tuple[str, ...]
    sources: tuple[str, ...]

    @property
    def support(self) -> int:
        return len(self.conversations)


def recurring_facts(sightings: Iterable[tuple[str, str, str, str | None]], min_support: int) -> list[Recurrence]:
    """From (memory_id, conversation_id, event_id, episode_id) sightings, the facts stated in at least
    `min_support` separate conversations, the best supported first."""
    by_fact: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for memory_id, conversation, event, episode in sightings:
        by_fact[memory_id][conversation] += [episode or event, event]
    found = [Recurrence(memory_id, tuple(sorted(seen)), tuple(dict.fromkeys(
                 s for conversation in sorted(seen) for s in seen[conversation])))
             for memory_id, seen in by_fact.items() if len(seen) >= min_support]
    return sorted(found, key=lambda r: (-r.support, r.memory_id))


def pattern_confidence(support: int, cap: float) -> float:
    """support / (support + 1): 3 conversations 0.75, 5 about 0.83, never above the cap."""
    return round(min(cap, support / (support + 1)), 4)


def restates(summary: str, value: str) -> bool:
    """Whether a summary states a fact's value (words compared case- and spacing-blind): the facts a summary
    keeps are the ones it confirms."""
    words = " ".join(value.lower().split())
    return bool(words) and words in " ".join(summary.lower().split())
