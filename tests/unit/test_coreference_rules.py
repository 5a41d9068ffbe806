"""Coreference by rules (the offline model's): pronouns to the most recent compatible entity within reach,
"my boss" to the speaker's relation, "the customer" to the last entity of that type; never the speaker."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from engram.adapters.offline.coreference import CoreferenceRules, Link, link_reference, relation_name
from engram.adapters.offline.llm import OfflineLLM
from engram.model.entities import EntitySighting
from engram.ports import Reference, WindowEvent

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
RULES = CoreferenceRules(relation=0.9, unique=0.8, recent=0.6, max_distance_events=3)
DANA = "ent_dana"


def seen(entity_id: str, entity_type: str, event: int, start: int = 0) -> EntitySighting:
    """A sighting in event `e<event>`, which happened `event` minutes after T0."""
    return EntitySighting(entity_id=entity_id, name=entity_id.removeprefix("ent_").title(), entity_type=entity_type,
                          event_id=f"e{event}", occurred_at=T0 + timedelta(minutes=event), start=start)


def link(text: str, candidates: list[EntitySighting], *, event: int = 9, start: int = 0,
         kind: str = "pronoun") -> Link | None:
    return link_reference(text, kind, f"e{event}", start, T0 + timedelta(minutes=event), DANA, candidates, RULES)


def test_she_is_the_only_person_in_reach_with_the_unique_confidence() -> None:
    assert link("She", [seen("ent_priya", "person", 8), seen("ent_acme", "organization", 8, 20)]) == Link(
        "ent_priya", 0.8)


def test_of_several_people_he_is_the_most_recent_with_the_lower_confidence() -> None:
    assert link("he", [seen("ent_sam", "person", 8), seen("ent_omar", "person", 7)]) == Link("ent_sam", 0.6)


def test_it_skips_people_and_they_prefer_an_organization() -> None:
    candidates = [seen("ent_priya", "person", 8), seen("ent_acme", "organization", 7)]
    assert link("it", candidates) == Link("ent_acme", 0.8)
    assert link("They", candidates) == Link("ent_acme", 0.8)


def test_they_fall_back_to_a_person_at_no_more_than_the_lower_confidence() -> None:
    assert link("they", [seen("ent_priya", "person", 8)]) == Link("ent_priya", 0.6)


def test_a_pronoun_never_points_at_the_speaker_nor_ahead_of_itself() -> None:
    assert link("she", [seen(DANA, "person", 8)]) is None
    assert link("she", [seen("ent_priya", "person", 9, start=30)], start=10) is None  # named after the pronoun
    assert link("she", [seen("ent_priya", "person", 9, start=0)], start=10) == Link("ent_priya", 0.8)


def test_a_pronoun_looks_back_only_a_few_events_that_named_anything() -> None:
    far = [seen("ent_priya", "person", 1), seen("ent_acme", "organization", 5), seen("ent_globex", "organization", 6),
           seen("ent_lisbon", "place", 7)]
    assert link("she", far) is None
    assert link("she", far[:2]) == Link("ent_priya", 0.8)


def test_my_boss_is_the_speakers_boss_whatever_the_word_for_it() -> None:
    sam = EntitySighting(entity_id="ent_sam", name="Sam", entity_type="person", relation="manager",
                         related_entity_id=DANA)
    omars_boss = EntitySighting(entity_id="ent_lee", name="Lee", entity_type="person", relation="boss",
                                related_entity_id="ent_omar")
    assert link("My boss", [omars_boss, sam], kind="description") == Link("ent_sam", 0.9)
    assert link("my boss", [omars_boss], kind="description") is None
    assert relation_name("Manager") == relation_name("boss") == "boss"


def test_the_customer_is_the_last_entity_of_that_type() -> None:
    candidates = [seen("ent_contoso", "customer", 8), seen("ent_priya", "person", 8, 30)]
    assert link("the customer", candidates, kind="description") == Link("ent_contoso", 0.8)
    assert link("the client", candidates, kind="description") == Link("ent_contoso", 0.8)
    assert link("the doctor", candidates, kind="description") is None


def test_the_offline_model_links_references_in_the_extraction_reply_without_a_model_call() -> None:
    events = [WindowEvent(event_id="e8", role="user", content="I met Priya.", occurred_at=T0 + timedelta(minutes=8),
                          speaker="dana"),
              WindowEvent(event_id="e9", role="user", content="She is great.", occurred_at=T0 + timedelta(minutes=9),
                          speaker="dana")]
    reference = Reference(reference_id="e9@0", event_id="e9", text="She", kind="pronoun", start=0,
                          speaker_entity_id=DANA)

    reply = OfflineLLM().extract(events, ["dana"], references=[reference],
                                 candidates=[seen("ent_priya", "person", 8, 6)])

    [coreference] = reply.value.coreferences
    assert (coreference.reference_id, coreference.entity_id, coreference.confidence) == ("e9@0", "ent_priya", 0.8)
    assert reply.usage.calls == 0
