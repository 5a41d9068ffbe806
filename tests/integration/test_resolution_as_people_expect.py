"""Resolution as people would expect it, on the embedded PostgreSQL with the spaCy engine reading names: one
entity per person or company across nicknames, first names, corporate suffixes and case; no entity from a date
or a capitalised sentence start; a user's stated name kept whole."""

from __future__ import annotations

import dataclasses
import itertools
from datetime import UTC, datetime, timedelta

import pytest

from engram.app.factory import build_language
from engram.config import Settings
from engram.enrichment.extract import extract_events
from engram.enrichment.ingest import ingest_events
from engram.enrichment.resolve import resolve_events
from engram.model.events import IngestRequest
from engram.ports.clients import Clients

pytestmark = pytest.mark.integration
T0 = datetime(2026, 10, 5, 9, 0, tzinfo=UTC)
_ids = itertools.count()

# A new user's own conversation, as a user would write it: a nickname, a company said three ways, first names.
DANA = [
    "Hi! My name is Dana Whitfield, but everyone calls me Dee.",
    "Big news: I started a new job at Acme Corp last Friday.",
    "Before that I worked at Minho Foods in Leeds for six years.",
    "Acme Corporation has its head office in Bristol.",
    "My sister Maya lives in Porto with her husband.",
    "Last Friday I also had dinner with Maya to celebrate.",
    "Next Tuesday I'm meeting the team from Minho Foods to say goodbye.",
    "Maya thinks ACME corp will treat me better than my old job did.",
    "My manager at Acme is Robert Lang, known as Bobby.",
    "Bobby asked me to visit the Bristol office on Monday.",
    "Honestly, Monday was exhausting.",
    "My friends at Acme Corp. call me Dee too.",
    "Robert told me that Acme Inc. is hiring three more engineers.",
    "Great, thanks!",
    "Remember that Minho Foods still owes me a final paycheck.",
    "Tomorrow I will call Maya about the trip to Porto.",
    "Dee is what my sister calls me as well.",
    "Oh, and Maya Whitfield is her full name, she kept ours.",
]


@pytest.fixture(scope="module")
def reading(clients: Clients) -> Clients:
    """The integration clients with the language engine the composition root gives every mode."""
    return dataclasses.replace(clients, language=build_language(Settings()))


def converse(clients: Clients, world: str, texts: list[str], *, user: str = "dana", batch: int = 4,
             extract: bool = True) -> list[str]:
    """One user turn per text, a minute apart, enriched in batches as the pipeline does."""
    start = T0 + timedelta(hours=next(_ids))
    ids = [f"{world}-e{next(_ids)}" for _ in texts]
    ingest_events(clients, clients.world(world), IngestRequest.model_validate({"events": [
        {"event_id": eid, "user_id": user, "conversation_id": "c1", "role": "user", "content": text,
         "occurred_at": (start + timedelta(minutes=i)).isoformat()} for i, (eid, text) in enumerate(zip(ids, texts, strict=True))]}))
    for i in range(0, len(ids), batch):
        resolve_events(clients, clients.world(world), ids[i:i + batch])
        if extract:
            extract_events(clients, clients.world(world), ids[i:i + batch])
    return ids


def table(clients: Clients, world: str) -> dict[str, str]:
    return {e.name: e.entity_type for e in clients.store.list_entities(world, None, 100)}


def aliases(clients: Clients, world: str, name: str) -> set[str]:
    found = clients.store.find_entity_by_name(world, name)
    assert found is not None, name
    return {a.lower() for a in found.aliases}


def test_a_users_conversation_makes_one_entity_per_person_company_and_place_and_no_junk(reading: Clients) -> None:
    converse(reading, "w-dana", DANA)
    assert table(reading, "w-dana") == {
        "dana": "person", "Acme Corp": "organization", "Minho Foods": "organization", "Leeds": "place",
        "Bristol": "place", "Porto": "place", "Maya": "person", "Robert Lang": "person"}
    assert {"dana whitfield", "dee"} <= aliases(reading, "w-dana", "dana")
    # Its other spellings are matched, not stored (the entity's record stays what people called it).
    assert not aliases(reading, "w-dana", "Acme Corp") & {"acme", "acme corporation", "acme inc", "acme corp."}
    assert aliases(reading, "w-dana", "Robert Lang") == {"robert lang", "bobby"}
    assert "maya whitfield" in aliases(reading, "w-dana", "Maya")


def test_every_name_of_the_conversation_resolves_to_its_one_entity(reading: Clients) -> None:
    ids = converse(reading, "w-names", DANA, extract=False)
    names = {e.entity_id: e.name for e in reading.store.list_entities("w-names", None, 100)}
    mentions = [m for m in reading.store.recorded_mentions("w-names", ids) if m.kind == "name"]
    said = {m.text: names[m.entity_id] for m in mentions if m.entity_id is not None}
    # A capitalised sentence start the parser did not read as a name stays what it is: no one.
    assert {m.text for m in mentions if m.entity_id is None} <= {"Big", "Honestly", "Great"}
    assert said == {
        "Dana Whitfield": "dana", "Dee": "dana", "Acme Corp": "Acme Corp", "Acme Corporation": "Acme Corp",
        "ACME corp": "Acme Corp", "Acme": "Acme Corp", "Acme Inc": "Acme Corp", "Minho Foods": "Minho Foods",
        "Leeds": "Leeds", "Bristol": "Bristol", "Maya": "Maya", "Porto": "Porto", "Robert Lang": "Robert Lang",
        "Bobby": "Robert Lang", "Robert": "Robert Lang", "Maya Whitfield": "Maya"}


def test_a_user_who_gives_a_shorter_name_keeps_the_longer_one_known(reading: Clients) -> None:
    converse(reading, "w-alice", ["My name is Alice Moreau.", "I live in Lyon."], user="alice")
    converse(reading, "w-alice", ["My name is Alice.", "Alice is what my team calls me."], user="alice")
    me = reading.store.find_entity_by_external_ref("w-alice", "user:alice")
    assert me is not None and {"alice moreau", "alice"} <= {a.lower() for a in me.aliases}
    names = reading.store.find_facts("w-alice", me.entity_id, "name", statuses=("active", "superseded"))
    assert [(f.object_value, f.status) for f in names] == [("Alice Moreau", "active")]
    assert table(reading, "w-alice") == {"alice": "person", "Lyon": "place"}
