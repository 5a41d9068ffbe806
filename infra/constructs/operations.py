"""Schedule (consolidation on EventBridge Scheduler) and monitoring (alarms to one SNS topic, one dashboard)."""

from __future__ import annotations

import json
from collections.abc import Mapping

from aws_cdk import Duration
from aws_cdk import aws_apigatewayv2 as apigw
from aws_cdk import aws_cloudwatch as cw
from aws_cdk import aws_cloudwatch_actions as actions
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_opensearchservice as opensearch
from aws_cdk import aws_rds as rds
from aws_cdk import aws_scheduler as scheduler
from aws_cdk import aws_scheduler_targets as scheduler_targets
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sns_subscriptions as subscriptions
from aws_cdk import aws_stepfunctions as sfn
from constructs import Construct

# A null world is every world; the key must be present, or Plan's "$.world_id" path fails the execution.
EVERY_WORLD = {"world_id": None}
SCHEDULE_RETRIES = 2
SCHEDULE_MAX_AGE = Duration.minutes(30)  # a start still failing after this waits for the next run

PERIOD = Duration.minutes(5)
FUNCTION_ERRORS = 5  # per period: one error is a retry's business, five is a trend
FUNCTION_THROTTLES = 5  # per period: reserved concurrency reached (the workflows retry throttles)
API_5XX = 1  # a 5xx is a bug
API_P95_LATENCY_MS = 15_000  # a synchronous query asks the model a few times; API Gateway gives up at 30 s
DATABASE_CPU_PERCENT = 80
CONNECTIONS_SHARE = 0.8  # of the cluster's max_connections at its maximum capacity
BYTES_PER_CONNECTION = 9_531_392  # Aurora PostgreSQL: max_connections = memory / 9,531,392, at most 5,000
SEARCH_FREE_STORAGE_MB = 10_240


def max_connections(max_acu: float) -> int:
    """Aurora PostgreSQL's default max_connections at a capacity (2 GiB of memory per ACU)."""
    return int(min(max_acu * 2 * 1024**3 / BYTES_PER_CONNECTION, 5_000))


class Schedule(Construct):
    def __init__(self, scope: Construct, id: str, *, consolidation: sfn.IStateMachine, every_minutes: int) -> None:
        super().__init__(scope, id)
        # ScheduleTargetInput.from_object drops None values (jsii sends them as undefined): write the JSON as is.
        target = scheduler_targets.StepFunctionsStartExecution(
            consolidation, input=scheduler.ScheduleTargetInput.from_text(json.dumps(EVERY_WORLD)),
            retry_attempts=SCHEDULE_RETRIES, max_event_age=SCHEDULE_MAX_AGE)
        self.schedule = scheduler.Schedule(
            self, "Consolidate", schedule=scheduler.ScheduleExpression.rate(Duration.minutes(every_minutes)),
            target=target, description="engram-consolidation of every world")


