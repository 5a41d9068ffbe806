"""Functions: the six Lambdas (arm64, Python 3.12) on one shared layer holding the `engram` package.

The layer is bundled without Docker: pip downloads manylinux aarch64 wheels into the asset. Synth
in tests and in the local runtime skips bundling (context `aws:cdk:bundling-stacks` = []).
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
from constructs import Construct

REPO = Path(__file__).resolve().parents[2]
RUNTIME = lambda_.Runtime.PYTHON_3_12
LAYER_REQUIREMENTS = [
    "aws-lambda-powertools[tracer,parser]>=3.20,<4", "pydantic>=2.7,<3", "pydantic-settings>=2.3,<3",
    "opensearch-py>=2.6,<4", "psycopg[binary,pool]>=3.2,<4", "pgvector>=0.3,<0.6", "anthropic>=0.40,<3",
    "httpx>=0.27,<1", "numpy>=1.26,<3",
]
# name -> (timeout seconds, memory MB)
FUNCTIONS: dict[str, tuple[int, int]] = {
    "ingest": (29, 512), "api": (29, 1024), "resolve": (120, 512), "extract": (300, 1024),
    "query_step": (60, 1024), "consolidate": (300, 1024),
}

# The Bedrock models the functions call, set in their environment and granted by exactly these ids.
BEDROCK_MODELS = {"ENGRAM_BEDROCK_MODEL": "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
                  "ENGRAM_BEDROCK_FAST_MODEL": "us.anthropic.claude-haiku-4-5-20251001-v1:0",
                  "ENGRAM_TITAN_MODEL_ID": "amazon.titan-embed-text-v2:0"}
LLM_PROFILES = (BEDROCK_MODELS["ENGRAM_BEDROCK_MODEL"], BEDROCK_MODELS["ENGRAM_BEDROCK_FAST_MODEL"])
# A cross-region inference profile ("us.<model>") serves each call from its model in one of the profile's regions.
PROFILED_MODELS = tuple(profile.split(".", 1)[1] for profile in LLM_PROFILES)
# Who calls which model: ingest and resolve apply rules only, the api embeds search queries.
EMBEDDING_CALLERS = ("api", "extract", "query_step", "consolidate")
LLM_CALLERS = ("extract", "query_step", "consolidate")


@jsii.implements(ILocalBundling)
class PipLayerBundling:
    """Builds the layer with the local pip for the Lambda platform (aarch64, CPython 3.12)."""

    def try_bundle(self, output_dir: str, *, image: DockerImage, **_: object) -> bool:
        target = Path(output_dir) / "python"
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--target", str(target),
                        "--platform", "manylinux2014_aarch64", "--implementation", "cp", "--python-version", "3.12",
                        "--only-binary=:all:", *LAYER_REQUIREMENTS], check=True)
        shutil.copytree(REPO / "shared" / "engram", target / "engram", dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns("__pycache__"))
        return True


class Functions(Construct):
    def __init__(self, scope: Construct, id: str, *, vpc: ec2.IVpc, subnets: ec2.SubnetSelection,
                 security_group: ec2.ISecurityGroup, environment: dict[str, str]) -> None:
        super().__init__(scope, id)
        self.layer = lambda_.LayerVersion(
            self, "EngramLayer", compatible_runtimes=[RUNTIME],
            compatible_architectures=[lambda_.Architecture.ARM_64], description="the engram package and its deps",
            code=lambda_.Code.from_asset(str(REPO / "shared"), bundling=BundlingOptions(
                image=RUNTIME.bundling_image, local=PipLayerBundling(),
                command=["bash", "-c", "pip install -t /asset-output/python " + " ".join(
                    f"'{r}'" for r in LAYER_REQUIREMENTS) + " && cp -r engram /asset-output/python/"])),
        )
        self.by_name: dict[str, lambda_.Function] = {}
        for name, (timeout, memory) in FUNCTIONS.items():
            self.by_name[name] = lambda_.Function(
                self, _pascal(name), function_name=None, runtime=RUNTIME, architecture=lambda_.Architecture.ARM_64,
                handler="handler.handler", code=lambda_.Code.from_asset(str(REPO / "functions" / name)),
                layers=[self.layer], vpc=vpc, vpc_subnets=subnets, security_groups=[security_group],
                timeout=Duration.seconds(timeout), memory_size=memory, tracing=lambda_.Tracing.ACTIVE,
                environment={**environment, "POWERTOOLS_SERVICE_NAME": f"engram-{name}",
                             "POWERTOOLS_METRICS_NAMESPACE": "engram"},
                log_group=logs.LogGroup(self, f"{_pascal(name)}Logs", retention=logs.RetentionDays.ONE_MONTH),
            )

    def __getitem__(self, name: str) -> lambda_.Function:
        return self.by_name[name]

    def grant_models(self) -> None:
        """Lets each function invoke the configured Bedrock models it calls, and no other."""
        titan = f"arn:{Aws.PARTITION}:bedrock:{Aws.REGION}::foundation-model/{BEDROCK_MODELS['ENGRAM_TITAN_MODEL_ID']}"
        profiles = [f"arn:{Aws.PARTITION}:bedrock:{Aws.REGION}:{Aws.ACCOUNT_ID}:inference-profile/{profile}"
                    for profile in LLM_PROFILES]
        models = [f"arn:{Aws.PARTITION}:bedrock:*::foundation-model/{model}" for model in PROFILED_MODELS]
        for name in EMBEDDING_CALLERS:
            self.by_name[name].add_to_role_policy(iam.PolicyStatement(actions=["bedrock:InvokeModel"],
                                                                      resources=[titan]))
        for name in LLM_CALLERS:
            self.by_name[name].add_to_role_policy(iam.PolicyStatement(actions=["bedrock:InvokeModel"],
                                                                      resources=profiles))
            self.by_name[name].add_to_role_policy(iam.PolicyStatement(  # only when routed through our profiles
                actions=["bedrock:InvokeModel"], resources=models,
                conditions={"StringEquals": {"bedrock:InferenceProfileArn": profiles}}))


def _pascal(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_"))
