"""The operator's allow-list of domain tables (ENGRAM_DOMAIN_TABLES): what a world's ontology may point the
resolve step at, read once from the environment."""

from __future__ import annotations

import pytest

from engram.config import DomainTables, Settings, get_settings
from engram.errors import ConfigurationError


def test_the_compact_form_lists_tables_with_their_columns_and_rows_carry_their_world_in_world_id() -> None:
    allowed = DomainTables.parse(" customers(customer_id, full_name) ; crm.accounts(id,name);")
    assert set(allowed.tables) == {"customers", "crm.accounts"}
    customers = allowed.table_for("customers", "customer_id", "full_name")
    assert customers is not None and customers.world_column == "world_id"
    assert allowed.table_for("crm.accounts", "id", "name") is not None


def test_the_json_form_may_name_another_world_column() -> None:
    allowed = DomainTables.parse('{"customers": {"columns": ["id", "name"], "world_column": "tenant"}, '
                                 '"products": ["sku", "title"]}')
    assert allowed.tables["customers"].world_column == "tenant"
    assert allowed.tables["products"].world_column == "world_id"


def test_only_a_listed_table_with_every_named_column_listed_is_allowed() -> None:
    allowed = DomainTables.parse("customers(customer_id, full_name)")
    assert allowed.table_for("secrets", "id", "holder") is None
    assert allowed.table_for("customers", "customer_id", "notes") is None
    assert allowed.table_for("public.customers", "customer_id", "full_name") is None  # the name as listed
    assert allowed.table_for("customers", "customer_id", None) is None
    assert DomainTables.parse("").table_for("customers", "customer_id", "full_name") is None


@pytest.mark.parametrize("text", ["customers", "customers()", "cust omers(id)", 'customers(id, "name")',
                                  "customers(id); orders", 'x"; DROP TABLE y; --(id)', "a.b.c(id)", "[1]",
                                  '{"customers": {"columns": ["id"], "world_column": "w; DROP"}}'])
def test_a_malformed_allow_list_fails_the_cold_start_naming_the_setting(
        text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ENGRAM_DOMAIN_TABLES", text)
    get_settings.cache_clear()
    try:
        with pytest.raises(ConfigurationError, match="domain_tables"):
            get_settings()
    finally:
        get_settings.cache_clear()


def test_settings_read_the_allow_list_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ENGRAM_DOMAIN_TABLES", "customers(customer_id, full_name)")
    assert set(Settings().domain_tables.tables) == {"customers"}
    monkeypatch.delenv("ENGRAM_DOMAIN_TABLES")
    assert Settings().domain_tables.tables == {}
