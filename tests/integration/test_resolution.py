"""Entity resolution on the embedded PostgreSQL: every stage of the cascade, what it learns, the user's
choice, coreference inside the extraction call, the domain database, the graph, and world isolation."""

from __future__ import annotations

import itertools
import os
import re
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta

import psycopg
import pytest

from engram.adapters.offline.llm import OfflineLLM
from engram.adapters.postgres.domain import PostgresDomainDatabase
from engram.app.factory import build_domain
from engram.config import Settings
from engram.enrichment.extract import extract_events
from engram.enrichment.ingest import ingest_events
from engram.enrichment.resolve import resolve_events, settle_disambiguation
from engram.errors import ConfigurationError, Conflict, NotFound
from engram.memory.graph import entity_detail, find_entities, find_paths
from engram.model.entities import DomainSource, EntityAlias, EntitySighting, RecordedMention, SettleRequest
from engram.model.events import IngestRequest
from engram.model.memories import OntologyPredicate
from engram.ports import Coreference, ExtractionResult, LLMReply, Reference, WindowEvent
from engram.ports.clients import Clients
from tests.fakes.llm import ScriptedLLM

pytestmark = pytest.mark.integration
T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
_ids = itertools.count()


def say(clients: Clients, world: str, *texts: str, user: str = "dana", conversation: str = "c1",
        enrich: bool = True) -> list[str]:
    """Ingest one user turn per text (a minute apart), then the resolve step (and the extract step)."""
    start = T0 + timedelta(hours=next(_ids))
    ids = [f"{world}-e{next(_ids)}" for _ in texts]
    ingest_events(clients, clients.world(world), IngestRequest.model_validate({"events": [
        {"event_id": eid, "user_id": user, "conversation_id": conversation, "role": "user", "content": text,
         "occurred_at": (start + timedelta(minutes=i)).isoformat()} for i, (eid, text) in enumerate(zip(ids, texts, strict=True))]}))
    resolve_events(clients, clients.world(world), ids)
    if enrich:
        extract_events(clients, clients.world(world), ids)
    return ids


def mention(clients: Clients, world: str, event_id: str, text: str) -> RecordedMention:
    [found] = [m for m in clients.store.recorded_mentions(world, [event_id]) if m.text == text]
    return found


def entity(clients: Clients, world: str, name: str, entity_type: str = "person", *aliases: tuple[str, float, str | None]
           ) -> str:
    created = clients.store.create_entity(world, name, entity_type)
    for alias, confidence, user in aliases:
        clients.store.add_alias(EntityAlias(world_id=world, entity_id=created.entity_id, alias=alias, user_id=user,
                                            confidence=confidence, source="seed"))
    return created.entity_id


def user_aliases(clients: Clients, world: str, entity_id: str, user: str) -> dict[str, tuple[float, str]]:
    return {a.alias.lower(): (a.confidence, a.source) for a in clients.store.entity_aliases(world, entity_id, user)
            if a.user_id == user}


@pytest.fixture
def llm(clients: Clients) -> Iterator[ScriptedLLM]:
    """The offline model behind a recorder: what each extraction call was given."""
    original, clients.llm = clients.llm, ScriptedLLM()
    yield clients.llm  # type: ignore[misc]
    clients.llm = original


# ---------------------------------------------------------------- the fast path
def test_an_exact_canonical_name_resolves_with_full_confidence(clients: Clients) -> None:
    priya = entity(clients, "w-exact", "Priya  SHARMA")
    [e1] = say(clients, "w-exact", "I had lunch with Priya Sharma today.", enrich=False)
    exact = mention(clients, "w-exact", e1, "Priya Sharma")
    assert (exact.method, exact.entity_id, exact.confidence) == ("exact", priya, 1.0)


