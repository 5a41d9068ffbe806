"""Operations: consolidation on EventBridge Scheduler, alarms (functions, state machines, API, database,
search) to one encrypted SNS topic, one dashboard."""

from __future__ import annotations

import json
from typing import Any

import pytest
from aws_cdk.assertions import Template as CdkTemplate

from infra.config import CONSOLIDATION_MINUTES
from tests.infra.synth import Template, definition, engram_functions, only, resources, state_machines

pytestmark = pytest.mark.infra


def _alarms(template: Template, namespace: str, metric: str) -> list[dict[str, Any]]:
    return [a for a in resources(template, "AWS::CloudWatch::Alarm").values()
            if a.get("Namespace") == namespace and a.get("MetricName") == metric]


def _dimension(alarm: dict[str, Any]) -> Any:
    [dimension] = alarm["Dimensions"]
    return dimension["Value"].get("Ref", dimension["Value"])


def test_the_scheduler_starts_consolidation_of_every_world_at_the_profiles_rate(template: Template, profile: str,
                                                                                overridden: Template) -> None:
    _, schedule = only(template, "AWS::Scheduler::Schedule")
    consolidation, _ = state_machines(template)["engram-consolidation"]
    assert schedule["State"] == "ENABLED" and schedule["FlexibleTimeWindow"] == {"Mode": "OFF"}
    minutes = CONSOLIDATION_MINUTES[profile]  # type: ignore[index]
    assert schedule["ScheduleExpression"] in (f"rate({minutes} minutes)", f"rate({minutes // 60} hour"
                                              f"{'s' if minutes > 60 else ''})")
    assert schedule["Target"]["Arn"] == {"Ref": consolidation} and "RoleArn" in schedule["Target"]
    assert schedule["Target"]["RetryPolicy"]["MaximumRetryAttempts"] >= 1
    assert only(overridden, "AWS::Scheduler::Schedule")[1]["ScheduleExpression"] == "rate(15 minutes)"


def test_the_scheduled_input_names_the_world_so_the_plan_step_can_read_it(template: Template) -> None:
    _, schedule = only(template, "AWS::Scheduler::Schedule")
    # Plan reads "$.world_id": without the key the execution fails at once; null means every world.
    assert json.loads(schedule["Target"]["Input"]) == {"world_id": None}
    assert definition(template, "engram-consolidation")["States"]["Plan"]["Parameters"]["world_id.$"] == "$.world_id"


def test_the_scheduler_role_may_start_only_the_consolidation_state_machine(template: Template) -> None:
    _, schedule = only(template, "AWS::Scheduler::Schedule")
    role = schedule["Target"]["RoleArn"]["Fn::GetAtt"][0]
    consolidation, _ = state_machines(template)["engram-consolidation"]
    granted = [s for p in resources(template, "AWS::IAM::Policy").values() if {"Ref": role} in p["Roles"]
               for s in p["PolicyDocument"]["Statement"]]
    assert granted == [{"Action": "states:StartExecution", "Effect": "Allow", "Resource": {"Ref": consolidation}}]


def test_an_alarm_fires_on_any_failed_or_timed_out_execution_of_each_state_machine(template: Template) -> None:
    machines = {logical for logical, _ in state_machines(template).values()}
    for metric in ("ExecutionsFailed", "ExecutionsTimedOut"):
        alarms = _alarms(template, "AWS/States", metric)
        assert {_dimension(a) for a in alarms} == machines and all(a["Threshold"] == 1 for a in alarms)


def test_alarms_watch_the_errors_and_the_throttles_of_each_function(template: Template) -> None:
    functions = {logical for logical, _ in engram_functions(template).values()}
    for metric in ("Errors", "Throttles"):
        assert {_dimension(a) for a in _alarms(template, "AWS/Lambda", metric)} == functions, metric


def test_alarms_watch_the_apis_5xx_and_its_p95_latency(template: Template) -> None:
    api, _ = only(template, "AWS::ApiGatewayV2::Api")
    [errors] = _alarms(template, "AWS/ApiGateway", "5xx")
    [latency] = _alarms(template, "AWS/ApiGateway", "Latency")
    assert _dimension(errors) == api and errors["Threshold"] == 1
    assert _dimension(latency) == api and latency["ExtendedStatistic"] == "p95"


def test_alarms_watch_the_databases_cpu_and_connections(template: Template) -> None:
    cluster, _ = only(template, "AWS::RDS::DBCluster")
    for metric in ("CPUUtilization", "DatabaseConnections"):
        [alarm] = _alarms(template, "AWS/RDS", metric)
        assert _dimension(alarm) == cluster


def test_prod_alarms_watch_the_search_cluster(prod: Template, small: Template) -> None:
    watched = {a["MetricName"] for a in resources(prod, "AWS::CloudWatch::Alarm").values() if a.get("Namespace") == "AWS/ES"}
    assert {"ClusterStatus.red", "ClusterIndexWritesBlocked", "FreeStorageSpace"} <= watched
    assert not [a for a in resources(small, "AWS::CloudWatch::Alarm").values() if a.get("Namespace") == "AWS/ES"]


def test_every_alarm_notifies_one_encrypted_topic_and_missing_data_is_no_alarm(template: Template) -> None:
    topic, props = only(template, "AWS::SNS::Topic")
    key, _ = only(template, "AWS::KMS::Key")
    assert props["KmsMasterKeyId"] == {"Fn::GetAtt": [key, "Arn"]}
    for alarm in resources(template, "AWS::CloudWatch::Alarm").values():
        assert alarm["AlarmActions"] == [{"Ref": topic}]
        assert alarm["TreatMissingData"] == "notBreaching"  # idle, or paused at 0 ACU, is healthy


def test_the_alarm_email_from_the_context_subscribes_to_the_topic(overridden: Template, small: Template) -> None:
    [subscription] = resources(overridden, "AWS::SNS::Subscription").values()
    assert subscription["Protocol"] == "email" and subscription["Endpoint"] == "oncall@example.com"
    assert not resources(small, "AWS::SNS::Subscription")


def test_one_dashboard_shows_the_api_the_functions_the_state_machines_and_the_database(
        assertions: CdkTemplate, template: Template) -> None:
    assertions.resource_count_is("AWS::CloudWatch::Dashboard", 1)
    _, dashboard = only(template, "AWS::CloudWatch::Dashboard")
    assert dashboard["DashboardName"] == "engram"
    body = json.dumps(dashboard["DashboardBody"])
    for shown in ("AWS/ApiGateway", "AWS/Lambda", "AWS/States", "AWS/RDS"):
        assert shown in body, shown
