"""cdk-nag (AwsSolutions): synth fails on any unacknowledged finding, and each acknowledgement says why."""

from __future__ import annotations

import pytest

from infra import nag
from infra.config import Deployment
from tests.infra.conftest import OVERRIDES, Synths
from tests.infra.synth import PROFILES

pytestmark = pytest.mark.infra


@pytest.mark.parametrize("name", [*PROFILES, "overridden"])
def test_each_deployment_synthesizes_offline_with_no_unacknowledged_finding_and_no_stale_acknowledgement(
        synths: Synths, name: str) -> None:
    context = OVERRIDES if name == "overridden" else {"profile": name}
    synthesized = synths.get(name, **context)  # build_app registers AwsSolutionsChecks: a finding raises
    [report] = synthesized.report["pluginReports"]
    assert report["pluginName"] == "AwsSolutions" and report["conclusion"] == "success"
    assert report["violations"] == []
    suppressed = {violation["ruleName"] for violation in report["suppressedViolations"]}
    # An acknowledgement with no finding behind it is stale and would hide a future one.
    assert suppressed == set(nag.acknowledgements(Deployment.from_context(context)))


@pytest.mark.parametrize("profile", PROFILES)
def test_every_acknowledgement_gives_a_reason_a_reviewer_can_read(profile: str) -> None:
    for rule, reason in nag.acknowledgements(Deployment(profile=profile)).items():  # type: ignore[arg-type]
        assert rule.startswith("AwsSolutions-"), rule
        assert len(reason.split()) >= 4, rule
