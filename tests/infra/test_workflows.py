"""The three state machines: type, tracing, logging, and the states of their synthesized ASL."""

from __future__ import annotations

from typing import Any

import pytest
from aws_cdk.assertions import Match
from aws_cdk.assertions import Template as CdkTemplate

from tests.infra.synth import (
    MACHINES,
    Template,
    all_states,
    as_list,
    definition,
    engram_functions,
    role_of,
    state_machines,
    statements,
)

pytestmark = pytest.mark.infra

RETRIED = {"TransientStoreError", "LLMUnavailable"}


def _invokes(template: Template, state: dict[str, Any]) -> str:
    """The folder of the engram function a Task state invokes."""
    folder_of = {f"${{{logical}.Arn}}": folder for folder, (logical, _) in engram_functions(template).items()}
    return folder_of[state["Resource"]]


def _retries_domain_errors_with_backoff(state: dict[str, Any]) -> bool:
    return any(set(r["ErrorEquals"]) >= RETRIED and r["MaxAttempts"] >= 2 and r["BackoffRate"] > 1
               for r in state.get("Retry", []))


@pytest.mark.parametrize(("name", "kind"), [("engram-enrichment", "STANDARD"), ("engram-query", "EXPRESS"),
                                            ("engram-consolidation", "STANDARD")])
def test_each_state_machine_has_its_name_and_type_with_tracing_and_every_event_logged(
        assertions: CdkTemplate, name: str, kind: str) -> None:
    # Express keeps no execution history: its log is the only record, so it carries the (id-only) payloads.
    assertions.has_resource_properties("AWS::StepFunctions::StateMachine", {
        "StateMachineName": name, "StateMachineType": kind, "TracingConfiguration": {"Enabled": True},
        "LoggingConfiguration": {"Level": "ALL", "IncludeExecutionData": kind == "EXPRESS", "Destinations": [
            {"CloudWatchLogsLogGroup": {"LogGroupArn": Match.object_like({"Fn::GetAtt": Match.any_value()})}}]},
    })


@pytest.mark.parametrize("name", MACHINES)
def test_every_task_has_a_timeout_just_past_its_functions_own(template: Template, name: str) -> None:
    timeouts = {folder: props["Timeout"] for folder, (_, props) in engram_functions(template).items()}
    tasks = [state for _, state in all_states(definition(template, name)) if state["Type"] == "Task"]
    assert tasks
    for state in tasks:
        assert timeouts[_invokes(template, state)] < state["TimeoutSeconds"] <= timeouts[_invokes(template, state)] + 10


@pytest.mark.parametrize("name", MACHINES)
def test_every_task_retries_the_transient_domain_errors_and_lambda_throttling_with_backoff_and_jitter(
        template: Template, name: str) -> None:
    for step, state in all_states(definition(template, name)):
        if state["Type"] != "Task":
            continue
        assert _retries_domain_errors_with_backoff(state), step
        throttling = [r for r in state["Retry"] if "Lambda.TooManyRequestsException" in r["ErrorEquals"]]
        assert throttling and throttling[0]["MaxAttempts"] >= 3 and throttling[0]["JitterStrategy"] == "FULL", step


@pytest.mark.parametrize(("name", "steps", "handler"), [
    ("engram-enrichment", ("Resolve", "Extract", "Index"), "MarkFailed"),
    ("engram-query", ("Init", "Ask", "Fulfil", "Force", "AnswerFromRetrieval", "Finish"), "MarkQueryFailed"),
    ("engram-query", ("PlanResearch", "Gather", "Evaluate", "Synthesize", "ResearchFromRetrieval", "FinishResearch"),
     "MarkQueryFailed"),
])
def test_failures_are_caught_by_domain_error_name_first_then_anything_else(
        template: Template, name: str, steps: tuple[str, ...], handler: str) -> None:
    states = definition(template, name)["States"]
    for step in steps:
        named, anything = states[step]["Catch"][-2:]
        assert {"ExtractionRejected", "TransientStoreError", "LLMUnavailable", "ConfigurationError"} <= set(
            named["ErrorEquals"]) and named["Next"] == handler
        assert anything == {"ErrorEquals": ["States.ALL"], "ResultPath": "$.error", "Next": handler}


def test_there_are_exactly_the_three_state_machines_and_each_has_a_timeout(template: Template) -> None:
    assert sorted(state_machines(template)) == sorted(MACHINES)
    for name in MACHINES:
        assert definition(template, name)["TimeoutSeconds"] > 0


