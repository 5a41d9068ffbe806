"""Operations: consolidation on a schedule, alarms on failures and errors, one dashboard."""

from __future__ import annotations

import json

import pytest
from aws_cdk.assertions import Template as CdkTemplate

from tests.infra.synth import Template, definition, engram_functions, only, resources, state_machines

pytestmark = pytest.mark.infra


def test_the_schedule_starts_consolidation_of_every_world_at_the_configured_rate(template: Template) -> None:
    _, rule = only(template, "AWS::Events::Rule")
    consolidation, _ = state_machines(template)["engram-consolidation"]
    assert rule["State"] == "ENABLED"
    assert rule["ScheduleExpression"] in ("rate(1 hour)", "rate(60 minutes)")  # cdk.json: every 60 minutes
    [target] = rule["Targets"]
    assert target["Arn"] == {"Ref": consolidation} and "RoleArn" in target


def test_the_scheduled_input_names_the_world_so_the_plan_step_can_read_it(template: Template) -> None:
    [target] = only(template, "AWS::Events::Rule")[1]["Targets"]
    # Plan reads "$.world_id": without the key the execution fails at once; null means every world.
    assert json.loads(target["Input"]) == {"world_id": None}
    assert definition(template, "engram-consolidation")["States"]["Plan"]["Parameters"]["world_id.$"] == "$.world_id"


def test_an_alarm_fires_on_any_failed_execution_of_each_state_machine(template: Template) -> None:
    alarmed = {alarm["Dimensions"][0]["Value"]["Ref"] for alarm in resources(template, "AWS::CloudWatch::Alarm").values()
               if alarm["Namespace"] == "AWS/States" and alarm["MetricName"] == "ExecutionsFailed"
               and alarm["Threshold"] == 1}
    assert alarmed == {logical for logical, _ in state_machines(template).values()}


def test_an_alarm_watches_the_errors_of_each_function(template: Template) -> None:
    alarmed = {alarm["Dimensions"][0]["Value"]["Ref"] for alarm in resources(template, "AWS::CloudWatch::Alarm").values()
               if alarm["Namespace"] == "AWS/Lambda" and alarm["MetricName"] == "Errors"}
    assert alarmed == {logical for logical, _ in engram_functions(template).values()}


def test_one_dashboard_shows_the_state_machines_and_the_functions(assertions: CdkTemplate) -> None:
    assertions.resource_count_is("AWS::CloudWatch::Dashboard", 1)
    assertions.has_resource_properties("AWS::CloudWatch::Dashboard", {"DashboardName": "engram"})