@pytest.mark.parametrize(("by_confidence", "bobby_score"), [(False, 1.0), (True, 0.8)])
def test_a_known_alias_above_the_threshold_resolves_and_one_at_it_is_not_taken_on_trust(
        clients: Clients, by_confidence: bool, bobby_score: float) -> None:
    world = f"w-alias-{by_confidence}"
    clients.store.set_world_config(world, {"heuristics": {"fuzzy_by_alias_confidence": by_confidence,
                                                          "fuzzy_weak_single_resolves": by_confidence}})
    robert = entity(clients, world, "Robert Brown", "person", ("Bob", 0.9, None), ("Bobby", 0.8, None))
    [e1] = say(clients, world, "Bob called about the invoice.", enrich=False)
    [e2] = say(clients, world, "Bobby called about the invoice.", enrich=False)
    bob, bobby = mention(clients, world, e1, "Bob"), mention(clients, world, e2, "Bobby")
    assert (bob.method, bob.entity_id, bob.confidence) == ("alias", robert, pytest.approx(0.9))
    # 0.8 is no alias to trust on sight (stage 2); the trigram stage then scores it by its similarity, 1.0 (seed
    # 004), or, in a world scoring similarity times the alias's confidence (engram's way), 0.8, which resolves only
    # where a weak single match does.
    assert (bobby.method, bobby.entity_id, bobby.confidence) == ("fuzzy", robert, pytest.approx(bobby_score))


def test_the_users_own_alias_comes_before_a_global_one(clients: Clients) -> None:
    kim = entity(clients, "w-order", "Alex Kim", "person", ("Lex", 0.95, None))
    park = entity(clients, "w-order", "Alex Park", "person", ("Lex", 0.9, "dana"))
    [mine] = say(clients, "w-order", "Lex sent the slides.", user="dana", enrich=False)
    [theirs] = say(clients, "w-order", "Lex sent the slides.", user="omar", conversation="c2", enrich=False)
    assert mention(clients, "w-order", mine, "Lex").entity_id == park
    assert mention(clients, "w-order", theirs, "Lex").entity_id == kim


def test_a_single_close_misspelling_resolves_by_trigram_and_is_learned_as_the_users_alias(clients: Clients) -> None:
    globex = entity(clients, "w-fuzzy", "Globex Corporation", "organization")
    [e1] = say(clients, "w-fuzzy", "We met Globex Corporations yesterday.", enrich=False)
    first = mention(clients, "w-fuzzy", e1, "Globex Corporations")
    assert (first.method, first.entity_id) == ("fuzzy", globex) and first.confidence > 0.85
    assert user_aliases(clients, "w-fuzzy", globex, "dana")["globex corporations"] == (
        pytest.approx(first.confidence), "fuzzy")
    [e2] = say(clients, "w-fuzzy", "Globex Corporations replied.", enrich=False)
    assert mention(clients, "w-fuzzy", e2, "Globex Corporations").method == "alias"  # now on the fast path


def test_a_weaker_single_misspelling_resolves_nothing_and_makes_no_entity(clients: Clients) -> None:
    priya = entity(clients, "w-weak0", "Priya Sharma")
    [e1] = say(clients, "w-weak0", "Priya Sharme is late.", enrich=False)
    found = mention(clients, "w-weak0", e1, "Priya Sharme")
    assert (found.method, found.entity_id, found.confidence) == ("not_found", None, 0.0)  # seed 004: not_found
    assert [e.entity_id for e in clients.store.list_entities("w-weak0", "Priya", 10)] == [priya]


def test_a_weaker_single_misspelling_resolves_without_being_learned_in_a_world_that_says_so(clients: Clients) -> None:
    clients.store.set_world_config("w-weak", {"heuristics": {"fuzzy_weak_single_resolves": True}})
    priya = entity(clients, "w-weak", "Priya Sharma")
    [e1] = say(clients, "w-weak", "Priya Sharme is late.", enrich=False)
    found = mention(clients, "w-weak", e1, "Priya Sharme")
    assert (found.method, found.entity_id) == ("fuzzy", priya) and 0.7 < found.confidence <= 0.85
    assert "priya sharme" not in user_aliases(clients, "w-weak", priya, "dana")


def test_several_trigram_candidates_wait_for_the_user_with_ranked_candidates(clients: Clients) -> None:
    johnson = entity(clients, "w-ambiguous", "Katherine Johnson")
    johnston = entity(clients, "w-ambiguous", "Katherine Johnston")
    [e1] = say(clients, "w-ambiguous", "Katherine Johns sent the report.", enrich=False)
    waiting = mention(clients, "w-ambiguous", e1, "Katherine Johns")
    assert (waiting.method, waiting.entity_id) == ("disambiguation_required", None)
    assert [c.entity_id for c in waiting.candidates] == [johnson, johnston]  # the closer spelling first
    assert waiting.candidates[0].score >= waiting.candidates[1].score
    assert [m.mention_id for m in clients.store.pending_disambiguations("w-ambiguous", "dana", 10)] == [
        waiting.mention_id]


