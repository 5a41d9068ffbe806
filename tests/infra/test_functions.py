"""The six Lambda functions: runtime, placement, the shared layer, settings, reserved concurrency and
least-privilege roles."""

from __future__ import annotations

import subprocess
import tomllib
from pathlib import Path
from typing import Any

import pytest
from aws_cdk.assertions import Match
from aws_cdk.assertions import Template as CdkTemplate
from packaging.requirements import Requirement

from infra.config import RESERVED_CONCURRENCY, Deployment, settings_environment
from infra.constructs.functions import LAYER_REQUIREMENTS, PipLayerBundling, pinned_requirements
from tests.infra.synth import (
    FOLDERS,
    REPO,
    Template,
    as_list,
    engram_functions,
    environment,
    only,
    resources,
    role_of,
    state_machines,
    statements,
)

pytestmark = pytest.mark.infra
DEFAULTS = Deployment()


def _arn_tail(resource: Any) -> str:
    """The literal end of an ARN built with Fn::Join (`.../model-id`), or a plain ARN string."""
    if isinstance(resource, str):
        return resource
    return str(resource["Fn::Join"][1][-1])


def test_there_are_exactly_six_engram_functions_one_per_folder_with_the_handler_the_local_runtime_imports(
        template: Template) -> None:
    functions = engram_functions(template)
    assert sorted(functions) == sorted(FOLDERS)
    for folder, (_, props) in functions.items():
        assert props["Handler"] == "handler.handler"
        assert (REPO / "functions" / folder / "handler.py").exists()


def test_every_function_runs_python_3_12_on_arm64_with_active_xray_tracing(assertions: CdkTemplate) -> None:
    for folder in FOLDERS:
        assertions.has_resource_properties("AWS::Lambda::Function", {
            "Runtime": "python3.12", "Architectures": ["arm64"], "TracingConfig": {"Mode": "Active"},
            "Environment": {"Variables": Match.object_like({"POWERTOOLS_SERVICE_NAME": f"engram-{folder}"})},
        })


def test_every_function_runs_in_the_vpcs_isolated_subnets_behind_one_security_group(template: Template) -> None:
    isolated = {logical for logical, props in resources(template, "AWS::EC2::Subnet").items()
                if props["MapPublicIpOnLaunch"] is False}
    groups = set()
    for _, props in engram_functions(template).values():
        subnets = {ref["Ref"] for ref in props["VpcConfig"]["SubnetIds"]}
        assert subnets and subnets <= isolated
        groups.add(str(props["VpcConfig"]["SecurityGroupIds"]))
    assert len(groups) == 1


def test_all_functions_share_the_one_layer_built_for_python_3_12_on_arm64(template: Template) -> None:
    layer, props = only(template, "AWS::Lambda::LayerVersion")
    assert props["CompatibleRuntimes"] == ["python3.12"] and props["CompatibleArchitectures"] == ["arm64"]
    for _, function in engram_functions(template).values():
        assert function["Layers"] == [{"Ref": layer}]


def test_each_function_has_a_role_of_its_own(template: Template) -> None:
    roles = [role_of(props) for _, props in engram_functions(template).values()]
    assert len(set(roles)) == len(FOLDERS)


def test_a_function_role_grants_nothing_on_every_resource_but_xray_trace_writes(template: Template) -> None:
    for folder, (_, props) in engram_functions(template).items():
        unbounded = {a for s in statements(template, role_of(props)) if "*" in as_list(s["Resource"]) for a in s["Action"]}
        assert unbounded <= {"xray:PutTraceSegments", "xray:PutTelemetryRecords"}, folder


def test_no_role_in_the_stack_may_start_executions_of_every_state_machine(template: Template) -> None:
    for policy in resources(template, "AWS::IAM::Policy").values():
        for statement in policy["PolicyDocument"]["Statement"]:
            starts = {a for a in as_list(statement["Action"]) if a in ("states:*", "states:StartExecution",
                                                                         "states:StartSyncExecution")}
            if starts:
                assert "*" not in as_list(statement["Resource"]), statement


def test_enrichment_is_started_by_ingest_and_the_sweeps_and_only_api_starts_queries_and_consolidation(
        template: Template) -> None:
    machine_of = {logical: name for name, (logical, _) in state_machines(template).items()}
    started: dict[str, set[str]] = {}
    for folder, (_, props) in engram_functions(template).items():
        started[folder] = {
            machine_of[resource["Ref"]]
            for statement in statements(template, role_of(props))
            if {"states:StartExecution", "states:StartSyncExecution"} & set(statement["Action"])
            for resource in as_list(statement["Resource"])}
    assert started == {"ingest": {"engram-enrichment"},
                       "api": {"engram-enrichment", "engram-query", "engram-consolidation"},
                       "resolve": set(), "extract": set(), "query_step": set(), "consolidate": {"engram-enrichment"}}


