"""Executions read back as an operator reads them in the console: status, output, states entered."""

from __future__ import annotations

import json
import time
from typing import Any

from engram.local.cdk_template import REGION
from engram.local.runtime import LocalWorkflowRuntime

_FINISHED_WITHIN_S = 30.0


class Executions:
    def __init__(self, runtime: LocalWorkflowRuntime) -> None:
        import boto3

        self.arns = runtime.arns
        self.client = boto3.client("stepfunctions", region_name=REGION)

    def named(self, machine: str, name: str) -> str:
        """The execution ARN of `machine`'s execution called `name` (a query id, an enrichment id)."""
        listed = self.client.list_executions(stateMachineArn=self.arns[machine])["executions"]
        [arn] = [e["executionArn"] for e in listed if e["name"] == name]
        return str(arn)

    def wait(self, arn: str) -> dict[str, Any]:
        """describe_execution once the execution has left RUNNING."""
        deadline = time.monotonic() + _FINISHED_WITHIN_S
        while (described := self.client.describe_execution(executionArn=arn))["status"] == "RUNNING":
            if time.monotonic() > deadline:
                raise AssertionError(f"{arn} still RUNNING after {_FINISHED_WITHIN_S:.0f} s")
            time.sleep(0.02)
        return dict(described)

    def output(self, arn: str) -> dict[str, Any]:
        return dict(json.loads(self.wait(arn).get("output") or "{}"))

    def history(self, arn: str) -> list[dict[str, Any]]:
        self.wait(arn)
        events: list[dict[str, Any]] = []
        kwargs: dict[str, Any] = {"executionArn": arn, "maxResults": 1000}
        while True:
            page = self.client.get_execution_history(**kwargs)
            events += page["events"]
            if not page.get("nextToken"):
                return events
            kwargs["nextToken"] = page["nextToken"]

    def states_entered(self, arn: str) -> list[str]:
        """The names of the states the execution entered, in order."""
        return [e["stateEnteredEventDetails"]["name"] for e in self.history(arn) if "stateEnteredEventDetails" in e]
