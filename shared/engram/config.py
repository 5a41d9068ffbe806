"""Settings, read once from the environment (the heuristics, overridable per world, are in
`engram.model.heuristics`).

Domain code never reads `os.environ`: it receives a `Settings` value.
"""

from __future__ import annotations

import json
import os
import re
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from engram.errors import ConfigurationError

LLMKind = Literal["offline", "anthropic", "bedrock", "openai"]
Stage = Literal["extract", "answer", "summarize", "research"]
STAGES: tuple[Stage, ...] = ("extract", "answer", "summarize", "research")
EmbedderKind = Literal["hash", "minilm", "titan"]
KeywordIndexKind = Literal["tantivy", "opensearch", "postgres"]

_IDENTIFIER = r"[A-Za-z_][A-Za-z0-9_$]{0,62}"
_TABLE = re.compile(rf"{_IDENTIFIER}(?:\.{_IDENTIFIER})?")
_COLUMN = re.compile(_IDENTIFIER)
_COMPACT_ENTRY = re.compile(r"\s*([^\s(]+)\s*\(([^)]*)\)\s*")


class DomainTable(BaseModel):
    """A domain table the resolve step may read: the columns an ontology row may name as its key and name, and
    the column holding each row's world (every lookup reads the asking world's rows only)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    columns: frozenset[str] = Field(min_length=1)
    world_column: str = "world_id"

    @model_validator(mode="after")
    def _identifiers(self) -> DomainTable:
        for column in (*sorted(self.columns), self.world_column):
            if not _COLUMN.fullmatch(column):
                raise ValueError(f"{column!r} is not a column name")
        return self


class DomainTables(BaseModel):
    """The operator's allow-list of domain tables (`ENGRAM_DOMAIN_TABLES`), by table name as ontology rows
    write it. What a world's ontology may point resolve at: anything else is refused at import and never read."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    tables: dict[str, DomainTable] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _table_names(self) -> DomainTables:
        for name in self.tables:
            if not _TABLE.fullmatch(name):
                raise ValueError(f"{name!r} is not a table name (table or schema.table)")
        return self

    @classmethod
    def parse(cls, text: str) -> DomainTables:
        """`customers(customer_id, full_name); crm.accounts(id, name)`, each table's rows carrying their world
        in `world_id`; or JSON, `{"customers": {"columns": ["customer_id", "full_name"], "world_column":
        "tenant"}}` (a list of columns alone takes `world_id`). Blank: no table allowed."""
        text = text.strip()
        if not text:
            return cls()
        if text.startswith("{"):
            raw = json.loads(text)
            if not isinstance(raw, dict):
                raise ValueError("a JSON object of tables")
            return cls.model_validate({"tables": {name: {"columns": spec} if isinstance(spec, list) else spec
                                                  for name, spec in raw.items()}})
        tables: dict[str, dict[str, list[str]]] = {}
        for entry in filter(str.strip, text.split(";")):
            match = _COMPACT_ENTRY.fullmatch(entry)
            if match is None:
                raise ValueError(f"{entry.strip()!r} is not table(column, column...)")
            tables[match.group(1)] = {"columns": [c.strip() for c in match.group(2).split(",") if c.strip()]}
        return cls.model_validate({"tables": tables})

    def table_for(self, source_table: str | None, *columns: str | None) -> DomainTable | None:
        """The allowed table a source names, if every column it names is allowed in it; else None."""
        table = self.tables.get(source_table or "")
        if table is None or not all(c is not None and c in table.columns for c in columns):
            return None
        return table


