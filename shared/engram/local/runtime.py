"""The local workflow runtime: moto executing the very state machines CDK synthesizes, with each
Lambda invocation routed to the in-process handler of `functions/<name>/handler.py`."""

from __future__ import annotations

import importlib
import io
import json
import os
import sys
import threading
import traceback
import uuid
import zipfile
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace, TracebackType
from typing import Any

from engram.adapters.stepfunctions import StepFunctionsWorkflows
from engram.enrichment.ingest import THROTTLED
from engram.local.cdk_template import ACCOUNT, REGION, REPO_ROOT, load_template, resolve
from engram.local.server import LambdaContext

Handler = Callable[[dict[str, Any], Any], Any]
_ROLE = f"arn:aws:iam::{ACCOUNT}:role/engram-local"
MACHINES = ("engram-enrichment", "engram-query", "engram-consolidation")


LOCAL_FLOOR = 2  # the fewest concurrent invocations the local bound leaves any function


class LocalWorkflowRuntime:
    """Enter to start moto with the three state machines; exit to stop it and restore moto."""

    def __init__(self, cache_dir: Path, *, instant_retries: bool = False, profile: str = "prod",
                 concurrency: int | None = None) -> None:
        self.cache_dir = cache_dir
        # Concurrent invocations per function: the template's reserved concurrency, scaled to this local bound
        # (sized to the machine and the connection pool; None: the template's alone). Past it, calls are throttled.
        self.concurrency = concurrency
        self.limits: dict[str, int] = {}  # moto function name -> concurrent invocations allowed
        self._slots: dict[str, threading.BoundedSemaphore] = {}
        self.profile = profile  # the deployment profile synthesized (see cdk_template.profile_imitated)
        self.instant_retries = instant_retries
        self.arns: dict[str, str] = {}
        self.function_names: dict[str, str] = {}  # moto function name -> handler folder
        self.overrides: dict[str, Handler] = {}  # handler folder -> replacement, for tests
        self._handlers: dict[str, Handler] = {}
        self._lock = threading.Lock()
        self._undo: list[Callable[[], None]] = []
        self._mock: Any = None

    # -- lifecycle
    def __enter__(self) -> LocalWorkflowRuntime:
        from moto import mock_aws

        for key, value in {"AWS_ACCESS_KEY_ID": "local", "AWS_SECRET_ACCESS_KEY": "local",
                           "AWS_DEFAULT_REGION": REGION}.items():
            os.environ.setdefault(key, value)
        template = load_template(self.cache_dir, self.profile)
        self._mock = mock_aws(config={"stepfunctions": {"execute_state_machine": True},
                                      "lambda": {"use_docker": False},
                                      "core": {"mock_credentials": True, "passthrough": {"services": ["bedrock-runtime"]}}})
        self._mock.start()
        try:
            self._patch_invoke()
            if self.instant_retries:
                self._patch_retry_sleep()
            self._create(template)
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        while self._undo:
            self._undo.pop()()
        if self._mock is not None:
            self._mock.stop()
            self._mock = None

    def workflows(self) -> StepFunctionsWorkflows:
        import boto3

        return StepFunctionsWorkflows(boto3.client("stepfunctions", region_name=REGION),
                                      enrichment_arn=self.arns["engram-enrichment"],
                                      query_arn=self.arns["engram-query"],
                                      consolidation_arn=self.arns["engram-consolidation"], query_sync=False)

    def running(self, machine: str) -> bool:
        """Whether any execution of `machine` is running."""
        import boto3

        sfn = boto3.client("stepfunctions", region_name=REGION)
        return bool(sfn.list_executions(stateMachineArn=self.arns[machine], statusFilter="RUNNING",
                                        maxResults=1)["executions"])

    # -- setup
    def _create(self, template: dict[str, Any]) -> None:
        import boto3

        iam = boto3.client("iam", region_name=REGION)
        iam.create_role(RoleName="engram-local", AssumeRolePolicyDocument=json.dumps({"Version": "2012-10-17",
                                                                                      "Statement": []}))
        lam = boto3.client("lambda", region_name=REGION)
        sfn = boto3.client("stepfunctions", region_name=REGION)
        resources = template["Resources"]
        refs: dict[str, str] = {}
        attrs: dict[tuple[str, str], str] = {}
        code = _empty_zip()
        reserved: dict[str, int | None] = {}
        definitions: list[str] = []
        for logical, resource in resources.items():
            if resource["Type"] != "AWS::Lambda::Function":
                continue
            env = resource["Properties"].get("Environment", {}).get("Variables", {})
            folder = str(env.get("POWERTOOLS_SERVICE_NAME", "")).removeprefix("engram-")
            if not (REPO_ROOT / "functions" / folder / "handler.py").exists():
                continue  # CDK's own helper functions (custom resources) do not run locally
            arn = lam.create_function(FunctionName=logical, Runtime="python3.12", Role=_ROLE,
                                      Handler=resource["Properties"]["Handler"], Code={"ZipFile": code},
                                      Architectures=["arm64"])["FunctionArn"]
            refs[logical] = logical
            attrs[(logical, "Arn")] = arn
            self.function_names[logical] = folder
            reserved[logical] = resource["Properties"].get("ReservedConcurrentExecutions")
        for resource in resources.values():
            if resource["Type"] != "AWS::StepFunctions::StateMachine":
                continue
            props = resource["Properties"]
            definition = resolve(props["DefinitionString"], refs, attrs)
            name = props["StateMachineName"]
            arn = sfn.create_state_machine(name=name, definition=definition, roleArn=_ROLE,
                                           type=props.get("StateMachineType", "STANDARD"))["stateMachineArn"]
            self.arns[name] = arn
            definitions.append(definition)
        # Only the functions the state machines call run here (the HTTP ones run in the server's own threads).
        self._bound({logical: r for logical, r in reserved.items() if any(logical in d for d in definitions)})
        missing = [m for m in MACHINES if m not in self.arns]
        if missing:
            raise RuntimeError(f"the synthesized template lacks {missing}")

    def _bound(self, reserved: dict[str, int | None]) -> None:
        """Each function's concurrency: its reserved concurrency, scaled down so that the most reserved one (the
        interactive query steps) gets the local bound and the others their share of it (at least LOCAL_FLOOR,
        never more than reserved): a burst of background enrichment leaves room for questions, as on AWS."""
        top = max((r for r in reserved.values() if r), default=0)
        for logical, r in reserved.items():
            bounds = [r] if r else []
            if self.concurrency is not None:
                floor = min(LOCAL_FLOOR, self.concurrency)
                bounds.append(max(floor, round(self.concurrency * r / top)) if r else self.concurrency)
            if bounds:
                self.limits[logical] = min(bounds)
                self._slots[logical] = threading.BoundedSemaphore(self.limits[logical])

    def _patch_invoke(self) -> None:
        from moto.awslambda_simple.models import LambdaSimpleBackend

        original = LambdaSimpleBackend.invoke
        runtime = self

        def invoke(backend: Any, function_name: str, qualifier: str | None, body: Any, headers: Any,
                   response_headers: Any) -> bytes:
            return runtime._invoke(function_name, body, response_headers)

        LambdaSimpleBackend.invoke = invoke  # type: ignore[method-assign,assignment]
        self._undo.append(lambda: setattr(LambdaSimpleBackend, "invoke", original))

    def _patch_retry_sleep(self) -> None:
        from moto.stepfunctions.parser.asl.component.common.retry import retrier_decl

        original = retrier_decl.time
        retrier_decl.time = SimpleNamespace(sleep=lambda _seconds: None)  # type: ignore[assignment]
        self._undo.append(lambda: setattr(retrier_decl, "time", original))

    # -- invocation
    def handler(self, folder: str) -> Handler:
        if folder in self.overrides:
            return self.overrides[folder]
        with self._lock:
            if folder not in self._handlers:
                if str(REPO_ROOT) not in sys.path:
                    sys.path.insert(0, str(REPO_ROOT))
                module = importlib.import_module(f"functions.{folder}.handler")
                self._handlers[folder] = module.handler
            return self._handlers[folder]

    def _invoke(self, function_name: str, body: Any, response_headers: dict[str, str]) -> bytes:
        name = function_name.split(":function:")[-1].split(":")[0]
        folder = self.function_names.get(name)
        if folder is None:
            return json.dumps({"errorType": "ResourceNotFoundException", "errorMessage": name}).encode()
        slots = self._slots.get(name)
        # Reject rather than wait, as Lambda does: a wait would count against the state's timeout. moto reports an
        # error of the invoke call itself as "Exception" for a Task on a bare function ARN, so the throttle is
        # answered as the error the ASL matches on AWS (Lambda.TooManyRequestsException).
        if slots is not None and not slots.acquire(blocking=False):
            response_headers["x-amz-function-error"] = "Unhandled"
            return json.dumps({"errorType": THROTTLED, "errorMessage": f"Rate Exceeded: {name} already runs "
                               f"{self.limits[name]} concurrent invocations"}).encode()
        try:
            return self._run(folder, body, response_headers)
        finally:
            if slots is not None:
                slots.release()

    def _run(self, folder: str, body: Any, response_headers: dict[str, str]) -> bytes:
        payload = json.loads(body) if body else {}
        context = LambdaContext(f"engram-{folder}")
        context.aws_request_id = str(uuid.uuid4())
        try:
            result = self.handler(folder)(payload, context)
        except Exception as exc:  # the state machine's Retry and Catch match on the class name
            response_headers["x-amz-function-error"] = "Unhandled"
            return json.dumps({"errorType": exc.__class__.__name__, "errorMessage": str(exc),
                               "stackTrace": traceback.format_exception(exc)[-3:]}).encode()
        return json.dumps(result, default=str).encode()


def _empty_zip() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("handler.py", "# the local runtime routes invocations to functions/<name>/handler.py\n")
    return buffer.getvalue()
