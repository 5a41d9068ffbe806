"""Builds each adapter from settings: the embedded default when a part's URL is unset."""

from __future__ import annotations

from typing import TYPE_CHECKING

from engram.config import STAGES, LLMKind, Settings
from engram.errors import ConfigurationError

if TYPE_CHECKING:
    from engram.adapters.postgres.store import PostgresStore
    from engram.ports import LLM, DomainDatabase, Embedder, KeywordIndex, WebSearch, Workflows
    from engram.ports.language import LanguageEngine


def database_url(settings: Settings, embedding_dim: int) -> str:
    """DATABASE_URL, else the Secrets Manager secret (AWS), else the embedded server, migrated."""
    if settings.database_url:
        return settings.database_url
    if settings.database_secret_arn:
        from engram.adapters.postgres.connection import url_from_secret

        return url_from_secret(settings.database_secret_arn, settings.database_host)
    from engram.adapters.postgres.embedded import ensure_database, start_embedded_postgres
    from engram.adapters.postgres.migrations import apply_migrations

    url = ensure_database(start_embedded_postgres(settings.data_dir), "engram")
    apply_migrations(url, embedding_dim)
    return url


def build_store(settings: Settings, embedding_dim: int) -> PostgresStore:
    from engram.adapters.postgres.store import PostgresStore

    return PostgresStore(database_url(settings, embedding_dim), prepare=prepares(settings))


def prepares(settings: Settings) -> bool:
    """Whether the store prepares its statements on the server: `database_prepare`, else on the embedded server only."""
    if settings.database_prepare is not None:
        return settings.database_prepare
    return not settings.database_url and not settings.database_secret_arn


def build_index(settings: Settings, store: PostgresStore | None = None) -> KeywordIndex:
    """The keyword brain `settings.resolved_keyword_index()` names; PostgreSQL full-text search shares
    the store's pool (one pool per process bounds the connections)."""
    kind = settings.resolved_keyword_index()
    if kind == "postgres":
        from engram.adapters.postgres_fts_index import PostgresFtsIndex

        if store is None:
            raise ConfigurationError("ENGRAM_KEYWORD_INDEX=postgres needs the PostgreSQL store")
        return PostgresFtsIndex(store)
    if kind == "opensearch":
        from engram.adapters.opensearch_index import OpenSearchIndex

        if not settings.opensearch_url:
            raise ConfigurationError("ENGRAM_KEYWORD_INDEX=opensearch needs OPENSEARCH_URL")
        return OpenSearchIndex(settings.opensearch_url, index_prefix=settings.opensearch_index_prefix)
    from engram.adapters.tantivy_index import TantivyIndex

    return TantivyIndex(settings.data_dir / "index")


def build_embedder(settings: Settings) -> Embedder:
    from engram.adapters.embedders import build_embedder as build

    return build(settings)


def build_llm(settings: Settings) -> LLM:
    """The model `ENGRAM_LLM` names, and where `ENGRAM_MODEL_<STAGE>` gives a stage its own, each stage's (a model
    named twice is built once)."""
    settings = _keys_from_secrets(settings)
    from engram.adapters.engine_first import engine_first

    # The language engine reads every extraction window first; a model, only the windows it cannot.
    default = engine_first(_provider_llm(settings, settings.resolved_llm(), None))
    stages = settings.stage_models()
    if not stages:
        return default
    from engram.adapters.staged_llm import StagedLLM

    built: dict[tuple[LLMKind, str | None], LLM] = {}
    for provider, model in stages.values():
        if (provider, model) not in built:
            built[provider, model] = engine_first(_provider_llm(settings, provider, model))
    return StagedLLM(default, {stage: built[spec] for stage, spec in stages.items()})


def _keys_from_secrets(settings: Settings) -> Settings:
    """The API keys Secrets Manager holds (on AWS the keys are never in the function's environment), read once, at
    cold start; a key already set wins."""
    keys = {key: arn for key, arn in (("anthropic_api_key", settings.anthropic_api_key_secret_arn),
                                       ("openai_api_key", settings.openai_api_key_secret_arn))
            if arn and not getattr(settings, key)}
    if not keys:
        return settings
    from engram.adapters.secrets import api_key

    return settings.model_copy(update={key: api_key(arn) for key, arn in keys.items()})


def _provider_llm(settings: Settings, provider: LLMKind, model: str | None) -> LLM:
    if provider == "openai":
        from engram.adapters.openai_compat import build_llm as build_openai

        return build_openai(settings, model)
    from engram.adapters.anthropic import build_llm as build

    return build(settings.model_copy(update={"llm": provider}), model)


def build_offline_llm(settings: Settings) -> LLM | None:
    """The offline engine a world's stages fall back to once its daily model budget is spent; None when every stage
    runs offline already (nothing is spent, nothing to meter)."""
    stages = settings.stage_models()
    if all(stages.get(stage, (settings.resolved_llm(), None))[0] == "offline" for stage in STAGES):
        return None
    from engram.adapters.offline.llm import OfflineLLM

    return OfflineLLM()


def build_workflows(settings: Settings) -> Workflows:
    """Step Functions by ARN (each function is given only the ARNs it starts). The local runtime
    replaces this with its moto-backed workflows."""
    from engram.adapters.stepfunctions import StepFunctionsWorkflows

    return StepFunctionsWorkflows.from_settings(settings)


def build_domain(settings: Settings) -> DomainDatabase | None:
    """The domain database the resolve step searches, when `ENGRAM_DOMAIN_DATABASE_URL` is set: the tables
    `ENGRAM_DOMAIN_TABLES` allows, and nothing else."""
    if not settings.domain_database_url:
        return None
    from engram.adapters.postgres.domain import PostgresDomainDatabase

    return PostgresDomainDatabase(settings.domain_database_url, settings.domain_tables)


def build_web_search(settings: Settings) -> WebSearch | None:
    """DuckDuckGo Instant Answer when `ENGRAM_WEB_SEARCH` is on; None (no web search) otherwise."""
    if not settings.web_search:
        return None
    from engram.adapters.web_search import DuckDuckGoInstantAnswer

    return DuckDuckGoInstantAnswer(base_url=settings.web_search_url, timeout_s=settings.web_search_timeout_s)


def build_language(settings: Settings) -> LanguageEngine:
    """spaCy's small English pipeline: the first stage of every mode (loaded on first use, once per process)."""
    from engram.adapters.spacy_engine import shared_engine

    return shared_engine()
