"""What ordinary sentences leave in memory through the real pipeline (embedded PostgreSQL, the offline model's
extraction by dependency parse): third-person facts about named people, relations, dates read from when they
were said, and denials that state nothing."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta

import pytest

from engram.enrichment.extract import extract_events
from engram.enrichment.ingest import ingest_events
from engram.enrichment.resolve import resolve_events, user_entity
from engram.model.events import IngestRequest
from engram.ports.clients import Clients

pytestmark = pytest.mark.integration
T0 = datetime(2026, 10, 5, 15, 0, tzinfo=UTC)  # a Monday
_seq = itertools.count()


def say(clients: Clients, world: str, *texts: str, user: str = "dana") -> None:
    n = next(_seq)
    ids = [f"{world}-{n}-{i}" for i in range(len(texts))]
    ingest_events(clients, clients.world(world), IngestRequest.model_validate({"events": [
        {"event_id": eid, "user_id": user, "conversation_id": "c1", "role": "user", "content": text,
         "occurred_at": (T0 + timedelta(minutes=i)).isoformat()} for i, (eid, text) in enumerate(zip(ids, texts,
                                                                                                      strict=True))]}))
    resolve_events(clients, clients.world(world), ids)
    extract_events(clients, clients.world(world), ids, now=T0 + timedelta(hours=1))


def facts_of(clients: Clients, world: str, name: str) -> set[tuple[str, str]]:
    entity = clients.store.find_entity_by_name(world, name)
    assert entity is not None, f"no entity {name!r}"
    return {(f.predicate, f.object_value) for f in clients.store.find_facts(world, entity.entity_id)}


def test_third_person_facts_about_named_people_are_remembered(clients: Clients) -> None:
    say(clients, "und-third", "Kalani Brandt lives in Cork.", "Kalani Brandt works at Bluefin Analytics as a "
        "data engineer.", "Tom is Priya's brother.")
    assert {("lives_in", "Cork"), ("works_at", "Bluefin Analytics"), ("works_as", "data engineer")} <= facts_of(
        clients, "und-third", "Kalani Brandt")
    assert ("brother_of", "Priya") in facts_of(clients, "und-third", "Tom")


def test_a_date_in_the_sentence_is_when_the_fact_became_true(clients: Clients) -> None:
    say(clients, "und-dates", "I moved to Porto last Friday.")
    me = user_entity(clients, "und-dates", "dana")
    [fact] = clients.store.find_facts("und-dates", me.entity_id, "lives_in")
    assert (fact.object_value, fact.valid_from) == ("Porto", datetime(2026, 10, 2, tzinfo=UTC))


def test_a_denial_states_no_fact(clients: Clients) -> None:
    say(clients, "und-denied", "I no longer work at Acme.", "Actually, I live in Porto, not Lisbon.")
    me = user_entity(clients, "und-denied", "dana")
    stated = {(f.predicate, f.object_value) for f in clients.store.find_facts("und-denied", me.entity_id)}
    assert stated == {("lives_in", "Porto")}
