"""Resolution on in-memory fakes of its ports (the events and entities, the domain database): every mention
to an entity, cheaply and deterministically, and a user's settlement of what it could not decide."""

from __future__ import annotations

import pytest

from engram.enrichment.ingest import ingest_events
from engram.enrichment.resolve import (
    MentionPorts,
    pending_disambiguations,
    resolve_events,
    settle_disambiguation,
    user_entity,
)
from engram.errors import Conflict, NotFound
from engram.model.entities import DomainMatch, DomainSource, EntityAlias, RecordedMention, SettleRequest
from engram.model.world import World
from tests.fakes.conversations import said
from tests.fakes.domain import InMemoryDomain
from tests.fakes.language import ListedNames
from tests.fakes.ports import FakePorts

WORLD = World("w1")


def _resolve(fakes: FakePorts, *turns: str, first: int = 1) -> list[RecordedMention]:
    request = said(*turns, first=first)
    ingest_events(fakes, WORLD, request)
    ids = [e.event_id for e in request.events if e.event_id]
    ports: MentionPorts = fakes
    resolve_events(ports, WORLD, ids)
    return fakes.store.recorded_mentions("w1", ids)


def _by_text(mentions: list[RecordedMention]) -> dict[str, RecordedMention]:
    return {m.text: m for m in mentions}


def test_resolve_links_a_known_alias_and_creates_an_entity_for_a_new_name() -> None:
    fakes = FakePorts()
    sarah = fakes.store.create_entity("w1", "Sarah Connor", "person")
    fakes.store.add_alias(EntityAlias(world_id="w1", entity_id=sarah.entity_id, alias="Sam", confidence=0.95))
    mentions = _by_text(_resolve(fakes, "I met Sam and Priya at lunch."))
    assert (mentions["Sam"].method, mentions["Sam"].entity_id) == ("alias", sarah.entity_id)
    priya = fakes.store.find_entity_by_name("w1", "priya")
    assert priya is not None and (mentions["Priya"].method, mentions["Priya"].entity_id) == ("created", priya.entity_id)
    assert fakes.store.get_event("w1", "e1").enrichment_status == "enriching"  # type: ignore[union-attr]


def test_a_name_already_known_resolves_exactly_and_creates_nothing() -> None:
    fakes = FakePorts()
    _resolve(fakes, "I met Priya at lunch.")
    again = _by_text(_resolve(fakes, "Priya called me.", first=2))
    assert again["Priya"].method == "exact"
    assert len([e for e in fakes.store.t.entities.values() if e.name == "Priya"]) == 1


def test_a_close_misspelling_of_one_entity_resolves_fuzzily_and_teaches_the_users_alias() -> None:
    fakes = FakePorts()
    globex = fakes.store.create_entity("w1", "Globex Corporation", "organization")
    mentions = _by_text(_resolve(fakes, "We met Globex Corporations yesterday."))
    found = mentions["Globex Corporations"]
    assert (found.method, found.entity_id) == ("fuzzy", globex.entity_id) and found.confidence > 0.85
    [learned] = fakes.store.find_alias("w1", "globex corporations", "dana")
    assert (learned.entity_id, learned.user_id, learned.source) == (globex.entity_id, "dana", "fuzzy")
    assert fakes.store.find_alias("w1", "globex corporations", "sam") == []  # the user's own, not the world's
    again = _by_text(_resolve(fakes, "Globex Corporations replied.", first=2))
    assert again["Globex Corporations"].method == "alias"  # now on the fast path


def test_resolving_a_batch_again_records_and_learns_nothing_new() -> None:
    fakes = FakePorts()
    first = _resolve(fakes, "I met Sam and Priya at lunch.")
    resolve_events(fakes, WORLD, ["e1"])
    assert fakes.store.recorded_mentions("w1", ["e1"]) == first
    assert sorted(e.name for e in fakes.store.t.entities.values()) == ["Priya", "Sam", "dana"]


def test_the_speaker_is_an_entity_standing_for_the_user_made_once() -> None:
    fakes = FakePorts()
    _resolve(fakes, "I met Priya at lunch.")
    dana = user_entity(fakes, "w1", "dana")
    assert (dana.external_ref, dana.entity_type) == ("user:dana", "person")
    assert user_entity(fakes, "w1", "dana").entity_id == dana.entity_id


def test_a_name_the_domain_database_holds_becomes_an_entity_with_its_reference() -> None:
    domain = InMemoryDomain([DomainMatch(entity_type="customer", name="Globex", external_ref="customers:7")])
    fakes = FakePorts(domain=domain)
    fakes.store.upsert_domain_source("w1", DomainSource(entity_type="customer", source_table="customers",
                                                        key_column="id", name_column="name"))
    mentions = _by_text(_resolve(fakes, "I called Globex today."))
    globex = fakes.store.find_entity_by_external_ref("w1", "customers:7")
    assert globex is not None and (globex.name, globex.entity_type) == ("Globex", "customer")
    assert (mentions["Globex"].method, mentions["Globex"].entity_id) == ("domain_db", globex.entity_id)
    assert domain.asked == ["Globex"]