class Settings(BaseSettings):
    """Process settings. Unset URLs select the embedded default parts."""

    model_config = SettingsConfigDict(env_prefix="ENGRAM_", extra="ignore", frozen=True)

    data_dir: Path = Path(".engram")
    port: int = 8000
    host: str = "127.0.0.1"

    # Which parts: the defaults are the embedded ones.
    llm: LLMKind | None = None  # None: anthropic when ANTHROPIC_API_KEY is set, else offline
    embedder: EmbedderKind = "minilm"
    embedding_dim: int = 384
    database_url: str | None = Field(default=None, validation_alias="DATABASE_URL")
    database_secret_arn: str | None = None  # on AWS: credentials from Secrets Manager
    database_host: str | None = None  # on AWS: the RDS Proxy endpoint, in place of the secret's host
    # Server-side prepared statements (`PostgresBase`'s `prepare`). None: on the embedded server only, since RDS Proxy
    # pins a session that prepares to its client and PgBouncer in transaction mode before 1.21 cannot carry them.
    database_prepare: bool | None = None
    opensearch_url: str | None = Field(default=None, validation_alias="OPENSEARCH_URL")
    opensearch_index_prefix: str = "engram"
    # The keyword brain. None: OpenSearch when OPENSEARCH_URL is set, else tantivy on disk; "postgres" is the
    # full-text index in the database itself (the `small` deployment profile, which has no OpenSearch).
    keyword_index: KeywordIndexKind | None = None
    anthropic_api_key: str | None = Field(default=None, validation_alias="ANTHROPIC_API_KEY")
    anthropic_api_key_secret_arn: str | None = None  # on AWS: the key read from Secrets Manager at cold start
    anthropic_base_url: str | None = Field(default=None, validation_alias="ANTHROPIC_BASE_URL")
    anthropic_model: str = "claude-sonnet-4-5"
    anthropic_fast_model: str = "claude-haiku-4-5"
    bedrock_region: str | None = None
    bedrock_model: str = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
    bedrock_fast_model: str = "us.anthropic.claude-haiku-4-5-20251001-v1:0"
    # Any OpenAI-compatible server (OpenAI, Azure OpenAI, OpenRouter, vLLM, Ollama, LM Studio, llama.cpp's server).
    openai_base_url: str | None = None  # None: OpenAI's API
    openai_api_key: str | None = None  # a local server without keys takes any
    openai_api_key_secret_arn: str | None = None  # on AWS: the key read from Secrets Manager at cold start
    openai_model: str = "gpt-4o-mini"
    openai_max_tokens: int = Field(default=2048, ge=1)
    # A model per stage, `provider:model` (`openai:qwen2.5:7b`, `anthropic:claude-haiku-4-5`) or `offline`; unset:
    # the ENGRAM_LLM model. extract: extraction; answer: answers; summarize: summaries, conflicts, inflections, the
    # research context's compaction digest; research: a research question's plan, evaluation and synthesis.
    model_extract: str | None = None
    model_answer: str | None = None
    model_summarize: str | None = None
    model_research: str | None = None
    # Model tokens (in and out) a world may spend per UTC day before its stages fall back to the offline engine;
    # a world's `llm_budget` config replaces it. None: no limit (spend is still counted).
    llm_daily_tokens: int | None = Field(default=None, ge=0)
    llm_max_retries: int = 2
    llm_timeout_s: float = 60.0
    titan_model_id: str = "amazon.titan-embed-text-v2:0"

    # Workflows: state machine ARNs (AWS) or names resolved by the local runtime.
    enrichment_state_machine_arn: str | None = None
    query_state_machine_arn: str | None = None
    consolidation_state_machine_arn: str | None = None
    query_sync: bool = True  # True on AWS (Express StartSyncExecution); the local runtime polls
    # The local runtime's bound on concurrent invocations of the most reserved function (the query steps; the
    # others get their share of it by reserved concurrency, at least 2); calls past a bound are throttled and
    # retried by the state machines. Sized to the machine: three per core, at most one connection pool (8).
    local_concurrency: int = Field(default_factory=lambda: min(3 * (os.cpu_count() or 2), 8), ge=1)

    # Local API authorization: "key1=world-a,world-b;key2=*". Empty: auth off.
    api_keys: str | None = None

    # The domain database the resolve step searches for unknown names (tables described in `domain_ontology`).
    # Unset: no domain stage.
    domain_database_url: str | None = None
    # The tables and columns of it a world's ontology may name (DomainTables.parse: `customers(customer_id,
    # full_name); ...`, rows carrying their world in `world_id`, or JSON naming another world column). Unset: none.
    domain_tables: Annotated[DomainTables, NoDecode] = Field(default_factory=DomainTables)

    # Web search for questions that need current information (DuckDuckGo Instant Answer): off unless enabled.
    web_search: bool = False
    web_search_url: str = "https://api.duckduckgo.com/"
    web_search_timeout_s: float = 3.0

    @field_validator("model_extract", "model_answer", "model_summarize", "model_research")
    @classmethod
    def _stage_model(cls, value: str | None) -> str | None:
        if value is not None:
            parse_stage_model(value)
        return value

    @field_validator("domain_tables", mode="before")
    @classmethod
    def _parse_domain_tables(cls, value: object) -> object:
        return DomainTables.parse(value) if isinstance(value, str) else value

    def resolved_llm(self) -> LLMKind:
        if self.llm is not None:
            return self.llm
        return "anthropic" if self.anthropic_api_key else "offline"

    def stage_models(self) -> dict[Stage, tuple[LLMKind, str | None]]:
        """The stages given a model of their own: (provider, model; None: the provider's default)."""
        named = {"extract": self.model_extract, "answer": self.model_answer, "summarize": self.model_summarize,
                 "research": self.model_research}
        return {stage: parse_stage_model(value) for stage, value in named.items() if value}  # type: ignore[misc]

    def resolved_keyword_index(self) -> KeywordIndexKind:
        if self.keyword_index is not None:
            return self.keyword_index
        return "opensearch" if self.opensearch_url else "tantivy"


def parse_stage_model(value: str) -> tuple[LLMKind, str | None]:
    """`provider:model` (the model may hold colons: `openai:qwen2.5:7b`) or `offline`; anything else is a ValueError
    that names the providers."""
    provider, _, model = value.strip().partition(":")
    if provider == "offline" and not model:
        return "offline", None
    if provider not in ("openai", "anthropic", "bedrock") or not model.strip():
        raise ValueError(f"{value!r} is not provider:model (openai, anthropic or bedrock) or offline")
    return provider, model.strip()  # type: ignore[return-value]


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process settings, validated once; a bad variable fails the cold start by name."""
    try:
        return Settings()
    except ValidationError as exc:
        names = ", ".join(".".join(str(p) for p in err["loc"]) for err in exc.errors())
        raise ConfigurationError(f"invalid settings: {names}", details=exc.errors()) from exc

