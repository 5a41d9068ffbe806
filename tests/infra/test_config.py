"""The deployment read from the CDK context: profile defaults, values from `-c key=value` (strings) and
from cdk.json (JSON), and clear refusals."""

from __future__ import annotations

import pytest

from infra.config import CAPACITY, Deployment
from tests.infra.synth import CDK_CONTEXT

pytestmark = pytest.mark.infra


def test_cdk_json_deploys_the_small_profile_by_default() -> None:
    assert CDK_CONTEXT == {"profile": "small"}
    assert Deployment.from_context(CDK_CONTEXT).capacity == CAPACITY["small"] == (0, 4)


def test_command_line_strings_are_read_as_the_values_they_stand_for() -> None:
    deployment = Deployment.from_context({"profile": "prod", "minAcu": "1", "maxAcu": "32", "corsOrigins": "https://a.example",
                                          "reservedConcurrency": '{"extract": 40}', "consolidationEveryMinutes": "30"})
    assert deployment.capacity == (1, 32) and deployment.cors_origins == ("https://a.example",)
    assert deployment.concurrency("extract") == 40 and deployment.concurrency("api") == 100
    assert deployment.consolidation_every_minutes == 30


@pytest.mark.parametrize("context", [{"profile": "large"}, {"maxAcu": "0"}, {"reservedConcurrency": '{"worker": 3}'},
                                     {"consolidationEveryMinutes": "1"}])
def test_a_bad_context_value_fails_the_synth_by_name(context: dict[str, str]) -> None:
    with pytest.raises(ValueError, match="invalid CDK context"):
        Deployment.from_context(context)


def test_the_anthropic_api_needs_egress_and_bedrock_does_not() -> None:
    assert Deployment.from_context({"anthropicApiKeySecret": "engram/anthropic"}).internet_egress
    assert not Deployment().internet_egress


def test_an_openai_compatible_api_is_the_model_unless_an_anthropic_key_is_named_and_needs_egress() -> None:
    chosen = Deployment.from_context({"openaiApiKeySecret": "engram/openai"})
    assert (chosen.llm, chosen.internet_egress) == ("openai", True)
    both = Deployment.from_context({"openaiApiKeySecret": "engram/openai", "anthropicApiKeySecret": "engram/anthropic"})
    assert both.llm == "anthropic"

