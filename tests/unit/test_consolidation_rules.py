"""Consolidation's pure rules: what a summary confirms and by how much, and which repetitions are habits."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engram.model.memories import ConfidenceFactors
from engram.rules.confidence import confirmed, stored_confidence
from engram.rules.patterns import co_occurrences, pattern_confidence, recurring_facts, restates

CAP = 0.95


def test_a_confirmed_fact_gains_the_boost() -> None:
    factors = confirmed(ConfidenceFactors(base=0.6), CAP, 0.1)
    assert stored_confidence(factors, CAP) == pytest.approx(0.7)


@given(base=st.floats(0.0, 1.0), reinforcement=st.floats(0.0, 1.0), times=st.integers(1, 20))
def test_confirmation_never_lifts_a_fact_above_the_cap(base: float, reinforcement: float, times: int) -> None:
    factors = ConfidenceFactors(base=base, reinforcement=reinforcement)
    for _ in range(times):
        factors = confirmed(factors, CAP, 0.1)
    assert stored_confidence(factors, CAP) <= CAP


def test_a_summary_restates_a_value_whatever_its_case_and_spacing() -> None:
    assert restates("Dana lives in  lisbon and works at Acme.", "Lisbon")
    assert not restates("Dana lives in Lisbon.", "Porto") and not restates("anything", " ")


def _seen(pairs: dict[str, list[str]]) -> list[tuple[str, str, str]]:
    """(conversation, entity, event) from {conversation: entities}."""
    return [(c, e, f"{c}-{e}") for c, entities in pairs.items() for e in entities]


def test_two_entities_together_in_enough_conversations_are_a_pattern_the_rarer_first() -> None:
    sightings = _seen({"c1": ["acme", "sarah"], "c2": ["acme", "sarah"], "c3": ["acme", "sarah"],
                       "c4": ["acme", "oslo"], "c5": ["oslo"], "c6": ["lima"]})
    [pattern] = co_occurrences(sightings, 3, 1.2)
    assert (pattern.first, pattern.second, pattern.support) == ("sarah", "acme", 3)
    assert pattern.conversations == ("c1", "c2", "c3")
    assert pattern.event_ids[:2] == ("c1-sarah", "c1-acme")


def test_what_comes_up_in_every_conversation_makes_no_pattern() -> None:
    sightings = _seen({f"c{i}": ["traffic", "weather"] + (["acme"] if i < 4 else []) for i in range(8)})
    assert co_occurrences(sightings, 3, 1.2) == []  # together everywhere: lift 1


def test_too_few_conversations_make_no_pattern() -> None:
    sightings = _seen({"c1": ["acme", "sarah"], "c2": ["acme", "sarah"], "c3": ["oslo"], "c4": ["lima"]})
    assert co_occurrences(sightings, 3, 1.2) == []


def test_a_pattern_is_surer_the_more_it_is_supported_but_never_above_the_cap() -> None:
    assert pattern_confidence(3, CAP) == 0.75 < pattern_confidence(5, CAP) < pattern_confidence(100, CAP) == CAP


def test_a_fact_stated_in_enough_separate_conversations_recurs_with_its_episodes_and_events() -> None:
    sightings = [("sem_a", "c1", "e1", "epi1"), ("sem_a", "c1", "e2", "epi1"), ("sem_a", "c2", "e3", "epi2"),
                 ("sem_a", "c3", "e4", None), ("sem_b", "c1", "e5", "epi1"), ("sem_b", "c2", "e6", "epi2")]
    [recurring] = recurring_facts(sightings, 3)
    assert (recurring.memory_id, recurring.conversations, recurring.support) == ("sem_a", ("c1", "c2", "c3"), 3)
    # one episode per conversation, the event where no episode holds it, and every event that stated it
    assert recurring.sources == ("epi1", "e1", "e2", "epi2", "e3", "e4")


def test_a_fact_restated_within_one_conversation_does_not_recur() -> None:
    assert recurring_facts([("sem_a", "c1", f"e{i}", "epi1") for i in range(5)], 2) == []