def test_only_the_functions_that_start_executions_are_told_the_state_machine_arns(template: Template) -> None:
    told = {folder: sorted(k for k in props["Environment"]["Variables"] if k.endswith("_STATE_MACHINE_ARN"))
            for folder, (_, props) in engram_functions(template).items()}
    assert told == {"ingest": ["ENGRAM_ENRICHMENT_STATE_MACHINE_ARN"],
                    "api": ["ENGRAM_CONSOLIDATION_STATE_MACHINE_ARN", "ENGRAM_ENRICHMENT_STATE_MACHINE_ARN",
                            "ENGRAM_QUERY_STATE_MACHINE_ARN"],
                    "resolve": [], "extract": [], "query_step": [], "consolidate": ["ENGRAM_ENRICHMENT_STATE_MACHINE_ARN"]}


def _invocable_models(template: Template) -> dict[str, set[str]]:
    """Folder -> the model ids (ARN tails) its role may invoke, checking each Bedrock statement's shape."""
    invocable: dict[str, set[str]] = {}
    for folder, (_, props) in engram_functions(template).items():
        invocable[folder] = set()
        for statement in statements(template, role_of(props)):
            if any(action.startswith("bedrock:") for action in statement["Action"]):
                assert statement["Action"] == ["bedrock:InvokeModel"]
                resources_ = as_list(statement["Resource"])
                assert "*" not in resources_
                if any(":bedrock:*:" in _arn_tail(r) for r in resources_):  # any region: only through a profile
                    assert "bedrock:InferenceProfileArn" in statement["Condition"]["StringEquals"]
                invocable[folder] |= {_arn_tail(r).rsplit("/", 1)[1] for r in resources_}
    return invocable


def test_functions_may_invoke_only_the_bedrock_models_they_call_and_are_configured_with(template: Template) -> None:
    models = {"ENGRAM_BEDROCK_MODEL": DEFAULTS.bedrock_model, "ENGRAM_BEDROCK_FAST_MODEL": DEFAULTS.bedrock_fast_model,
              "ENGRAM_TITAN_MODEL_ID": DEFAULTS.titan_model, "ENGRAM_LLM": "bedrock", "ENGRAM_EMBEDDER": "titan"}
    for folder in engram_functions(template):
        assert {k: environment(template, folder)[k] for k in models} == models
    llm = {DEFAULTS.titan_model, *DEFAULTS.llm_profiles, *DEFAULTS.profiled_models}
    assert _invocable_models(template) == {"ingest": set(), "resolve": set(), "api": {DEFAULTS.titan_model},
                                           "extract": llm, "query_step": llm, "consolidate": llm}


def test_the_model_ids_come_from_the_context_and_the_anthropic_key_from_secrets_manager(overridden: Template) -> None:
    titan = DEFAULTS.titan_model
    # With the Anthropic API chosen, Bedrock serves only embeddings; the model callers may read the key's secret.
    assert _invocable_models(overridden) == {"ingest": set(), "resolve": set(), "api": {titan}, "extract": {titan},
                                             "query_step": {titan}, "consolidate": {titan}}
    for folder, (_, props) in engram_functions(overridden).items():
        env = environment(overridden, folder)
        assert env["ENGRAM_LLM"] == "anthropic" and "ANTHROPIC_API_KEY" not in env  # the key is never in the env
        assert env["ENGRAM_BEDROCK_MODEL"] == "eu.anthropic.claude-sonnet-4-5-20250929-v1:0"
        assert "engram/anthropic-api-key" in str(env["ENGRAM_ANTHROPIC_API_KEY_SECRET_ARN"])
        # Each builds its model client at cold start, so each reads the key: that secret and no other.
        read = [s["Resource"] for s in statements(overridden, role_of(props)) if "secretsmanager:GetSecretValue" in s["Action"]]
        assert any("engram/anthropic-api-key" in str(r) for r in read), folder
        # The OpenAI-compatible key named too: its secret is passed and readable, for the stages given its models.
        assert "engram/openai-api-key" in str(env["ENGRAM_OPENAI_API_KEY_SECRET_ARN"]) and "ENGRAM_OPENAI_API_KEY" not in env
        assert any("engram/openai-api-key" in str(r) for r in read), folder
        assert (env["ENGRAM_OPENAI_BASE_URL"], env["ENGRAM_OPENAI_MODEL"]) == ("https://openrouter.ai/api/v1",
                                                                               "qwen/qwen-2.5-7b-instruct")


