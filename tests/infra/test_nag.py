"""cdk-nag (AwsSolutions): synth fails on any unacknowledged finding, and each acknowledgement says why."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from infra import nag
from tests.infra.synth import Template, synthesize

pytestmark = pytest.mark.infra


def test_the_app_synthesizes_offline_with_the_aws_solutions_checks_passing(template: Template) -> None:
    assert template["Resources"]  # build_app registers AwsSolutionsChecks; a finding would have raised


def test_every_acknowledgement_gives_a_reason_a_reviewer_can_read() -> None:
    for rule, reason in nag.ACKNOWLEDGED.items():
        assert rule.startswith("AwsSolutions-"), rule
        assert len(reason.split()) >= 4, rule


def test_without_acknowledgements_synth_fails_on_exactly_the_findings_infra_nag_acknowledges(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    acknowledged = set(nag.ACKNOWLEDGED)
    monkeypatch.setattr(nag, "ACKNOWLEDGED", {})
    with pytest.raises(RuntimeError, match="ValidationFailed"):
        synthesize(tmp_path)
    report = json.loads((tmp_path / "validation-report.json").read_text())
    findings = {violation["ruleName"] for plugin in report["pluginReports"] for violation in plugin["violations"]}
    # An acknowledgement with no finding behind it is stale and would hide a future one.
    assert findings == acknowledged