def test_enrichment_resolves_extracts_and_indexes_retrying_transient_errors_and_marking_failures(
        template: Template) -> None:
    asl = definition(template, "engram-enrichment")
    states = asl["States"]
    assert asl["StartAt"] == "Resolve"
    assert [states["Resolve"]["Next"], states["Extract"]["Next"]] == ["Extract", "Index"]
    assert states[states["Index"]["Next"]]["Type"] == "Succeed"
    assert {step: _invokes(template, states[step]) for step in ("Resolve", "Extract", "Index", "MarkFailed")} == {
        "Resolve": "resolve", "Extract": "extract", "Index": "extract", "MarkFailed": "extract"}
    for step in ("Resolve", "Extract", "Index"):
        assert _retries_domain_errors_with_backoff(states[step]), step
        assert {"ErrorEquals": ["States.ALL"], "ResultPath": "$.error", "Next": "MarkFailed"} in states[step]["Catch"]
    assert states["MarkFailed"]["Parameters"]["action"] == "mark_failed"
    assert states[states["MarkFailed"]["Next"]]["Type"] == "Fail"


def test_query_loops_ask_and_fulfil_until_an_answer_or_the_budget_runs_out_then_forces_one(
        template: Template) -> None:
    asl = definition(template, "engram-query")
    states = asl["States"]
    assert asl["StartAt"] == "Init"
    assert {"Init", "Ask", "AnswerOrMoreInfo", "Fulfil", "Force", "Finish"} <= set(states)
    assert states["Init"]["Next"] == "AnswerOrResearch" and states["AnswerOrResearch"]["Default"] == "Ask"
    assert states["Ask"]["Next"] == "AnswerOrMoreInfo"
    choice = states["AnswerOrMoreInfo"]
    assert choice["Type"] == "Choice" and choice["Default"] == "Force"
    answer, more = choice["Choices"]
    assert answer == {"Variable": "$.outcome", "StringEquals": "answer", "Next": "Finish"}
    assert more["Next"] == "Fulfil"
    assert {"Variable": "$.remaining_info_requests", "NumericGreaterThan": 0} in more["And"]
    assert states["Fulfil"]["Next"] == "Ask" and states["Force"]["Next"] == "Finish"
    assert states[states["Finish"]["Next"]]["Type"] == "Succeed"
    for step in ("Init", "Ask", "Fulfil", "Force", "Finish"):
        assert _invokes(template, states[step]) == "query_step"
        assert states[step]["Parameters"]["action"] == step.lower()
        assert _retries_domain_errors_with_backoff(states[step]), step


def test_a_model_still_unavailable_after_the_retries_is_answered_from_retrieval_then_finished(
        template: Template) -> None:
    states = definition(template, "engram-query")["States"]
    for step in ("Ask", "Force"):
        first = states[step]["Catch"][0]
        assert first == {"ErrorEquals": ["LLMUnavailable"], "ResultPath": "$.error", "Next": "AnswerFromRetrieval"}
        retry = next(r for r in states[step]["Retry"] if "LLMUnavailable" in r["ErrorEquals"])
        assert retry["MaxAttempts"] >= 2 and retry["BackoffRate"] > 1  # retried with backoff before the fallback
    fallback = states["AnswerFromRetrieval"]
    assert _invokes(template, fallback) == "query_step" and fallback["Parameters"]["action"] == "fallback"
    assert fallback["Parameters"]["error.$"] == "$.error" and fallback["Next"] == "Finish"
    assert len(states["Init"]["Catch"]) == 2 and len(states["Fulfil"]["Catch"]) == 2  # no model call, no fallback


def test_an_invalid_info_request_is_routed_to_force_not_fulfil(template: Template) -> None:
    choice = definition(template, "engram-query")["States"]["AnswerOrMoreInfo"]
    # ask reports "invalid_request": neither branch matches it, so the default (Force) ends the loop
    assert all("invalid_request" not in str(c) for c in choice["Choices"]) and choice["Default"] == "Force"