def test_settling_a_disambiguation_learns_the_users_alias_and_the_next_mention_takes_the_fast_path(
        clients: Clients) -> None:
    entity(clients, "w-settle", "Katherine Johnson")
    johnston = entity(clients, "w-settle", "Katherine Johnston")
    first, second = say(clients, "w-settle", "Katherine Johns sent the report.", "Katherine Johns called again.",
                        enrich=False)
    waiting = mention(clients, "w-settle", first, "Katherine Johns")

    settled = settle_disambiguation(clients, clients.world("w-settle"), waiting.mention_id, SettleRequest(entity_id=johnston))

    assert (settled.mention.method, settled.mention.entity_id) == ("user", johnston)
    assert settled.alias.user_id == "dana" and settled.alias.confidence == pytest.approx(0.95)
    assert settled.also_settled == [mention(clients, "w-settle", second, "Katherine Johns").mention_id]
    assert clients.store.pending_disambiguations("w-settle", None, 10) == []
    [later] = say(clients, "w-settle", "Katherine Johns is in Porto.", enrich=False)
    assert (mention(clients, "w-settle", later, "Katherine Johns").method,
            mention(clients, "w-settle", later, "Katherine Johns").entity_id) == ("alias", johnston)
    with pytest.raises(Conflict):
        settle_disambiguation(clients, clients.world("w-settle"), waiting.mention_id, SettleRequest(entity_id=johnston))


def test_a_user_may_answer_none_of_them_and_get_a_new_entity(clients: Clients) -> None:
    entity(clients, "w-new", "Katherine Johnson")
    entity(clients, "w-new", "Katherine Johnston")
    [e1] = say(clients, "w-new", "Katherine Johns sent the report.", enrich=False)
    settled = settle_disambiguation(clients, clients.world("w-new"), mention(clients, "w-new", e1, "Katherine Johns").mention_id,
                                    SettleRequest(new_entity=True))
    assert settled.entity.name == "Katherine Johns" and settled.mention.entity_id == settled.entity.entity_id


def test_two_entities_sharing_an_alias_resolve_to_the_clear_favourite_else_the_user_chooses(clients: Clients) -> None:
    kim = entity(clients, "w-rank", "Alex Kim", "person", ("Alex", 0.9, None))
    park = entity(clients, "w-rank", "Alex Park", "person", ("Alex", 0.9, None))
    [tie] = say(clients, "w-rank", "Alex is here.", enrich=False)
    asked = mention(clients, "w-rank", tie, "Alex")
    assert asked.method == "disambiguation_required" and {c.entity_id for c in asked.candidates} == {kim, park}
    say(clients, "w-rank", *["Alex Kim presented the roadmap."] * 6, enrich=False)  # Kim is talked about
    [favoured] = say(clients, "w-rank", "Alex is here.", enrich=False)
    chosen = mention(clients, "w-rank", favoured, "Alex")
    assert (chosen.method, chosen.entity_id) == ("alias", kim)
    assert chosen.candidates[0].entity_id == kim and chosen.candidates[0].score > chosen.candidates[1].score


def test_a_lowercase_known_alias_is_found_in_the_text(clients: Clients) -> None:
    acme = entity(clients, "w-lower", "Acme Robotics", "organization", ("acme", 0.95, None))
    [e1] = say(clients, "w-lower", "i applied to acme last week", enrich=False)
    found = mention(clients, "w-lower", e1, "acme")
    assert (found.kind, found.method, found.entity_id) == ("name", "alias", acme)


def test_an_unknown_proper_noun_creates_an_entity_and_anything_else_stays_unresolved(clients: Clients) -> None:
    [e1] = say(clients, "w-unknown", "They said Zorblax Industries will call.", enrich=False)
    created = mention(clients, "w-unknown", e1, "Zorblax Industries")
    assert created.method == "created" and created.entity_id is not None
    assert clients.store.get_entity("w-unknown", created.entity_id).name == "Zorblax Industries"  # type: ignore[union-attr]
    they = mention(clients, "w-unknown", e1, "They")
    assert (they.kind, they.method, they.entity_id) == ("pronoun", "no_candidates", None)


