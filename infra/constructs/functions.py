"""Functions: the six Lambdas (arm64, Python 3.12) on one shared layer holding the `engram` package.

The layer is bundled without Docker: pip downloads the pinned manylinux aarch64 wheels of
infra/layer-requirements.txt into the asset. Synth in tests and in the local runtime skips bundling
(context `aws:cdk:bundling-stacks` = []).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import jsii
from aws_cdk import Aws, BundlingOptions, DockerImage, Duration, ILocalBundling
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_secretsmanager as sm
from constructs import Construct

from infra.config import Deployment, settings_environment

REPO = Path(__file__).resolve().parents[2]
RUNTIME = lambda_.Runtime.PYTHON_3_12
LAYER_REQUIREMENTS = REPO / "infra" / "layer-requirements.txt"
# name -> (timeout seconds, memory MB). The API's two functions answer within API Gateway's 29 s.
FUNCTIONS: dict[str, tuple[int, int]] = {
    "ingest": (29, 512), "api": (29, 1024), "resolve": (120, 512), "extract": (300, 1024),
    "query_step": (60, 1024), "consolidate": (300, 1024),
}
# Who calls which model: ingest and resolve apply rules only, the api embeds search queries.
EMBEDDING_CALLERS = ("api", "extract", "query_step", "consolidate")
LLM_CALLERS = ("extract", "query_step", "consolidate")
LOG_RETENTION = logs.RetentionDays.ONE_MONTH


def pinned_requirements() -> list[str]:
    """The layer's pinned requirements (comments and blank lines dropped)."""
    lines = (line.split("#", 1)[0].strip() for line in LAYER_REQUIREMENTS.read_text().splitlines())
    return [line for line in lines if line]


@jsii.implements(ILocalBundling)
class PipLayerBundling:
    """Builds the layer with the local pip for the Lambda platform (aarch64, CPython 3.12): no Docker."""

    def try_bundle(self, output_dir: str, *, image: DockerImage, **_: object) -> bool:
        target = Path(output_dir) / "python"
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--target", str(target),
                        "--platform", "manylinux2014_aarch64", "--implementation", "cp", "--python-version", "3.12",
                        "--only-binary=:all:", "--no-compile", "-r", str(LAYER_REQUIREMENTS)], check=True)
        shutil.copytree(REPO / "shared" / "engram", target / "engram", dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns("__pycache__", "local", "bench"))
        return True


def engram_layer(scope: Construct, id: str) -> lambda_.LayerVersion:
    """The layer every engram function (and the schema migrations) runs on: the `engram` package and its
    pinned dependencies, built for arm64 and Python 3.12."""
    return lambda_.LayerVersion(
        scope, id, compatible_runtimes=[RUNTIME], compatible_architectures=[lambda_.Architecture.ARM_64],
        description="the engram package and its pinned dependencies",
        code=lambda_.Code.from_asset(str(REPO / "shared"), bundling=BundlingOptions(
            image=RUNTIME.bundling_image, local=PipLayerBundling(),
            command=["bash", "-c", "pip install -t /asset-output/python " + " ".join(
                f"'{r}'" for r in pinned_requirements()) + " && cp -r engram /asset-output/python/"])),
    )


class Functions(Construct):
    """The six engram functions, each with its own role, log group and reserved concurrency, on the one
    layer. `environment` holds engram settings by field name (validated at synth)."""

    def __init__(self, scope: Construct, id: str, *, vpc: ec2.IVpc, subnets: ec2.SubnetSelection,
                 security_group: ec2.ISecurityGroup, layer: lambda_.ILayerVersion, deployment: Deployment,
                 environment: dict[str, object]) -> None:
        super().__init__(scope, id)
        self.deployment = deployment
        settings = settings_environment(**environment)
        self.by_name: dict[str, lambda_.Function] = {}
        for name, (timeout, memory) in FUNCTIONS.items():
            self.by_name[name] = lambda_.Function(
                self, _pascal(name), runtime=RUNTIME, architecture=lambda_.Architecture.ARM_64,
                handler="handler.handler", code=lambda_.Code.from_asset(str(REPO / "functions" / name)),
                layers=[layer], vpc=vpc, vpc_subnets=subnets, security_groups=[security_group],
                timeout=Duration.seconds(timeout), memory_size=memory, tracing=lambda_.Tracing.ACTIVE,
                reserved_concurrent_executions=deployment.concurrency(name),
                environment={**settings, **powertools_environment(f"engram-{name}", deployment.log_level)},
                logging_format=lambda_.LoggingFormat.JSON,
                application_log_level_v2=lambda_.ApplicationLogLevel(deployment.log_level),
                system_log_level_v2=lambda_.SystemLogLevel.WARN,
                log_group=logs.LogGroup(self, f"{_pascal(name)}Logs", retention=LOG_RETENTION),
            )

    def __getitem__(self, name: str) -> lambda_.Function:
        return self.by_name[name]

    def timeouts(self) -> dict[str, Duration]:
        return {name: Duration.seconds(timeout) for name, (timeout, _) in FUNCTIONS.items()}

    def grant_models(self, anthropic_key: sm.ISecret | None, openai_key: sm.ISecret | None = None) -> None:
        """Lets each function call the configured models it uses, and no other: Titan for embeddings;
        for the LLM either the Bedrock inference profiles or the API keys' secrets (Anthropic, OpenAI-compatible)."""
        titan = f"arn:{Aws.PARTITION}:bedrock:{Aws.REGION}::foundation-model/{self.deployment.titan_model}"
        for name in EMBEDDING_CALLERS:
            self.by_name[name].add_to_role_policy(iam.PolicyStatement(actions=["bedrock:InvokeModel"],
                                                                      resources=[titan]))
        keys = [k for k in (anthropic_key, openai_key) if k is not None]
        # Every function builds its model clients at cold start (the composition root builds them all), and
        # each client needs its key to exist: all six read them, only three ever call a model.
        for key in keys:
            for function in self.by_name.values():
                key.grant_read(function)
        if self.deployment.llm != "bedrock":
            return
        profiles = [f"arn:{Aws.PARTITION}:bedrock:{Aws.REGION}:{Aws.ACCOUNT_ID}:inference-profile/{profile}"
                    for profile in self.deployment.llm_profiles]
        models = [f"arn:{Aws.PARTITION}:bedrock:*::foundation-model/{model}" for model in self.deployment.profiled_models]
        for name in LLM_CALLERS:
            self.by_name[name].add_to_role_policy(iam.PolicyStatement(actions=["bedrock:InvokeModel"],
                                                                      resources=profiles))
            self.by_name[name].add_to_role_policy(iam.PolicyStatement(  # only when routed through our profiles
                actions=["bedrock:InvokeModel"], resources=models,
                conditions={"StringEquals": {"bedrock:InferenceProfileArn": profiles}}))


def powertools_environment(service: str, log_level: str) -> dict[str, str]:
    """Powertools' variables: the service name (the local runtime routes by it), metrics namespace and
    log level; responses stay out of traces (they carry users' memories and answers)."""
    return {"POWERTOOLS_SERVICE_NAME": service, "POWERTOOLS_METRICS_NAMESPACE": "engram",
            "POWERTOOLS_LOG_LEVEL": log_level, "POWERTOOLS_LOGGER_LOG_EVENT": "false",
            "POWERTOOLS_TRACER_CAPTURE_RESPONSE": "false"}


def _pascal(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_"))
