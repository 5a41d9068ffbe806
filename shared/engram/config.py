"""Settings (read once from the environment) and heuristics (named defaults, overridable per world).

Domain code never reads `os.environ`: it receives a `Settings` or `Heuristics` value.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

from engram.errors import ConfigurationError

LLMKind = Literal["offline", "anthropic", "bedrock"]
EmbedderKind = Literal["hash", "minilm", "titan"]


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
    opensearch_url: str | None = Field(default=None, validation_alias="OPENSEARCH_URL")
    opensearch_index_prefix: str = "engram"
    anthropic_api_key: str | None = Field(default=None, validation_alias="ANTHROPIC_API_KEY")
    anthropic_base_url: str | None = Field(default=None, validation_alias="ANTHROPIC_BASE_URL")
    anthropic_model: str = "claude-sonnet-4-5"
    anthropic_fast_model: str = "claude-haiku-4-5"
    bedrock_region: str | None = None
    bedrock_model: str = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
    bedrock_fast_model: str = "us.anthropic.claude-haiku-4-5-20251001-v1:0"
    llm_max_retries: int = 2
    llm_timeout_s: float = 60.0
    titan_model_id: str = "amazon.titan-embed-text-v2:0"

    # Workflows: state machine ARNs (AWS) or names resolved by the local runtime.
    enrichment_state_machine_arn: str | None = None
    query_state_machine_arn: str | None = None
    consolidation_state_machine_arn: str | None = None
    query_sync: bool = True  # True on AWS (Express StartSyncExecution); the local runtime polls

    # Local API authorization: "key1=world-a,world-b;key2=*". Empty: auth off.
    api_keys: str | None = None

    def resolved_llm(self) -> LLMKind:
        if self.llm is not None:
            return self.llm
        return "anthropic" if self.anthropic_api_key else "offline"


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process settings, validated once; a bad variable fails the cold start by name."""
    try:
        return Settings()
    except ValidationError as exc:
        names = ", ".join(".".join(str(p) for p in err["loc"]) for err in exc.errors())
        raise ConfigurationError(f"invalid settings: {names}", details=exc.errors()) from exc


class Heuristics(BaseModel):
    """Every tunable number of the business rules, named once. A world may override any of them
    through the `system_config` table (key `heuristics`, a JSON object of these fields)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    # ingest: importance
    base_importance: dict[str, float] = {
        "userpreference": 0.9,
        "factuallearning": 0.8,
        "contextualfact": 0.7,
        "default": 0.5,
        "userinput": 0.4,
        "assistantresponse": 0.3,
    }
    importance_keywords: tuple[str, ...] = (
        "remember", "prefer", "always", "never", "my name is", "i am", "i live", "i work",
    )
    importance_keyword_boost: float = 0.2
    importance_cap: float = 1.0
    max_events_per_batch: int = 100
    max_content_chars: int = 32_000
    enrichment_sweep_grace_s: int = 300  # a pending event older than this lost its enrichment start
    enrichment_sweep_limit: int = 1_000  # events restarted per sweep (per world when one is named)

    # ingest: tags
    tag_keywords: dict[str, tuple[str, ...]] = {
        "weather": ("weather", "rain", "sunny", "temperature", "forecast", "snow", "cloudy", "wind"),
        "greeting": ("hello", "hi", "hey", "good morning", "good afternoon", "good evening", "greetings"),
        "question": ("?", "what", "how", "why", "when", "where", "who", "which"),
        "preference": ("prefer", "like", "love", "hate", "favorite", "favourite", "enjoy", "dislike"),
        "personal": ("my name", "i am", "i'm", "my family", "my job", "i live", "i work", "my wife",
                     "my husband", "my kids"),
        "time": ("today", "tomorrow", "yesterday", "tonight", "morning", "evening", "week", "month",
                 "year", "o'clock"),
        "news": ("news", "headline", "breaking", "latest", "announced", "report"),
    }

    # resolve
    alias_accept: float = 0.85
    fuzzy_min: float = 0.7
    fuzzy_single_accept: float = 0.85
    coreference_accept: float = 0.7
    domain_create_confidence: float = 0.85

    # extract / lifecycle
    extraction_window: int = 10
    max_confidence: float = 0.95
    reinforce_step: float = 0.05
    conflict_confidence_gap: float = 0.30
    conflict_recency_gap_days: int = 60
    decay_half_life_days: float = 180.0

    # extract: signals (when a conversation's new turns are read for signals, and how)
    signal_trigger_phrases: tuple[str, ...] = (
        "i assume", "assuming", "presumably", "not sure if", "not sure whether", "should we", "deadline",
        "due by", "no later than", "budget", "we need to", "we must", "we can't", "we cannot", "the goal is",
        "our goal", "i want to", "we want to", "we aim to", "i think", "i believe", "what if", "evidence",
        "according to", "the data shows", "study", "report", "measured", "decided", "decision", "let's",
        "i'll go with", "we'll go with",
    )
    signal_roles: tuple[str, ...] = ("user",)  # whose messages count as turns and are read for signals
    signal_min_turns: int = 2
    signal_min_chars: int = 200
    signal_force_after_turns: int = 5
    signal_marker_confidence: float = 0.8  # a sentence with an explicit marker ("I assume", "deadline")
    signal_claim_confidence: float = 0.5  # a bare assertive statement read as a Claim
    signal_claim_min_words: int = 4
    signal_max_chars: int = 500  # a longer sentence is cut here before it is stored and keyed

    # retrieval
    rrf_k: int = 60
    weight_semantic: float = 0.4
    weight_entity: float = 0.25
    weight_recency: float = 0.2
    weight_importance: float = 0.1
    weight_reinforcement: float = 0.05
    recency_half_life_days: float = 30.0
    recency_half_life_long_days: float = 90.0
    semantic_min_similarity: float = 0.2
    search_limit: int = 10

    # conversation context
    context_recent_exchanges: int = 5
    context_semantic: int = 3
    context_important: int = 5
    context_max_items: int = 8

    # query loop
    max_info_requests: int = 3
    max_initial_entities: int = 10
    context_token_budget: int = 6_000
    chars_per_token: float = 4.0

    # consolidation
    summary_max_items: int = 8
    consolidation_boost: float = 0.1
    archive_below_confidence: float = 0.2
    consolidation_max_scopes: int = 50

    def with_overrides(self, overrides: dict[str, object] | None) -> Heuristics:
        """These heuristics with a world's overrides applied (unknown keys are an error)."""
        if not overrides:
            return self
        return Heuristics.model_validate({**self.model_dump(), **overrides})


DEFAULT_HEURISTICS = Heuristics()