def test_resolving_a_batch_again_changes_nothing(clients: Clients) -> None:
    entity(clients, "w-again", "Globex Corporation", "organization")
    [e1] = say(clients, "w-again", "Globex Corporations and Mira Vale met.", enrich=False)
    before = clients.store.recorded_mentions("w-again", [e1])
    counts = resolve_events(clients, clients.world("w-again"), [e1])
    assert counts["mentions"] == 0
    assert clients.store.recorded_mentions("w-again", [e1]) == before


# ---------------------------------------------------------------- coreference inside the extraction call
def test_a_pronoun_is_linked_to_the_last_person_inside_the_extraction_call_and_never_learned(
        clients: Clients, llm: ScriptedLLM) -> None:
    first, second = say(clients, "w-coref", "I had lunch with Priya Sharma today.", "She thinks the launch will slip.")
    priya = mention(clients, "w-coref", first, "Priya Sharma").entity_id
    she = mention(clients, "w-coref", second, "She")
    assert (she.method, she.entity_id, she.confidence) == ("llm_coreference", priya, pytest.approx(0.8))
    [call] = llm.calls_to("extract")  # one call for the window: facts and coreference together
    assert call.args["references"] == [f"{second}@0"]
    assert priya is not None and "she" not in user_aliases(clients, "w-coref", priya, "dana")


def test_it_points_at_the_last_thing_and_never_at_a_person(clients: Clients) -> None:
    first, second = say(clients, "w-it", "Priya Sharma joined Acme Robotics.", "It is growing fast.")
    acme = mention(clients, "w-it", first, "Acme Robotics").entity_id
    assert mention(clients, "w-it", second, "It").entity_id == acme


def test_my_boss_resolves_through_the_speakers_relationship_and_is_learned_as_the_users_alias(
        clients: Clients) -> None:
    [stated] = say(clients, "w-boss", "Sam Carter is my boss.")
    sam = mention(clients, "w-boss", stated, "Sam Carter").entity_id
    assert sam is not None
    [e1] = say(clients, "w-boss", "My boss approved the budget.")
    boss = mention(clients, "w-boss", e1, "My boss")
    assert (boss.kind, boss.method, boss.entity_id, boss.confidence) == ("description", "llm_coreference", sam,
                                                                         pytest.approx(0.9))
    assert user_aliases(clients, "w-boss", sam, "dana")["my boss"] == (pytest.approx(0.9), "coreference")
    [e2] = say(clients, "w-boss", "I told my boss about the launch.", enrich=False)
    later = mention(clients, "w-boss", e2, "my boss")
    assert (later.method, later.entity_id) == ("alias", sam)  # the resolve step alone, before any model call
    [other] = say(clients, "w-boss", "My boss is strict.", user="omar", conversation="c9", enrich=False)
    assert mention(clients, "w-boss", other, "My boss").entity_id is None  # dana's alias is dana's


class _Pointing(OfflineLLM):
    """A model that links every reference to one fixed entity, offered or not."""

    def __init__(self, entity_id: str) -> None:
        super().__init__()
        self.entity_id = entity_id

    def extract(self, events: Sequence[WindowEvent], known_entities: Sequence[str], *,
                references: Sequence[Reference] = (), candidates: Sequence[EntitySighting] = (),
                predicates: Sequence[OntologyPredicate] = ()) -> LLMReply[ExtractionResult]:
        return LLMReply(ExtractionResult(coreferences=[
            Coreference(reference_id=r.reference_id, entity_id=self.entity_id, confidence=0.99) for r in references]))


def test_a_coreference_to_an_entity_the_conversation_did_not_offer_is_ignored(clients: Clients) -> None:
    stranger = entity(clients, "w-offered", "Mallory Stone")
    original, clients.llm = clients.llm, _Pointing(stranger)
    try:
        _, second = say(clients, "w-offered", "I met Priya Sharma.", "She was upbeat.")
    finally:
        clients.llm = original
    she = mention(clients, "w-offered", second, "She")
    assert (she.method, she.entity_id) == ("no_candidates", None)


# ---------------------------------------------------------------- the domain database
# What the operator lets resolve read (ENGRAM_DOMAIN_TABLES): the customers' key and name, each row of one world
# (the `world_id` column, by convention); `suppliers` is allowed but the domain database lacks it.
ALLOWED = "customers(customer_id, full_name); suppliers(id, name)"