class Monitoring(Construct):
    """Alarms on everything a user would notice, each to the one topic; one dashboard to look at."""

    def __init__(self, scope: Construct, id: str, *, alarm_email: str | None) -> None:
        super().__init__(scope, id)
        key = kms.Key(self, "AlarmsKey", enable_key_rotation=True, description="engram alarm notifications")
        # CloudWatch publishes to an encrypted topic only with a customer-managed key it may use.
        key.add_to_resource_policy(iam.PolicyStatement(
            principals=[iam.ServicePrincipal("cloudwatch.amazonaws.com")],
            actions=["kms:Decrypt", "kms:GenerateDataKey*"], resources=["*"]))
        self.topic = sns.Topic(self, "Alarms", display_name="engram alarms", master_key=key, enforce_ssl=True)
        if alarm_email:
            self.topic.add_subscription(subscriptions.EmailSubscription(alarm_email))
        self.dashboard = cw.Dashboard(self, "Dashboard", dashboard_name="engram",
                                      default_interval=Duration.hours(3))
        self.alarms: list[cw.Alarm] = []

    def _alarm(self, id: str, metric: cw.IMetric, threshold: float, description: str, *, periods: int = 1,
               comparison: cw.ComparisonOperator = cw.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD) -> cw.Alarm:
        alarm = cw.Alarm(self, id, metric=metric, threshold=threshold, evaluation_periods=periods,
                         comparison_operator=comparison, alarm_description=description,
                         treat_missing_data=cw.TreatMissingData.NOT_BREACHING)  # idle (or paused) is healthy
        alarm.add_alarm_action(actions.SnsAction(self.topic))
        self.alarms.append(alarm)
        return alarm

    def watch_api(self, api: apigw.HttpApi) -> None:
        errors = api.metric_server_error(period=PERIOD, statistic="Sum")
        p95 = api.metric_latency(period=PERIOD, statistic="p95")
        self._alarm("Api5xx", errors, API_5XX, "engram API answered 5xx")
        self._alarm("ApiLatencyP95", p95, API_P95_LATENCY_MS, "engram API p95 latency", periods=3)
        self.dashboard.add_widgets(
            cw.GraphWidget(title="API requests and errors", left=[api.metric_count(period=PERIOD),
                                                                  api.metric_client_error(period=PERIOD), errors]),
            cw.GraphWidget(title="API latency", left=[api.metric_latency(period=PERIOD, statistic="p50"), p95]))

    def watch_functions(self, functions: Mapping[str, lambda_.Function]) -> None:
        widgets: list[cw.IWidget] = []
        for name, function in functions.items():
            errors = function.metric_errors(period=PERIOD)
            throttles = function.metric_throttles(period=PERIOD)
            self._alarm(f"{_pascal(name)}Errors", errors, FUNCTION_ERRORS, f"engram {name} function errors")
            self._alarm(f"{_pascal(name)}Throttles", throttles, FUNCTION_THROTTLES, f"engram {name} throttled")
            widgets.append(cw.GraphWidget(title=name, left=[function.metric_invocations(period=PERIOD), errors, throttles],
                                          right=[function.metric_duration(period=PERIOD, statistic="p95")]))
        self.dashboard.add_widgets(*widgets)

    def watch_state_machines(self, machines: Mapping[str, sfn.StateMachine]) -> None:
        widgets: list[cw.IWidget] = []
        for name, machine in machines.items():
            failed = machine.metric_failed(period=PERIOD)
            timed_out = machine.metric_timed_out(period=PERIOD)
            self._alarm(f"{_pascal(name)}Failed", failed, 1, f"engram-{name} executions failed")
            self._alarm(f"{_pascal(name)}TimedOut", timed_out, 1, f"engram-{name} executions timed out")
            widgets.append(cw.GraphWidget(title=f"engram-{name}", left=[
                machine.metric_started(period=PERIOD), machine.metric_succeeded(period=PERIOD), failed, timed_out],
                right=[machine.metric_time(period=PERIOD, statistic="p95")]))
        self.dashboard.add_widgets(*widgets)

    def watch_database(self, cluster: rds.DatabaseCluster, max_acu: float) -> None:
        cpu = cluster.metric_cpu_utilization(period=PERIOD)
        connections = cluster.metric_database_connections(period=PERIOD, statistic="Maximum")
        self._alarm("DatabaseCpu", cpu, DATABASE_CPU_PERCENT, "engram database CPU", periods=3)
        self._alarm("DatabaseConnections", connections, int(max_connections(max_acu) * CONNECTIONS_SHARE),
                    "engram database connections near max_connections", periods=2)
        self.dashboard.add_widgets(
            cw.GraphWidget(title="database", left=[cpu, connections],
                           right=[cluster.metric_serverless_database_capacity(period=PERIOD, statistic="Maximum"),
                                  cluster.metric_acu_utilization(period=PERIOD, statistic="Maximum")]))

    def watch_search(self, domain: opensearch.Domain) -> None:
        red = domain.metric_cluster_status_red(period=Duration.minutes(1))
        blocked = domain.metric_cluster_index_writes_blocked(period=Duration.minutes(1))
        storage = domain.metric_free_storage_space(period=PERIOD)
        self._alarm("SearchRed", red, 1, "engram OpenSearch cluster status red")
        self._alarm("SearchWritesBlocked", blocked, 1, "engram OpenSearch blocks index writes")
        self._alarm("SearchFreeStorage", storage, SEARCH_FREE_STORAGE_MB, "engram OpenSearch storage running out",
                    comparison=cw.ComparisonOperator.LESS_THAN_OR_EQUAL_TO_THRESHOLD)
        self.dashboard.add_widgets(cw.GraphWidget(title="search", left=[domain.metric_search_latency(period=PERIOD),
                                                                        domain.metric_indexing_latency(period=PERIOD)],
                                                  right=[domain.metric_cpu_utilization(period=PERIOD), storage]))


def _pascal(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_"))