def _two_alexes(fakes: FakePorts) -> tuple[str, str, RecordedMention]:
    one = fakes.store.create_entity("w1", "Alex", "person").entity_id
    two = fakes.store.create_entity("w1", "Alex", "person").entity_id
    [mention] = [m for m in _resolve(fakes, "I had lunch with Alex.") if m.text == "Alex"]
    return one, two, mention


def test_two_entities_of_one_name_wait_for_the_user_to_choose() -> None:
    fakes = FakePorts()
    one, two, mention = _two_alexes(fakes)
    assert mention.method == "disambiguation_required" and mention.entity_id is None
    assert {c.entity_id for c in mention.candidates} == {one, two}
    assert [m.mention_id for m in pending_disambiguations(fakes, "w1", "dana", 10)] == [mention.mention_id]


def test_the_users_choice_resolves_the_mention_and_the_next_one_takes_the_fast_path() -> None:
    fakes = FakePorts()
    _one, two, mention = _two_alexes(fakes)
    settled = settle_disambiguation(fakes, WORLD, mention.mention_id, SettleRequest(entity_id=two))
    assert (settled.mention.method, settled.mention.entity_id) == ("user", two)
    assert (settled.alias.user_id, settled.alias.source) == ("dana", "user")
    assert pending_disambiguations(fakes, "w1", "dana", 10) == []
    [later] = [m for m in _resolve(fakes, "Alex sent the report.", first=2) if m.text == "Alex"]
    assert (later.method, later.entity_id) == ("exact", two)


def test_a_settlement_of_a_mention_not_waiting_or_unknown_is_refused() -> None:
    fakes = FakePorts()
    [priya] = [m for m in _resolve(fakes, "I met Priya at lunch.") if m.text == "Priya"]
    with pytest.raises(Conflict):
        settle_disambiguation(fakes, WORLD, priya.mention_id, SettleRequest(new_entity=True))
    with pytest.raises(NotFound):
        settle_disambiguation(fakes, WORLD, "men_unknown", SettleRequest(new_entity=True))


# ---------------------------------------------------------------- with a parser, as people would expect
def _people(fakes: FakePorts, *turns: str, first: int = 1) -> dict[str, str | None]:
    """The turns resolved with a parser; each name said -> the name of the entity it resolved to."""
    mentions = _resolve(fakes, *turns, first=first)
    names = {e.entity_id: e.name for e in fakes.store.t.entities.values()}
    return {m.text: names.get(m.entity_id or "") for m in mentions if m.kind == "name"}


def _entities(fakes: FakePorts) -> dict[str, str]:
    return {e.name: e.entity_type for e in fakes.store.t.entities.values()}


def test_the_parser_reads_a_whole_batch_in_one_call_and_types_what_it_creates() -> None:
    language = ListedNames({"Minho Foods": "ORG", "Leeds": "GPE", "Maya": "PERSON", "last Friday": "DATE"})
    fakes = FakePorts(language=language)
    said_ = _people(fakes, "I worked at Minho Foods in Leeds.", "I saw my sister Maya last Friday.")
    assert said_ == {"Minho Foods": "Minho Foods", "Leeds": "Leeds", "Maya": "Maya"}
    assert _entities(fakes) == {"dana": "person", "Minho Foods": "organization", "Leeds": "place", "Maya": "person"}
    assert len(language.batches) == 1 and len(language.batches[0]) == 2


def test_no_entity_from_a_date_or_a_sentence_start_the_parser_did_not_name() -> None:
    fakes = FakePorts(language=ListedNames({"Last Friday": "DATE", "Next Tuesday": "DATE"}))
    said_ = _people(fakes, "Big news: I got the job.", "Last Friday I celebrated.", "Next Tuesday I start.")
    assert said_ == {"Big": None}
    assert _entities(fakes) == {"dana": "person"}


def test_a_first_name_alone_resolves_to_the_one_person_known_by_it() -> None:
    fakes = FakePorts(language=ListedNames({"Robert Lang": "PERSON", "Robert": "PERSON"}))
    assert _people(fakes, "My manager is Robert Lang.", "I told Robert about it.") == {
        "Robert Lang": "Robert Lang", "Robert": "Robert Lang"}
    assert _entities(fakes) == {"dana": "person", "Robert Lang": "person"}


def test_a_first_name_two_known_people_share_is_not_a_new_person() -> None:
    fakes = FakePorts()
    _resolve(fakes, "I met Robert Lang and Robert Okafor.")
    [robert] = [m for m in _resolve(fakes, "Then I called Robert.", first=2) if m.text == "Robert"]
    assert robert.method == "disambiguation_required" and len(robert.candidates) == 2
    assert sorted(_entities(fakes)) == ["Robert Lang", "Robert Okafor", "dana"]