@pytest.fixture(scope="module")
def domain_url(pg_server: object) -> str:
    """A second database on the same server: the worlds' customers, and a table no world may read."""
    from engram.adapters.postgres.embedded import ensure_database

    url = ensure_database(pg_server, f"domain_{os.getpid()}")
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DROP TABLE IF EXISTS customers, secrets")
        conn.execute("CREATE TABLE customers (world_id text NOT NULL, customer_id int PRIMARY KEY, "
                     "full_name text NOT NULL, tier text, notes text)")
        conn.execute("INSERT INTO customers VALUES ('w-domain', 1, 'Northwind Traders', 'gold', NULL), "
                     "('w-domain3', 2, 'Contoso Ltd', 'silver', NULL), ('w-domain2', 3, 'Fabrikam', 'gold', NULL), "
                     "('w-domain2', 4, 'Fabrikam', 'bronze', NULL), ('w-theirs', 5, 'Contoso Ltd', 'gold', NULL), "
                     "('w-domain2b', 8, 'Fabrikam', 'gold', NULL), ('w-domain2b', 9, 'Fabrikam', 'bronze', NULL), "
                     "('w-rival', 6, 'Globex Industries', 'gold', 'Owes us for Project Nightingale'), "
                     "('w-snoop', 7, 'Initrode', 'bronze', 'Project Nightingale')")
        conn.execute("CREATE TABLE secrets (id int PRIMARY KEY, holder text NOT NULL, pin text NOT NULL)")
        conn.execute("INSERT INTO secrets VALUES (1, 'Umbrella Holdings', '4921')")
    return url


@pytest.fixture
def domain(clients: Clients, domain_url: str) -> Iterator[PostgresDomainDatabase]:
    """The domain database as the operator configures it, with the allow-list above."""
    original = clients.settings
    clients.settings = Settings(domain_database_url=domain_url, domain_tables=ALLOWED)
    db = build_domain(clients.settings)
    assert isinstance(db, PostgresDomainDatabase)
    clients.domain = db
    yield db
    clients.domain, clients.settings = None, original
    db.close()


CUSTOMERS = DomainSource(entity_type="customer", source_table="customers", key_column="customer_id",
                         name_column="full_name")


def test_the_domain_database_creates_the_entity_lazily_with_its_external_reference(
        clients: Clients, domain: PostgresDomainDatabase) -> None:
    clients.store.upsert_domain_source("w-domain", CUSTOMERS, "a company that buys from us")
    [e1] = say(clients, "w-domain", "We renewed the contract with Northwind Traders.", enrich=False)
    found = mention(clients, "w-domain", e1, "Northwind Traders")
    assert (found.method, found.confidence) == ("domain_db", pytest.approx(0.85))
    created = clients.store.get_entity("w-domain", found.entity_id)  # type: ignore[arg-type]
    assert created is not None and (created.entity_type, created.external_ref) == ("customer", "customers:1")
    [e2] = say(clients, "w-domain", "northwind traders paid.", enrich=False)  # known now, even in lowercase
    again = mention(clients, "w-domain", e2, "northwind traders")
    assert (again.method, again.entity_id) == ("exact", found.entity_id)


def test_of_two_domain_rows_of_one_name_the_first_becomes_the_entity(clients: Clients,
                                                                      domain: PostgresDomainDatabase) -> None:
    clients.store.upsert_domain_source("w-domain2b", CUSTOMERS)
    [e1] = say(clients, "w-domain2b", "Fabrikam called.", enrich=False)
    found = mention(clients, "w-domain2b", e1, "Fabrikam")
    assert (found.method, found.confidence) == ("domain_db", pytest.approx(0.85))
    assert clients.store.get_entity("w-domain2b", found.entity_id).external_ref == "customers:8"  # type: ignore[arg-type,union-attr]


