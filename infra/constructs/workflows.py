"""Workflows: engram-enrichment (Standard), engram-query (Express: the answer loop, or research), engram-consolidation
(Standard).

Payloads carry ids and small status only (Step Functions caps them at 256 KB); every task payload
carries the execution id as the correlation id for logs and traces.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_stepfunctions as sfn
from aws_cdk import aws_stepfunctions_tasks as tasks
from constructs import Construct

# Domain errors (engram.errors; their class names are the contract): the transient ones are retried with
# backoff, the rest are caught at once and the work is marked failed for a later retry.
MODEL_UNAVAILABLE = "LLMUnavailable"
TRANSIENT_ERRORS = ["TransientStoreError", MODEL_UNAVAILABLE]
FAILURE_ERRORS = ["ExtractionRejected", "CapabilityRejected", "ConfigurationError", *TRANSIENT_ERRORS]
# Lambda's own: throttling (reserved concurrency is reached in a burst) and service hiccups.
LAMBDA_ERRORS = ["Lambda.TooManyRequestsException", "Lambda.ServiceException", "Lambda.AWSLambdaException",
                 "Lambda.SdkClientException"]
RETRY_INTERVAL = Duration.seconds(2)
RETRY_ATTEMPTS = 3
RETRY_BACKOFF = 2.0
THROTTLE_ATTEMPTS = 6
THROTTLE_MAX_DELAY = Duration.seconds(30)
# Throttling (attempts, longest wait) by function, from how its callers wait. The enrichment steps are
# asynchronous (Standard, 30 minutes): a burst of batches waits out the throttling much longer (up to about 16
# minutes, 8 expected with full jitter) before a batch is marked failed for the sweep. A question waits on its
# steps (Express, 5 minutes): they retry sooner and more often, so a burst of questions queues for the function
# (about 100 s at most).
ENRICHMENT_THROTTLE_ATTEMPTS = 20
ENRICHMENT_THROTTLE_MAX_DELAY = Duration.seconds(60)
QUERY_THROTTLE_ATTEMPTS = 14
THROTTLING: dict[str, tuple[int, Duration]] = {
    "resolve": (ENRICHMENT_THROTTLE_ATTEMPTS, ENRICHMENT_THROTTLE_MAX_DELAY),
    "extract": (ENRICHMENT_THROTTLE_ATTEMPTS, ENRICHMENT_THROTTLE_MAX_DELAY),
    "query_step": (QUERY_THROTTLE_ATTEMPTS, Duration.seconds(8)),
}
TASK_TIMEOUT_MARGIN = 5  # seconds past the function's own timeout, so the function's timeout error comes first
MAP_CONCURRENCY = 4
ENRICHMENT_TIMEOUT = Duration.minutes(30)
QUERY_TIMEOUT = Duration.minutes(5)
CORRELATION = {"correlation_id": sfn.JsonPath.execution_id}
BATCH = {"world_id": sfn.JsonPath.string_at("$.world_id"), "enrichment_id": sfn.JsonPath.string_at("$.enrichment_id"),
         "event_ids": sfn.JsonPath.list_at("$.event_ids"), **CORRELATION}
LOOP = {"world_id": sfn.JsonPath.string_at("$.world_id"), "query_id": sfn.JsonPath.string_at("$.query_id"),
        "iteration": sfn.JsonPath.number_at("$.iteration"),
        "remaining_info_requests": sfn.JsonPath.number_at("$.remaining_info_requests"), **CORRELATION}
RESEARCH = {"world_id": sfn.JsonPath.string_at("$.world_id"), "query_id": sfn.JsonPath.string_at("$.query_id"),
            "iteration": sfn.JsonPath.number_at("$.iteration"), **CORRELATION}
SCOPE_FIELDS = ("world_id", "scope_kind", "scope_id", "user_id", "as_of")  # engram.consolidation.run.Scope


class Workflows(Construct):
    def __init__(self, scope: Construct, id: str, *, functions: Mapping[str, lambda_.IFunction],
                 timeouts: Mapping[str, Duration]) -> None:
        super().__init__(scope, id)
        self.functions = functions
        self.timeouts = timeouts
        self.enrichment = self._enrichment()
        self.query = self._query()
        self.consolidation = self._consolidation()

    def _task(self, id: str, function: str, payload: dict[str, Any], *, result_path: str | None = None
              ) -> tasks.LambdaInvoke:
        timeout = Duration.seconds(self.timeouts[function].to_seconds() + TASK_TIMEOUT_MARGIN)
        task = tasks.LambdaInvoke(self, id, lambda_function=self.functions[function], payload_response_only=True,
                                  retry_on_service_exceptions=False, payload=sfn.TaskInput.from_object(payload),
                                  result_path=result_path, task_timeout=sfn.Timeout.duration(timeout))
        task.add_retry(errors=TRANSIENT_ERRORS, interval=RETRY_INTERVAL, max_attempts=RETRY_ATTEMPTS,
                       backoff_rate=RETRY_BACKOFF, jitter_strategy=sfn.JitterType.FULL)
        throttle_attempts, throttle_max_delay = THROTTLING.get(function, (THROTTLE_ATTEMPTS, THROTTLE_MAX_DELAY))
        task.add_retry(errors=LAMBDA_ERRORS, interval=RETRY_INTERVAL, max_attempts=throttle_attempts,
                       backoff_rate=RETRY_BACKOFF, max_delay=throttle_max_delay, jitter_strategy=sfn.JitterType.FULL)
        return task

    @staticmethod
    def _catch(step: tasks.LambdaInvoke, handler: sfn.IChainable) -> None:
        """Domain failures by name first (the console shows which), then anything else (a timeout, a bug)."""
        step.add_catch(handler, errors=FAILURE_ERRORS, result_path="$.error")
        step.add_catch(handler, errors=["States.ALL"], result_path="$.error")

    def _logs(self, name: str, *, execution_data: bool) -> sfn.LogOptions:
        """Every event to CloudWatch Logs. Express executions keep no history of their own, so theirs
        include the (small, id-only) payloads; Standard ones have it in their execution history."""
        group = logs.LogGroup(self, f"{name}Logs", retention=logs.RetentionDays.ONE_MONTH,
                              removal_policy=RemovalPolicy.DESTROY)
        return sfn.LogOptions(destination=group, level=sfn.LogLevel.ALL, include_execution_data=execution_data)

    def _enrichment(self) -> sfn.StateMachine:
        mark_failed = self._task("MarkFailed", "extract", {"action": "mark_failed", **BATCH,
                                                           "error": sfn.JsonPath.object_at("$.error")})
        mark_failed.next(sfn.Fail(self, "EnrichmentFailed", error="EnrichmentFailed",
                                           cause="the events are kept, marked failed, for a retry"))
        steps = [self._task("Resolve", "resolve", BATCH), self._task("Extract", "extract", {"action": "extract", **BATCH}),
                 self._task("Index", "extract", {"action": "index", **BATCH})]
        for step in steps:
            self._catch(step, mark_failed)
        chain = sfn.Chain.start(steps[0]).next(steps[1]).next(steps[2]).next(sfn.Succeed(self, "Enriched"))
        return sfn.StateMachine(self, "Enrichment", state_machine_name="engram-enrichment",
                                state_machine_type=sfn.StateMachineType.STANDARD,
                                definition_body=sfn.DefinitionBody.from_chainable(chain), timeout=ENRICHMENT_TIMEOUT,
                                tracing_enabled=True, logs=self._logs("Enrichment", execution_data=False))

    def _query(self) -> sfn.StateMachine:
        ids = {"world_id": sfn.JsonPath.string_at("$.world_id"), "query_id": sfn.JsonPath.string_at("$.query_id")}
        fail = self._task("MarkQueryFailed", "query_step", {"action": "fail", **ids,
                                                            "error": sfn.JsonPath.object_at("$.error"), **CORRELATION})
        fail.next(sfn.Fail(self, "QueryFailed", error="QueryFailed", cause="the query is marked failed"))
        init = self._task("Init", "query_step", {"action": "init", **ids, **CORRELATION})
        ask = self._task("Ask", "query_step", {"action": "ask", **LOOP})
        fulfil = self._task("Fulfil", "query_step", {"action": "fulfil", **LOOP})
        force = self._task("Force", "query_step", {"action": "force", **LOOP})
        finish = self._task("Finish", "query_step", {"action": "finish", **LOOP})
        # The model still unavailable after the retries: answer from retrieval alone, saying so.
        fallback = self._task("AnswerFromRetrieval", "query_step", {"action": "fallback", **LOOP,
                                                                    "error": sfn.JsonPath.object_at("$.error")})
        for step in (ask, force):
            step.add_catch(fallback, errors=[MODEL_UNAVAILABLE], result_path="$.error")
        for step in (init, ask, fulfil, force, fallback, finish):
            self._catch(step, fail)
        finish.next(sfn.Succeed(self, "Answered"))
        force.next(finish)
        fallback.next(finish)
        fulfil.next(ask)
        choice = (sfn.Choice(self, "AnswerOrMoreInfo")
                  .when(sfn.Condition.string_equals("$.outcome", "answer"), finish)
                  .when(sfn.Condition.and_(sfn.Condition.string_equals("$.outcome", "needs_more_info"),
                                           sfn.Condition.number_greater_than("$.remaining_info_requests", 0)), fulfil)
                  .otherwise(force))
        mode = (sfn.Choice(self, "AnswerOrResearch")
                .when(sfn.Condition.string_equals("$.mode", "research"), self._research(fail))
                .otherwise(ask))
        ask.next(choice)
        chain = sfn.Chain.start(init).next(mode)
        return sfn.StateMachine(self, "Query", state_machine_name="engram-query",
                                state_machine_type=sfn.StateMachineType.EXPRESS,
                                definition_body=sfn.DefinitionBody.from_chainable(chain), timeout=QUERY_TIMEOUT,
                                tracing_enabled=True, logs=self._logs("Query", execution_data=True))

    def _research(self, fail: sfn.IChainable) -> sfn.IChainable:
        """Research mode: plan, gather, evaluate; the completeness check sends it back to gather while the
        research is incomplete and rounds remain (`max_research_iterations`), then synthesize."""
        plan = self._task("PlanResearch", "query_step", {"action": "plan", **RESEARCH})
        gather = self._task("Gather", "query_step", {"action": "gather", **RESEARCH})
        evaluate = self._task("Evaluate", "query_step", {"action": "evaluate", **RESEARCH})
        synthesize = self._task("Synthesize", "query_step", {"action": "synthesize", **RESEARCH})
        finish = self._task("FinishResearch", "query_step", {"action": "finish", **RESEARCH})
        fallback = self._task("ResearchFromRetrieval", "query_step", {"action": "fallback", **RESEARCH,
                                                                      "error": sfn.JsonPath.object_at("$.error")})
        for step in (plan, evaluate, synthesize):
            step.add_catch(fallback, errors=[MODEL_UNAVAILABLE], result_path="$.error")
        for step in (plan, gather, evaluate, synthesize, fallback, finish):
            self._catch(step, fail)
        fallback.next(finish)
        synthesize.next(finish)
        finish.next(sfn.Succeed(self, "Researched"))
        complete = (sfn.Choice(self, "CompleteOrGatherMore")
                    .when(sfn.Condition.and_(sfn.Condition.string_equals("$.outcome", "incomplete"),
                                             sfn.Condition.number_greater_than("$.remaining_iterations", 0)), gather)
                    .otherwise(synthesize))
        return sfn.Chain.start(plan).next(gather).next(evaluate).next(complete)

    def _consolidation(self) -> sfn.StateMachine:
        plan = self._task("Plan", "consolidate", {"action": "plan", "world_id": sfn.JsonPath.string_at("$.world_id"),
                                                  **CORRELATION})
        # Summaries first (they confirm facts), then each world's upkeep (conflicts, forgetting) reads the result.
        scopes = self._scope_map("ConsolidateScopes", "ConsolidateScope", "ScopeFailed", "$.scopes", "$.results")
        upkeep = self._scope_map("KeepUpWorlds", "KeepUpWorld", "UpkeepFailed", "$.worlds", "$.upkeep")
        finish = self._task("FinishRun", "consolidate", {"action": "finish", "run_id": sfn.JsonPath.string_at("$.run_id"),
                                                         "results": sfn.JsonPath.list_at("$.results"),
                                                         "upkeep": sfn.JsonPath.list_at("$.upkeep"), **CORRELATION})
        chain = sfn.Chain.start(plan).next(scopes).next(upkeep).next(finish).next(sfn.Succeed(self, "Consolidated"))
        return sfn.StateMachine(self, "Consolidation", state_machine_name="engram-consolidation",
                                state_machine_type=sfn.StateMachineType.STANDARD,
                                definition_body=sfn.DefinitionBody.from_chainable(chain),
                                timeout=Duration.hours(1), tracing_enabled=True, logs=self._logs("Consolidation", execution_data=False))

    def _scope_map(self, id: str, step: str, failed: str, items_path: str, result_path: str) -> sfn.DistributedMap:
        """A distributed Map over consolidation scopes (each a child execution, so a large world spreads over
        many Lambdas; moto runs the same ASL, the items from ItemsPath), with a catch per item: a scope that fails
        is reported failed and the others go on; it stays stale, so the next run plans it again."""
        task = self._task(step, "consolidate", {
            "action": "scope", **{k: sfn.JsonPath.string_at(f"$.{k}") for k in SCOPE_FIELDS}, **CORRELATION})
        self._catch(task, sfn.Pass(self, failed, parameters={
            **{k: sfn.JsonPath.string_at(f"$.{k}") for k in ("world_id", "scope_kind", "scope_id")},
            "failed": True, "error": sfn.JsonPath.string_at("$.error.Error")}))
        each = sfn.DistributedMap(self, id, items_path=items_path, max_concurrency=MAP_CONCURRENCY,
                                  map_execution_type=sfn.StateMachineType.STANDARD, result_path=result_path)
        each.item_processor(task)
        return each