def test_consolidation_plans_maps_over_the_scopes_then_the_worlds_upkeep_and_finishes_the_run(
        template: Template) -> None:
    asl = definition(template, "engram-consolidation")
    states = asl["States"]
    assert asl["StartAt"] == "Plan" and states["Plan"]["Parameters"]["action"] == "plan"
    scopes = states[states["Plan"]["Next"]]
    upkeep = states[scopes["Next"]]
    assert (scopes["ItemsPath"], scopes["ResultPath"], upkeep["ItemsPath"], upkeep["ResultPath"]) == (
        "$.scopes", "$.results", "$.worlds", "$.upkeep")
    for each in (scopes, upkeep):
        # distributed: each scope a child execution, so a large world spreads over many Lambdas
        assert each["Type"] == "Map" and each["MaxConcurrency"] >= 1
        processor = each["ItemProcessor"]
        assert processor["ProcessorConfig"] == {"Mode": "DISTRIBUTED", "ExecutionType": "STANDARD"}
        task = processor["States"][processor["StartAt"]]
        assert _invokes(template, task) == "consolidate" and task["Parameters"]["action"] == "scope"
        assert {"world_id.$", "scope_kind.$", "scope_id.$", "user_id.$", "as_of.$"} <= set(task["Parameters"])
        assert _retries_domain_errors_with_backoff(task)
        # a catch per item: a failed scope becomes a failed result and the Map goes on
        named, anything = task["Catch"]
        assert named["Next"] == anything["Next"] and anything["ErrorEquals"] == ["States.ALL"]
        failed = processor["States"][anything["Next"]]
        assert failed["Type"] == "Pass" and failed["Parameters"]["failed"] is True and failed.get("End") is True
    assert upkeep["Next"] == "FinishRun" and states["FinishRun"]["Parameters"]["action"] == "finish"
    assert states["FinishRun"]["Parameters"]["upkeep.$"] == "$.upkeep"
    assert {_invokes(template, states[s]) for s in ("Plan", "FinishRun")} == {"consolidate"}


@pytest.mark.parametrize("name", MACHINES)
def test_every_task_payload_carries_the_execution_id_as_correlation_id(template: Template, name: str) -> None:
    tasks = {step: state for step, state in all_states(definition(template, name)) if state["Type"] == "Task"}
    assert tasks
    for step, state in tasks.items():
        assert state["Parameters"]["correlation_id.$"] == "$$.Execution.Id", step



def test_a_research_query_plans_gathers_and_evaluates_then_gathers_again_while_incomplete_and_rounds_remain(
        template: Template) -> None:
    states = definition(template, "engram-query")["States"]
    mode = states["AnswerOrResearch"]
    assert mode["Type"] == "Choice"
    assert mode["Choices"] == [{"Variable": "$.mode", "StringEquals": "research", "Next": "PlanResearch"}]
    assert [states[s]["Next"] for s in ("PlanResearch", "Gather", "Evaluate")] == [
        "Gather", "Evaluate", "CompleteOrGatherMore"]
    check = states["CompleteOrGatherMore"]
    assert check["Type"] == "Choice" and check["Default"] == "Synthesize"
    [more] = check["Choices"]
    assert more["Next"] == "Gather" and more["And"] == [
        {"Variable": "$.outcome", "StringEquals": "incomplete"},
        {"Variable": "$.remaining_iterations", "NumericGreaterThan": 0}]
    assert states["Synthesize"]["Next"] == "FinishResearch"
    assert states[states["FinishResearch"]["Next"]]["Type"] == "Succeed"
    actions = {"PlanResearch": "plan", "Gather": "gather", "Evaluate": "evaluate", "Synthesize": "synthesize",
               "FinishResearch": "finish", "ResearchFromRetrieval": "fallback"}
    for step, action in actions.items():
        assert _invokes(template, states[step]) == "query_step"
        parameters = states[step]["Parameters"]
        assert parameters["action"] == action
        # ids and a round number only: the plan and the gathered context stay in the database (256 KB cap)
        assert set(parameters) - {"action", "error.$"} == {"world_id.$", "query_id.$", "iteration.$",
                                                         "correlation_id.$"}
        assert _retries_domain_errors_with_backoff(states[step]), step


def test_a_research_step_whose_model_stays_unavailable_is_answered_from_retrieval(template: Template) -> None:
    states = definition(template, "engram-query")["States"]
    for step in ("PlanResearch", "Evaluate", "Synthesize"):
        assert states[step]["Catch"][0] == {"ErrorEquals": ["LLMUnavailable"], "ResultPath": "$.error",
                                            "Next": "ResearchFromRetrieval"}
    assert len(states["Gather"]["Catch"]) == 2  # no model call, no fallback
    assert states["ResearchFromRetrieval"]["Next"] == "FinishResearch"


def test_the_api_may_start_research_runs_of_engram_query_and_read_them_back(template: Template) -> None:
    """A research query is started (StartExecution, async) and read by id, never waited for synchronously."""
    [(query_machine, _)] = [v for k, v in state_machines(template).items() if k == "engram-query"]
    _, api = engram_functions(template)["api"]
    granted = {a for s in statements(template, role_of(api)) for a in as_list(s["Action"])
               if {"Ref": query_machine} in as_list(s["Resource"])}
    assert {"states:StartExecution", "states:StartSyncExecution"} <= granted
