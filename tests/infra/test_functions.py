"""The six Lambda functions: runtime, placement, the shared layer, and least-privilege roles."""

from __future__ import annotations

from typing import Any

import pytest
from aws_cdk.assertions import Match
from aws_cdk.assertions import Template as CdkTemplate

from infra.constructs.functions import BEDROCK_MODELS, LLM_PROFILES, PROFILED_MODELS
from tests.infra.synth import (
    FOLDERS,
    REPO,
    Template,
    as_list,
    engram_functions,
    only,
    resources,
    role_of,
    state_machines,
    statements,
)

pytestmark = pytest.mark.infra


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
        assert len(subnets) >= 2 and subnets <= isolated
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


def test_functions_may_invoke_only_the_bedrock_models_they_call_and_are_configured_with(template: Template) -> None:
    titan = BEDROCK_MODELS["ENGRAM_TITAN_MODEL_ID"]
    invocable: dict[str, set[str]] = {}
    for folder, (_, props) in engram_functions(template).items():
        assert {k: props["Environment"]["Variables"][k] for k in BEDROCK_MODELS} == BEDROCK_MODELS
        invocable[folder] = set()
        for statement in statements(template, role_of(props)):
            if any(action.startswith("bedrock:") for action in statement["Action"]):
                assert statement["Action"] == ["bedrock:InvokeModel"]
                resources_ = as_list(statement["Resource"])
                assert "*" not in resources_
                if any(":bedrock:*:" in _arn_tail(r) for r in resources_):  # any region: only through a profile
                    assert "bedrock:InferenceProfileArn" in statement["Condition"]["StringEquals"]
                invocable[folder] |= {_arn_tail(r).rsplit("/", 1)[1] for r in resources_}
    llm = {titan, *LLM_PROFILES, *PROFILED_MODELS}
    assert invocable == {"ingest": set(), "resolve": set(), "api": {titan},
                         "extract": llm, "query_step": llm, "consolidate": llm}
