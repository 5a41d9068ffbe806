"""Schedule (consolidation on a timer) and monitoring (alarms and a dashboard)."""

from __future__ import annotations

import json

from aws_cdk import Duration
from aws_cdk import aws_cloudwatch as cw
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_stepfunctions as sfn
from constructs import Construct

# A null world is every world; the key must be present, or Plan's "$.world_id" path fails the execution.
EVERY_WORLD = {"world_id": None}


class Schedule(Construct):
    def __init__(self, scope: Construct, id: str, *, consolidation: sfn.IStateMachine, every_minutes: int) -> None:
        super().__init__(scope, id)
        rule = events.Rule(self, "Consolidate", schedule=events.Schedule.rate(Duration.minutes(every_minutes)),
                           targets=[targets.SfnStateMachine(consolidation)])
        # RuleTargetInput.from_object drops None values (jsii sends them as undefined), so write the input as is.
        cfn_rule = rule.node.default_child
        assert isinstance(cfn_rule, events.CfnRule)
        cfn_rule.add_property_override("Targets.0.Input", json.dumps(EVERY_WORLD))


class Monitoring(Construct):
    def __init__(self, scope: Construct, id: str, *, state_machines: dict[str, sfn.StateMachine],
                 functions: dict[str, lambda_.Function]) -> None:
        super().__init__(scope, id)
        dashboard = cw.Dashboard(self, "Dashboard", dashboard_name="engram")
        for name, machine in state_machines.items():
            failed = machine.metric_failed(period=Duration.minutes(5))
            cw.Alarm(self, f"{name}Failed", metric=failed, threshold=1, evaluation_periods=1,
                     alarm_description=f"engram-{name} executions failed",
                     treat_missing_data=cw.TreatMissingData.NOT_BREACHING)
            dashboard.add_widgets(cw.GraphWidget(title=f"engram-{name}", left=[
                machine.metric_started(), machine.metric_succeeded(), failed]))
        for name, function in functions.items():
            errors = function.metric_errors(period=Duration.minutes(5))
            cw.Alarm(self, f"{name}Errors", metric=errors, threshold=5, evaluation_periods=1,
                     alarm_description=f"engram {name} function errors",
                     treat_missing_data=cw.TreatMissingData.NOT_BREACHING)
            dashboard.add_widgets(cw.GraphWidget(title=f"{name}", left=[function.metric_invocations(), errors],
                                                 right=[function.metric_duration()]))
