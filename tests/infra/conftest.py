"""Each profile synthesized once per session (3 to 6 s each), shared by every infra test, plus one
deployment that sets every optional context value."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from aws_cdk.assertions import Template as CdkTemplate

from tests.infra.synth import PROFILES, Template, synthesize, validation_report

# Every optional context value set, as `cdk deploy -c key=value` would pass them (strings).
OVERRIDES: dict[str, Any] = {
    "profile": "small", "minAcu": "0.5", "maxAcu": "8", "jwtIssuer": "https://issuer.example.com/",
    "jwtAudience": "engram-agents", "corsOrigins": '["https://app.example.com"]', "consolidationEveryMinutes": "15",
    "bedrockModel": "eu.anthropic.claude-sonnet-4-5-20250929-v1:0", "titanModel": "amazon.titan-embed-text-v2:0",
    "anthropicApiKeySecret": "engram/anthropic-api-key", "openaiApiKeySecret": "engram/openai-api-key",
    "openaiBaseUrl": "https://openrouter.ai/api/v1", "openaiModel": "qwen/qwen-2.5-7b-instruct",
    "reservedConcurrency": '{"api": 7}',
    "alarmEmail": "oncall@example.com", "logLevel": "DEBUG",
}


@dataclass(frozen=True)
class Synthesized:
    template: Template
    report: dict[str, Any]


class Synths:
    """Synthesizes a deployment the first time a test asks for it."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._done: dict[str, Synthesized] = {}

    def get(self, name: str, **context: Any) -> Synthesized:
        if name not in self._done:
            outdir = self.root / name
            self._done[name] = Synthesized(synthesize(outdir, **context), validation_report(outdir))
        return self._done[name]


@pytest.fixture(scope="session")
def synths(tmp_path_factory: pytest.TempPathFactory) -> Synths:
    return Synths(tmp_path_factory.mktemp("cdk.out"))


@pytest.fixture(scope="session", params=PROFILES)
def profile(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(scope="session")
def template(synths: Synths, profile: str) -> Template:
    """The template of each profile as `cdk synth -c profile=...` writes it; cdk-nag has passed to get here."""
    return synths.get(profile, profile=profile).template


@pytest.fixture(scope="session")
def assertions(template: Template) -> CdkTemplate:
    """The same template, wrapped for aws_cdk.assertions."""
    return CdkTemplate.from_json(template)


@pytest.fixture(scope="session")
def small(synths: Synths) -> Template:
    return synths.get("small", profile="small").template


@pytest.fixture(scope="session")
def prod(synths: Synths) -> Template:
    return synths.get("prod", profile="prod").template


@pytest.fixture(scope="session")
def overridden(synths: Synths) -> Template:
    """The small profile with every optional context value set (OVERRIDES)."""
    return synths.get("overridden", **OVERRIDES).template


@pytest.fixture(scope="session")
def openai(synths: Synths) -> Template:
    """The small profile with an OpenAI-compatible API (and no Anthropic key) as the model."""
    return synths.get("openai", profile="small", openaiApiKeySecret="engram/openai-api-key",
                      openaiBaseUrl="http://vllm.internal.example:8000/v1").template
