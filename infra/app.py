"""The CDK app: synthesizes offline (no AWS calls, no credentials).

Under the CDK CLI (`cdk synth|deploy -c profile=prod`) the context comes from cdk.json and `-c`.
Run directly, `python -m infra.app [--no-bundling] [--outdir DIR] [-c key=value ...]` reads cdk.json
itself; `--no-bundling` skips building the layer (pip needs the network), as tests do.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any

import aws_cdk as cdk
from cdk_nag import AwsSolutionsChecks

from infra.config import Deployment
from infra.nag import acknowledge
from infra.stack import EngramStack

STACK_NAME = "Engram"
CDK_JSON = Path(__file__).resolve().parents[1] / "cdk.json"


def deployment_of(app: cdk.App) -> Deployment:
    """The deployment the app's context describes (cdk.json, then `-c` values)."""
    keys = {field.alias or name for name, field in Deployment.model_fields.items()}
    return Deployment.from_context({key: app.node.try_get_context(key) for key in keys})


def build_app(context: dict[str, Any] | None = None, *, outdir: str | None = None) -> cdk.App:
    os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")
    app = cdk.App(context=context or {}, outdir=outdir)
    deployment = deployment_of(app)
    stack = EngramStack(app, STACK_NAME, deployment=deployment,
                        description=f"engram: long-term memory for LLM agents ({deployment.profile} profile)")
    acknowledge(stack, deployment)
    cdk.Validations.of(app).add_plugins(AwsSolutionsChecks(app))
    return app


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m infra.app")
    parser.add_argument("-c", "--context", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--outdir")
    parser.add_argument("--no-bundling", action="store_true")
    args = parser.parse_args(argv)
    context: dict[str, Any] = {}
    if "CDK_CONTEXT_JSON" not in os.environ and "CDK_OUTDIR" not in os.environ:  # not under the CLI
        context = dict(json.loads(CDK_JSON.read_text()).get("context", {}))
    context.update(dict(pair.split("=", 1) for pair in args.context))
    if args.no_bundling:
        context["aws:cdk:bundling-stacks"] = []
    build_app(context, outdir=args.outdir).synth()


if __name__ == "__main__":
    main()
