"""The CDK app: `python -m infra.app` synthesizes offline (no AWS calls, no credentials)."""

from __future__ import annotations

import os
from typing import Any

import aws_cdk as cdk
from cdk_nag import AwsSolutionsChecks

from infra.nag import acknowledge
from infra.stack import EngramStack

STACK_NAME = "Engram"


def build_app(context: dict[str, Any] | None = None, *, outdir: str | None = None) -> cdk.App:
    os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")
    app = cdk.App(context=context or {}, outdir=outdir)
    stack = EngramStack(app, STACK_NAME, description="engram: long-term memory for LLM agents")
    acknowledge(stack)
    cdk.Validations.of(app).add_plugins(AwsSolutionsChecks(app))
    return app


if __name__ == "__main__":
    build_app().synth()
