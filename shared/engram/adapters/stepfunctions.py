"""The Workflows port over AWS Step Functions (boto3). Locally the same client talks to moto."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Sequence
from typing import Any

from engram.config import Settings
from engram.errors import ConfigurationError, EngramError, NotFound, TransientStoreError
from engram.model.steps import ConsolidationRun, RunTotals

_POLL_SECONDS = 0.05
_POLL_LIMIT_SECONDS = 300.0


class WorkflowFailed(EngramError):
    """A state machine execution ended FAILED, TIMED_OUT or ABORTED (throttled past its retries under a burst,
    a step timed out): the work is marked failed and kept, and asking again may succeed, so 503 (retryable)."""

    code = "workflow_failed"
    status = 503


class StepFunctionsWorkflows:
    def __init__(self, client: Any, *, enrichment_arn: str, query_arn: str, consolidation_arn: str,
                 query_sync: bool) -> None:
        self.client = client
        self.enrichment_arn = enrichment_arn
        self.query_arn = query_arn
        self.consolidation_arn = consolidation_arn
        self.query_sync = query_sync

    @classmethod
    def from_settings(cls, settings: Settings) -> StepFunctionsWorkflows:
        import boto3

        return cls(boto3.client("stepfunctions"), enrichment_arn=settings.enrichment_state_machine_arn or "",
                   query_arn=settings.query_state_machine_arn or "",
                   consolidation_arn=settings.consolidation_state_machine_arn or "", query_sync=settings.query_sync)

    def start_enrichment(self, world_id: str, event_ids: Sequence[str], enrichment_id: str) -> str:
        """Named after the enrichment id, so a replayed start cannot run the batch twice."""
        payload = {"world_id": world_id, "enrichment_id": enrichment_id, "event_ids": list(event_ids)}
        return self._start(self.enrichment_arn, enrichment_id, payload)

    def start_query(self, world_id: str, query_id: str) -> str:
        return self._start(self.query_arn, query_id, {"world_id": world_id, "query_id": query_id})

    def start_consolidation(self, world_id: str | None) -> str:
        return self._start(self.consolidation_arn, None, {"world_id": world_id})

    def consolidation(self, world_id: str, execution_id: str) -> ConsolidationRun:
        """Only an execution of the consolidation state machine started for this world: another's is unknown."""
        from botocore.exceptions import ClientError

        prefix = self.consolidation_arn.replace(":stateMachine:", ":execution:") + ":"
        unknown = NotFound(f"no consolidation {execution_id!r} in world {world_id!r}")
        if not self.consolidation_arn or not execution_id.startswith(prefix):
            raise unknown
        try:
            result = self._call("describe_execution", executionArn=execution_id)
        except ClientError as exc:
            raise unknown from exc
        if json.loads(result.get("input") or "{}").get("world_id") != world_id:
            raise unknown
        status = result.get("status")
        if status == "RUNNING":
            return ConsolidationRun(world_id=world_id, execution_id=execution_id, status="running")
        if status == "SUCCEEDED":
            return ConsolidationRun(world_id=world_id, execution_id=execution_id, status="succeeded",
                                    totals=RunTotals.model_validate(self._finished(result)))
        return ConsolidationRun(world_id=world_id, execution_id=execution_id, status="failed",
                                error=f"{status}: {result.get('error', '')} {str(result.get('cause', ''))[:300]}")

    def run_query(self, world_id: str, query_id: str) -> dict[str, Any]:
        payload = json.dumps({"world_id": world_id, "query_id": query_id})
        if self.query_sync:  # Express: one synchronous call
            if not self.query_arn:
                raise ConfigurationError("ENGRAM_QUERY_STATE_MACHINE_ARN is not set")
            result = self._call("start_sync_execution", stateMachineArn=self.query_arn, name=query_id, input=payload)
            return self._finished(result)
        arn = self._start(self.query_arn, query_id, {"world_id": world_id, "query_id": query_id})
        deadline = time.monotonic() + _POLL_LIMIT_SECONDS
        while True:
            result = self._call("describe_execution", executionArn=arn)
            if result["status"] != "RUNNING":
                return self._finished(result)
            if time.monotonic() > deadline:
                raise WorkflowFailed(f"query {query_id} did not finish in {_POLL_LIMIT_SECONDS:.0f} s")
            time.sleep(_POLL_SECONDS)

    def _start(self, arn: str, name: str | None, payload: dict[str, Any]) -> str:
        from botocore.exceptions import ClientError

        if not arn:
            raise ConfigurationError("this function was not given the state machine's ARN "
                                     "(ENGRAM_*_STATE_MACHINE_ARN)")
        kwargs: dict[str, Any] = {"stateMachineArn": arn, "input": json.dumps(payload),
                                  "name": (name or uuid.uuid4().hex)[:80]}
        try:
            return str(self._call("start_execution", **kwargs)["executionArn"])
        except ClientError as exc:
            if exc.response["Error"]["Code"] == "ExecutionAlreadyExists":
                return f"{arn.replace(':stateMachine:', ':execution:')}:{kwargs['name']}"
            raise

    def _call(self, method: str, **kwargs: Any) -> dict[str, Any]:
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            return dict(getattr(self.client, method)(**kwargs))
        except ClientError as exc:
            code = exc.response.get("Error", {}).get("Code", "")
            if code in {"ThrottlingException", "ServiceUnavailable", "InternalServerError"}:
                raise TransientStoreError(f"Step Functions unavailable: {code}") from exc
            raise
        except BotoCoreError as exc:
            raise TransientStoreError(f"Step Functions unreachable: {exc}") from exc

    @staticmethod
    def _finished(result: dict[str, Any]) -> dict[str, Any]:
        if result.get("status") != "SUCCEEDED":
            raise WorkflowFailed(f"the workflow ended {result.get('status')}: {result.get('error', '')} "
                                 f"{str(result.get('cause', ''))[:300]}")
        return dict(json.loads(result.get("output") or "{}"))