def test_two_domain_rows_of_one_name_ask_the_user_in_a_world_that_asks_between_rows(
        clients: Clients, domain: PostgresDomainDatabase) -> None:
    clients.store.upsert_domain_source("w-domain2", CUSTOMERS)
    clients.store.set_world_config("w-domain2", {"heuristics": {"domain_ask_between_rows": True}})
    [e1] = say(clients, "w-domain2", "Fabrikam called.", enrich=False)
    asked = mention(clients, "w-domain2", e1, "Fabrikam")
    assert asked.method == "disambiguation_required"
    refs = {clients.store.get_entity("w-domain2", c.entity_id).external_ref for c in asked.candidates}  # type: ignore[union-attr]
    assert refs == {"customers:3", "customers:4"}


def test_the_customer_points_at_the_customer_the_conversation_just_named(
        clients: Clients, domain: PostgresDomainDatabase) -> None:
    clients.store.upsert_domain_source("w-domain3", CUSTOMERS)
    first, second = say(clients, "w-domain3", "We signed Contoso Ltd this morning.", "The customer wants a discount.")
    contoso = mention(clients, "w-domain3", first, "Contoso Ltd").entity_id
    assert mention(clients, "w-domain3", second, "The customer").entity_id == contoso


def test_a_world_without_domain_tables_never_searches_the_domain(clients: Clients,
                                                                 domain: PostgresDomainDatabase) -> None:
    [e1] = say(clients, "w-nodomain", "We renewed the contract with Northwind Traders.", enrich=False)
    found = mention(clients, "w-nodomain", e1, "Northwind Traders")
    assert found.method == "created"
    assert clients.store.get_entity("w-nodomain", found.entity_id).external_ref is None  # type: ignore[arg-type, union-attr]


def test_an_allowed_domain_table_the_domain_database_lacks_is_a_configuration_error(
        clients: Clients, domain: PostgresDomainDatabase) -> None:
    clients.store.upsert_domain_source("w-domain4", DomainSource(entity_type="supplier", source_table="suppliers",
                                                                 key_column="id", name_column="name"))
    domain.ping()
    with pytest.raises(ConfigurationError, match="domain_ontology") as raised:
        say(clients, "w-domain4", "We ordered from Initrode Supplies.", enrich=False)
    assert "suppliers" in raised.value.message and "LINE" not in raised.value.message  # no driver text


def test_an_ontology_row_naming_a_table_or_column_outside_the_allow_list_is_never_read(
        clients: Clients, domain: PostgresDomainDatabase, caplog: pytest.LogCaptureFixture) -> None:
    clients.store.upsert_domain_source("w-snoop", DomainSource(entity_type="secret", source_table="secrets",
                                                               key_column="id", name_column="holder"))
    clients.store.upsert_domain_source("w-snoop", DomainSource(entity_type="project", source_table="customers",
                                                               key_column="customer_id", name_column="notes"))
    clients.store.upsert_domain_source("w-snoop", DomainSource(entity_type="account", source_table="public.customers",
                                                               key_column="customer_id", name_column="full_name"))
    clients.store.set_world_config("w-snoop", {"heuristics": {"create_unknown_names": "always"}})
    [e1] = say(clients, "w-snoop", "Umbrella Holdings and Project Nightingale came up today.", enrich=False)
    found = {m.text: m.method for m in clients.store.recorded_mentions("w-snoop", [e1])}
    assert found["Umbrella Holdings"] == "created" and found["Project Nightingale"] == "created"
    assert all(e.external_ref is None for e in clients.store.list_entities("w-snoop", "", 50))
    ignored = " ".join(r.getMessage() + str(r.__dict__.get("source", "")) for r in caplog.records)
    assert "secrets(id, holder)" in ignored and "customers(customer_id, notes)" in ignored


@pytest.mark.parametrize(("setting", "with_domain", "method"), [
    (None, True, "not_found"),  # seed 004: nothing found where the domain database is
    (None, False, "created"),  # no domain database: the mention itself makes the entity
    ("always", True, "created"),
    ("never", False, "not_found"),
])
def test_a_proper_noun_nothing_knows_becomes_an_entity_only_where_the_world_says(
        clients: Clients, domain: PostgresDomainDatabase, setting: str | None, with_domain: bool, method: str) -> None:
    world = f"w-unknown-{setting}-{with_domain}"
    if with_domain:
        clients.store.upsert_domain_source(world, CUSTOMERS)
    if setting is not None:
        clients.store.set_world_config(world, {"heuristics": {"create_unknown_names": setting}})
    [e1] = say(clients, world, "We met Zorblax Industries yesterday.", enrich=False)
    found = mention(clients, world, e1, "Zorblax Industries")
    assert found.method == method and (found.entity_id is not None) == (method == "created")
    assert len(clients.store.list_entities(world, "Zorblax", 10)) == (method == "created")


