"""The stack synthesized once per session (3 to 6 s), shared by every infra test."""

from __future__ import annotations

import pytest
from aws_cdk.assertions import Template as CdkTemplate

from tests.infra.synth import Template, synthesize


@pytest.fixture(scope="session")
def template(tmp_path_factory: pytest.TempPathFactory) -> Template:
    """The template as `cdk synth` writes it with cdk.json's context; cdk-nag has passed to get here."""
    return synthesize(tmp_path_factory.mktemp("cdk.out"))


@pytest.fixture(scope="session")
def assertions(template: Template) -> CdkTemplate:
    """The same template, wrapped for aws_cdk.assertions."""
    return CdkTemplate.from_json(template)
