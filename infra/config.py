"""What a deployment is made of, read once from the CDK context and validated: the profile and its
sizes, the identity provider, the models, the schedule. Every value has a profile default, so
`cdk deploy -c profile=prod` alone is a complete production deployment.

Context values arrive as JSON from cdk.json and as strings from `-c key=value`; both validate here.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, field_validator

from engram.config import Settings

Profile = Literal["small", "prod"]
FUNCTION_NAMES = ("ingest", "api", "resolve", "extract", "query_step", "consolidate")

# Reserved concurrency per function: without RDS Proxy it is what bounds the connections to Aurora
# (each function instance holds one), and in both profiles it caps the model spend a burst can cause.
# consolidate must admit the consolidation Map's concurrency (4) plus its plan and finish steps.
RESERVED_CONCURRENCY: dict[Profile, dict[str, int]] = {
    "small": {"ingest": 10, "api": 10, "resolve": 3, "extract": 3, "query_step": 6, "consolidate": 5},
    "prod": {"ingest": 100, "api": 100, "resolve": 20, "extract": 20, "query_step": 50, "consolidate": 5},
}
# Aurora Serverless v2 capacity (ACU): small pauses at 0 when idle; prod keeps a warm floor (RDS Proxy
# holds connections open, so a prod cluster would never pause anyway).
CAPACITY: dict[Profile, tuple[float, float]] = {"small": (0, 4), "prod": (0.5, 16)}
# Consolidation (and the sweep of stalled enrichments it runs) wakes a paused cluster: small runs it
# four times a day (about $0.70 a month of wake-ups), prod every hour.
CONSOLIDATION_MINUTES: dict[Profile, int] = {"small": 360, "prod": 60}


class Deployment(BaseModel):
    """The deployment's choices. Field aliases are the context keys (camelCase, as in cdk.json)."""

    model_config = ConfigDict(frozen=True, extra="ignore", populate_by_name=True)

    profile: Profile = "small"
    min_acu: float | None = Field(default=None, alias="minAcu", ge=0, le=256)
    max_acu: float | None = Field(default=None, alias="maxAcu", ge=1, le=256)
    # Identity provider of the API's JWTs; without an issuer the stack creates a Cognito user pool.
    jwt_issuer: str | None = Field(default=None, alias="jwtIssuer")
    jwt_audience: str | None = Field(default=None, alias="jwtAudience")
    cors_origins: tuple[str, ...] = Field(default=(), alias="corsOrigins")  # CORS stays off unless named
    every_minutes: int | None = Field(default=None, alias="consolidationEveryMinutes", ge=5, le=1440)
    # Models: Bedrock inference profiles (Anthropic) and the Titan embeddings model.
    bedrock_model: str = Field(default="us.anthropic.claude-sonnet-4-5-20250929-v1:0", alias="bedrockModel")
    bedrock_fast_model: str = Field(default="us.anthropic.claude-haiku-4-5-20251001-v1:0", alias="bedrockFastModel")
    titan_model: str = Field(default="amazon.titan-embed-text-v2:0", alias="titanModel")
    embedding_dim: int = Field(default=1024, alias="embeddingDim")
    # The Anthropic API instead of Bedrock: the name or ARN of an existing secret holding the key.
    # The API is on the internet, so this adds NAT gateways (and their hourly floor) to the VPC.
    anthropic_api_key_secret: str | None = Field(default=None, alias="anthropicApiKeySecret")
    # An OpenAI-compatible API instead (used when no Anthropic key is named): its key's secret (name or ARN), base
    # URL (None: OpenAI's) and model. Also on the internet: NAT gateways as for Anthropic.
    openai_api_key_secret: str | None = Field(default=None, alias="openaiApiKeySecret")
    openai_base_url: str | None = Field(default=None, alias="openaiBaseUrl")
    openai_model: str | None = Field(default=None, alias="openaiModel")
    # Per-function overrides of RESERVED_CONCURRENCY, or false to reserve none (new accounts often
    # have a concurrency quota too small to reserve from: Lambda keeps 100 unreserved).
    reserved_concurrency: dict[str, int] | Literal[False] | None = Field(default=None, alias="reservedConcurrency")
    alarm_email: str | None = Field(default=None, alias="alarmEmail")
    log_level: Literal["DEBUG", "INFO", "WARN", "ERROR"] = Field(default="INFO", alias="logLevel")

    @field_validator("cors_origins", "reserved_concurrency", mode="before")
    @classmethod
    def _json_from_the_command_line(cls, value: Any) -> Any:
        """`-c corsOrigins='["https://a.example"]'` arrives as a string: read it as JSON."""
        if isinstance(value, str):
            try:
                return json.loads(value)
            except json.JSONDecodeError:
                return [value] if value else []
        return value

    @field_validator("reserved_concurrency")
    @classmethod
    def _known_functions(cls, value: dict[str, int] | Literal[False] | None) -> dict[str, int] | Literal[False] | None:
        if isinstance(value, dict):
            unknown = set(value) - set(FUNCTION_NAMES)
            if unknown:
                raise ValueError(f"reservedConcurrency names no such function: {sorted(unknown)}")
        return value

    @classmethod
    def from_context(cls, context: dict[str, Any]) -> Deployment:
        try:
            return cls.model_validate({k: v for k, v in context.items() if v is not None})
        except ValidationError as exc:
            raise ValueError(f"invalid CDK context: {exc}") from exc

    @property
    def prod(self) -> bool:
        return self.profile == "prod"

    @property
    def capacity(self) -> tuple[float, float]:
        low, high = CAPACITY[self.profile]
        return (low if self.min_acu is None else self.min_acu, high if self.max_acu is None else self.max_acu)

    @property
    def consolidation_every_minutes(self) -> int:
        return CONSOLIDATION_MINUTES[self.profile] if self.every_minutes is None else self.every_minutes

    @property
    def llm(self) -> Literal["bedrock", "anthropic", "openai"]:
        return "anthropic" if self.anthropic_api_key_secret else "openai" if self.openai_api_key_secret else "bedrock"

    @property
    def internet_egress(self) -> bool:
        """Whether the functions must reach the internet (the Anthropic or an OpenAI-compatible API: Bedrock does not)."""
        return self.llm != "bedrock"

    def concurrency(self, function: str) -> int | None:
        if self.reserved_concurrency is False:
            return None
        return {**RESERVED_CONCURRENCY[self.profile], **(self.reserved_concurrency or {})}.get(function)

    @property
    def llm_profiles(self) -> tuple[str, str]:
        return (self.bedrock_model, self.bedrock_fast_model)

    @property
    def profiled_models(self) -> tuple[str, ...]:
        """The foundation models behind the cross-region inference profiles ("us.<model>" -> "<model>")."""
        return tuple(p.split(".", 1)[1] if p.split(".", 1)[0] in _GEOGRAPHIES else p for p in self.llm_profiles)


_GEOGRAPHIES = {"us", "eu", "apac", "us-gov", "global", "jp", "au", "ca"}


def settings_environment(**values: object) -> dict[str, str]:
    """Lambda environment variables for engram's typed settings, by field name: each name must be a
    field of `engram.config.Settings` and each literal value must validate against its type, so a
    typo or a bad value fails the synth instead of a cold start. Tokens (ARNs, endpoints) pass as is."""
    fields = Settings.model_fields
    out = {}
    for name, value in values.items():
        if name not in fields:
            raise KeyError(f"engram.config.Settings has no field {name!r}")
        field = fields[name]
        text = str(value).lower() if isinstance(value, bool) else str(value)
        if "${Token[" not in text and field.annotation is not None:
            TypeAdapter(field.annotation).validate_python(text)  # lax mode reads "1024" and "true" as the env does
        alias = field.validation_alias if isinstance(field.validation_alias, str) else None
        out[alias or f"ENGRAM_{name.upper()}"] = text
    return out