def test_a_world_never_finds_another_worlds_rows_of_an_allowed_table(
        clients: Clients, domain: PostgresDomainDatabase) -> None:
    clients.store.upsert_domain_source("w-domain5", CUSTOMERS)
    [mine] = say(clients, "w-domain5", "We met Globex Industries and Northwind Traders.", enrich=False)
    assert {m.text: m.method for m in clients.store.recorded_mentions("w-domain5", [mine])} == {
        "Globex Industries": "not_found", "Northwind Traders": "not_found"}
    clients.store.upsert_domain_source("w-rival", CUSTOMERS)
    [theirs] = say(clients, "w-rival", "We met Globex Industries.", enrich=False)
    rival = mention(clients, "w-rival", theirs, "Globex Industries")
    assert rival.method == "domain_db"
    assert clients.store.get_entity("w-rival", rival.entity_id).external_ref == "customers:6"  # type: ignore[arg-type, union-attr]


def test_the_resolve_step_never_calls_the_model(clients: Clients, llm: ScriptedLLM) -> None:
    say(clients, "w-nomodel", "I met Priya Sharma.", "She was upbeat about Globex.", enrich=False)
    assert llm.calls == []


# ---------------------------------------------------------------- worlds never meet
def test_a_mention_never_resolves_to_another_worlds_entity(clients: Clients, domain: PostgresDomainDatabase) -> None:
    theirs = entity(clients, "w-theirs", "Priya Sharma", "person", ("PS", 0.95, None), ("Pri", 0.95, "dana"))
    entity(clients, "w-theirs", "Katherine Johnson")
    clients.store.upsert_domain_source("w-theirs", CUSTOMERS)
    [e1] = say(clients, "w-mine", "Priya Sharma, PS, Pri, Priya Sharme, Katherine Johns and Contoso Ltd met.",
               enrich=False)
    mine = clients.store.recorded_mentions("w-mine", [e1])
    assert {m.text: m.method for m in mine} == {"Priya Sharma": "created", "PS": "created", "Pri": "created",
                                                 "Priya Sharme": "not_found", "Katherine Johns": "created",
                                                 "Contoso Ltd": "created"}
    ids = {m.entity_id for m in mine if m.entity_id is not None}
    assert theirs not in ids
    assert all(clients.store.get_entity("w-mine", i) is not None for i in ids)  # type: ignore[arg-type]
    assert clients.store.get_entity("w-mine", theirs) is None
    assert [e.name for e in clients.store.list_entities("w-mine", "Katherine", 10)] == ["Katherine Johns"]


def test_a_disambiguation_cannot_be_settled_with_another_worlds_entity(clients: Clients) -> None:
    elsewhere = entity(clients, "w-far", "Katherine Johns")
    entity(clients, "w-near", "Katherine Johnson")
    entity(clients, "w-near", "Katherine Johnston")
    [e1] = say(clients, "w-near", "Katherine Johns sent the report.", enrich=False)
    with pytest.raises(NotFound):
        settle_disambiguation(clients, clients.world("w-near"), mention(clients, "w-near", e1, "Katherine Johns").mention_id,
                              SettleRequest(entity_id=elsewhere))
    with pytest.raises(NotFound):  # nor another world's mention
        settle_disambiguation(clients, clients.world("w-far"), mention(clients, "w-near", e1, "Katherine Johns").mention_id,
                              SettleRequest(entity_id=elsewhere))


def test_mention_ids_taken_in_turn_by_two_worlds_reveal_neither_worlds_activity(clients: Clients) -> None:
    taken: list[str] = []
    for i in range(6):
        for world in ("w-count-a", "w-count-b"):
            [e1] = say(clients, world, f"Ines Duarte{i} met Omar Haddad{i}.", enrich=False)
            taken += [m.mention_id for m in clients.store.recorded_mentions(world, [e1])]
    assert len(taken) == len(set(taken)) == 24
    assert all(isinstance(i, str) and re.fullmatch(r"men_[0-9a-f]{32}", i) for i in taken)  # no counter
    assert sorted(taken) != taken and sorted(taken, reverse=True) != taken  # nor any order of creation