def test_a_companys_suffix_and_case_make_no_new_entity() -> None:
    fakes = FakePorts(language=ListedNames({"Acme Corp": "ORG", "Acme Corporation": "ORG", "ACME corp": "ORG",
                                            "Acme Inc.": "ORG", "Acme": "ORG"}))
    said_ = _people(fakes, "I started at Acme Corp.", "Acme Corporation is in Bristol.", "ACME corp pays well.",
                    "They said Acme Inc. is hiring.", "I like Acme.")
    assert {k: v for k, v in said_.items() if k != "Bristol"} == {
        "Acme Corp": "Acme Corp", "Acme Corporation": "Acme Corp", "ACME corp": "Acme Corp", "Acme Inc": "Acme Corp",
        "Acme": "Acme Corp"}
    assert [n for n, t in _entities(fakes).items() if t == "organization"] == ["Acme Corp"]


def test_a_nickname_the_speaker_states_is_an_alias_of_the_speaker() -> None:
    fakes = FakePorts(language=ListedNames({"Dana Whitfield": "PERSON", "Dee": "PERSON"}))
    said_ = _people(fakes, "My name is Dana Whitfield, but everyone calls me Dee.", "Dee is back!")
    assert said_ == {"Dana Whitfield": "dana", "Dee": "dana"}
    assert _entities(fakes) == {"dana": "person"}
    [dee] = fakes.store.find_alias("w1", "dee", None)
    assert (dee.user_id, dee.source, dee.origin_event_id) == (None, "user", "e1")


def test_a_nickname_stated_for_someone_is_an_alias_of_that_someone() -> None:
    fakes = FakePorts(language=ListedNames({"Robert Lang": "PERSON", "Bobby": "PERSON"}))
    said_ = _people(fakes, "My manager is Robert Lang, known as Bobby.", "Bobby called.")
    assert said_ == {"Robert Lang": "Robert Lang", "Bobby": "Robert Lang"}
    assert sorted(_entities(fakes)) == ["Robert Lang", "dana"]


def test_a_full_name_after_the_first_name_alone_is_the_same_person_unless_she_has_another() -> None:
    fakes = FakePorts(language=ListedNames({"Maya": "PERSON", "Maya Whitfield": "PERSON", "Maya Angelou": "PERSON"}))
    assert _people(fakes, "My sister Maya called.", "Maya Whitfield is her full name.") == {
        "Maya": "Maya", "Maya Whitfield": "Maya"}
    assert _people(fakes, "I read Maya Angelou.", first=3) == {"Maya Angelou": "Maya Angelou"}
    assert sorted(_entities(fakes)) == ["Maya", "Maya Angelou", "dana"]


def test_a_company_said_without_its_kind_is_the_same_company_and_another_kind_is_another() -> None:
    fakes = FakePorts(language=ListedNames({"Northwind Labs": "ORG", "Northwind": "ORG", "Acme Labs": "ORG",
                                            "Acme Corp": "ORG"}))
    assert _people(fakes, "I now work at Northwind Labs.", "Northwind is great.", "Acme Labs called.",
                   "Acme Corp called too.") == {
        "Northwind Labs": "Northwind Labs", "Northwind": "Northwind Labs", "Acme Labs": "Acme Labs",
        "Acme Corp": "Acme Corp"}
    fakes = FakePorts(language=ListedNames({"Northwind Labs": "ORG", "Northwind": "ORG"}))
    assert _people(fakes, "I work at Northwind.", "Northwind Labs is the full name.") == {
        "Northwind": "Northwind", "Northwind Labs": "Northwind"}


def test_a_first_name_the_parser_read_as_a_place_is_the_known_person_when_it_lives_somewhere() -> None:
    # the small model reads an unknown first name as a place or an organization; the verb after it says who
    fakes = FakePorts(language=ListedNames({"Ottoline Brisbois": "PERSON", "Ottoline": "GPE", "Turku": "GPE",
                                            "Vantora": "ORG"}))
    assert _people(fakes, "My neighbour Ottoline Brisbois lives in Turku.", "Ottoline now works at Vantora.") == {
        "Ottoline Brisbois": "Ottoline Brisbois", "Turku": "Turku", "Ottoline": "Ottoline Brisbois",
        "Vantora": "Vantora"}
    assert _entities(fakes)["Ottoline Brisbois"] == "person"


def test_a_full_name_opening_a_sentence_is_made_someone_when_it_lives_somewhere() -> None:
    fakes = FakePorts(language=ListedNames({"Galway": "GPE", "Rune": "PERSON"}))
    assert _people(fakes, "Rune Gathii resides in Galway.", "I visited Rune.") == {
        "Rune Gathii": "Rune Gathii", "Galway": "Galway", "Rune": "Rune Gathii"}