def test_an_openai_compatible_api_is_the_model_with_its_key_from_secrets_manager(openai: Template) -> None:
    titan = DEFAULTS.titan_model
    assert _invocable_models(openai) == {"ingest": set(), "resolve": set(), "api": {titan}, "extract": {titan},
                                         "query_step": {titan}, "consolidate": {titan}}  # Bedrock: embeddings only
    for folder, (_, props) in engram_functions(openai).items():
        env = environment(openai, folder)
        assert env["ENGRAM_LLM"] == "openai" and "ENGRAM_OPENAI_API_KEY" not in env  # the key is never in the env
        assert env["ENGRAM_OPENAI_BASE_URL"] == "http://vllm.internal.example:8000/v1"
        assert "ENGRAM_OPENAI_MODEL" not in env and "ENGRAM_ANTHROPIC_API_KEY_SECRET_ARN" not in env
        assert "engram/openai-api-key" in str(env["ENGRAM_OPENAI_API_KEY_SECRET_ARN"])
        read = [s["Resource"] for s in statements(openai, role_of(props)) if "secretsmanager:GetSecretValue" in s["Action"]]
        assert any("engram/openai-api-key" in str(r) for r in read), folder


def test_each_function_is_configured_through_engrams_typed_settings_with_powertools_and_json_logs(
        template: Template) -> None:
    for folder, (_, props) in engram_functions(template).items():
        env = environment(template, folder)
        assert env["POWERTOOLS_SERVICE_NAME"] == f"engram-{folder}"
        assert env["POWERTOOLS_METRICS_NAMESPACE"] == "engram" and env["POWERTOOLS_LOG_LEVEL"] == "INFO"
        assert env["POWERTOOLS_TRACER_CAPTURE_RESPONSE"] == "false"  # answers and memories stay out of traces
        logging = props["LoggingConfig"]
        assert (logging["LogFormat"], logging["ApplicationLogLevel"], logging["SystemLogLevel"]) == ("JSON", "INFO", "WARN")
        assert template["Resources"][logging["LogGroup"]["Ref"]]["Properties"]["RetentionInDays"] == 30
        engram = {k: v for k, v in env.items() if k.startswith("ENGRAM_") and not k.endswith("_STATE_MACHINE_ARN")}
        literal = {k: v for k, v in engram.items() if isinstance(v, str)}
        assert settings_environment(**{k.removeprefix("ENGRAM_").lower(): v for k, v in literal.items()}) == literal


def test_a_setting_that_engram_does_not_have_or_cannot_read_fails_the_synth() -> None:
    with pytest.raises(KeyError):
        settings_environment(keyword_brain="postgres")
    with pytest.raises(ValueError):
        settings_environment(keyword_index="elasticsearch")


def test_reserved_concurrency_bounds_each_function_by_profile_and_context(template: Template, profile: str,
                                                                          overridden: Template) -> None:
    for folder, (_, props) in engram_functions(template).items():
        assert props["ReservedConcurrentExecutions"] == RESERVED_CONCURRENCY[profile][folder]  # type: ignore[index]
    # The consolidation Map runs 4 scopes at once, next to its plan and finish steps.
    assert RESERVED_CONCURRENCY[profile]["consolidate"] >= 5  # type: ignore[index]
    configured = {folder: props["ReservedConcurrentExecutions"] for folder, (_, props) in engram_functions(overridden).items()}
    assert configured == {**RESERVED_CONCURRENCY["small"], "api": 7}
    assert Deployment.from_context({"reservedConcurrency": "false"}).concurrency("api") is None


def test_the_layers_pins_are_exact_and_inside_pyprojects_ranges() -> None:
    declared = {Requirement(r).name: Requirement(r) for r in
                tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]}
    for line in pinned_requirements():
        pin = Requirement(line)
        [spec] = list(pin.specifier)
        assert spec.operator == "==", line
        assert pin.name in declared and declared[pin.name].specifier.contains(spec.version), line


def test_the_log_level_comes_from_the_context(overridden: Template) -> None:
    for folder, (_, props) in engram_functions(overridden).items():
        assert environment(overridden, folder)["POWERTOOLS_LOG_LEVEL"] == "DEBUG"
        assert props["LoggingConfig"]["ApplicationLogLevel"] == "DEBUG"


def test_the_layer_is_built_without_docker_by_pip_for_arm64_python_3_12_from_the_pins(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[list[str]] = []
    monkeypatch.setattr(subprocess, "run", lambda command, check: calls.append(command))
    assert PipLayerBundling().try_bundle(str(tmp_path), image=None)  # type: ignore[arg-type]
    [pip] = calls
    assert pip[1:4] == ["-m", "pip", "install"] and "--only-binary=:all:" in pip
    assert pip[pip.index("--platform") + 1] == "manylinux2014_aarch64"
    assert pip[pip.index("--python-version") + 1] == "3.12"
    assert pip[pip.index("-r") + 1] == str(LAYER_REQUIREMENTS)
    packaged = tmp_path / "python" / "engram"
    assert (packaged / "migrations" / "0001_schema.sql").exists() and (packaged / "app" / "compose.py").exists()
    assert not (packaged / "local").exists()  # the embedded stack never ships to Lambda