# ---------------------------------------------------------------- the graph
def test_a_fact_with_an_entity_object_becomes_an_edge_pointing_at_its_fact(clients: Clients) -> None:
    [e1] = say(clients, "w-graph", "Sam Carter is my boss.")
    sam = mention(clients, "w-graph", e1, "Sam Carter").entity_id
    dana = clients.store.find_entity_by_external_ref("w-graph", "user:dana")
    assert sam is not None and dana is not None
    [edge] = clients.store.relationships("w-graph", sam, 1)
    [fact] = clients.store.find_facts("w-graph", sam, "boss_of")
    assert (edge.source_entity_id, edge.relation, edge.target_entity_id) == (sam, "boss_of", dana.entity_id)
    assert edge.source_memory_ids == [fact.memory_id] and edge.confidence == pytest.approx(fact.confidence)
    assert edge.evidence_event_ids == [e1]


def test_a_superseded_fact_takes_its_edge_away(clients: Clients) -> None:
    [e1] = say(clients, "w-move", "I work at Acme Robotics.")
    acme = mention(clients, "w-move", e1, "Acme Robotics").entity_id
    [e2] = say(clients, "w-move", "Actually, I work at Globex now.")
    globex = mention(clients, "w-move", e2, "Globex").entity_id
    dana = clients.store.find_entity_by_external_ref("w-move", "user:dana")
    assert dana is not None
    edges = {(r.relation, r.target_entity_id) for r in clients.store.relationships("w-move", dana.entity_id, 1)}
    assert edges == {("works_at", globex)} and acme is not None


def test_paths_join_entities_through_their_relationships(clients: Clients) -> None:
    e1, _ = say(clients, "w-path", "Sam Carter is my boss.", "I work at Acme Robotics.")
    sam = mention(clients, "w-path", e1, "Sam Carter").entity_id
    acme = clients.store.find_entity_by_name("w-path", "Acme Robotics")
    assert sam is not None and acme is not None
    [path] = find_paths(clients, clients.world("w-path"), sam, acme.entity_id, max_length=3, limit=5)
    assert path.names == ["Sam Carter", "dana", "Acme Robotics"]
    assert [r.relation for r in path.relationships] == ["boss_of", "works_at"]
    assert path.confidence == pytest.approx(path.relationships[0].confidence * path.relationships[1].confidence,
                                            abs=1e-3)
    assert find_paths(clients, clients.world("w-path"), sam, acme.entity_id, max_length=1, limit=5) == []


def test_an_entity_comes_with_its_aliases_facts_and_relationships(clients: Clients) -> None:
    [e1] = say(clients, "w-detail", "Sam Carter is my boss.")
    sam = mention(clients, "w-detail", e1, "Sam Carter").entity_id
    assert sam is not None
    clients.store.add_alias(EntityAlias(world_id="w-detail", entity_id=sam, alias="Sammy", user_id="omar",
                                        confidence=0.9, source="user"))
    detail = entity_detail(clients, clients.world("w-detail"), sam)
    assert {a.alias for a in detail.alias_details} == {"Sam Carter", "Sammy"}
    assert [f.predicate for f in detail.facts] == ["boss_of"] and [r.relation for r in detail.relationships] == [
        "boss_of"]
    assert {a.alias for a in entity_detail(clients, clients.world("w-detail"), sam, user_id="dana").alias_details} == {"Sam Carter"}


def test_entities_are_found_by_name_alias_misspelling_and_definition(clients: Clients) -> None:
    robert = entity(clients, "w-find", "Robert Brown", "person", ("Bob", 0.9, None))
    acme = entity(clients, "w-find", "Acme Robotics", "organization")
    assert [e.entity_id for e in find_entities(clients, clients.world("w-find"), "robert", None, 10)] == [robert]
    assert [e.entity_id for e in find_entities(clients, clients.world("w-find"), "bob", None, 10)] == [robert]
    assert [e.entity_id for e in find_entities(clients, clients.world("w-find"), "Acme Robotcs", None, 10)] == [acme]
    assert [e.entity_id for e in find_entities(clients, clients.world("w-find"), None, "organization", 10)] == [acme]
    assert find_entities(clients, clients.world("w-find"), "robert", "organization", 10) == []
