"""Synthesizes the CDK app offline (bundling skipped, cdk.json's context) and reads the template:
the engram functions by folder, the statements each role is granted, the state machines' ASL, and
cdk-nag's validation report."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
CDK_CONTEXT: dict[str, Any] = json.loads((REPO / "cdk.json").read_text())["context"]
FOLDERS = ("ingest", "api", "resolve", "extract", "query_step", "consolidate")
MACHINES = ("engram-enrichment", "engram-query", "engram-consolidation")
PROFILES = ("small", "prod")

Template = dict[str, Any]


def synthesize(outdir: Path, **context: Any) -> Template:
    """The Engram stack's template, with cdk.json's context overridden by `context`. Raises when
    cdk-nag reports a finding that infra/nag.py does not acknowledge (its report stays in `outdir`)."""
    from infra.app import STACK_NAME, build_app

    app = build_app({**CDK_CONTEXT, **context, "aws:cdk:bundling-stacks": []}, outdir=str(outdir))
    return dict(app.synth().get_stack_by_name(STACK_NAME).template)


def validation_report(outdir: Path) -> dict[str, Any]:
    """cdk-nag's report of the last synth into `outdir`: violations and acknowledged (suppressed) ones."""
    return dict(json.loads((outdir / "validation-report.json").read_text()))


def resources(template: Template, type_: str) -> dict[str, dict[str, Any]]:
    """Logical id -> properties of every resource of one CloudFormation type."""
    return {logical: r.get("Properties", {}) for logical, r in template["Resources"].items() if r["Type"] == type_}


def only(template: Template, type_: str) -> tuple[str, dict[str, Any]]:
    """The one resource of a type, as (logical id, properties)."""
    found = resources(template, type_)
    assert len(found) == 1, f"expected one {type_}, found {sorted(found)}"
    return next(iter(found.items()))


def engram_functions(template: Template) -> dict[str, tuple[str, dict[str, Any]]]:
    """Folder under functions/ -> (logical id, properties), found as the local runtime finds them: by
    POWERTOOLS_SERVICE_NAME `engram-<folder>` with a handler in functions/<folder>/ (CDK's own helper
    functions have none; the schema migrations function names no folder)."""
    found = {}
    for logical, props in resources(template, "AWS::Lambda::Function").items():
        service = props.get("Environment", {}).get("Variables", {}).get("POWERTOOLS_SERVICE_NAME", "")
        folder = service.removeprefix("engram-")
        if service.startswith("engram-") and (REPO / "functions" / folder / "handler.py").exists():
            found[folder] = (logical, props)
    return found


def environment(template: Template, folder: str) -> dict[str, Any]:
    """An engram function's environment variables."""
    return dict(engram_functions(template)[folder][1]["Environment"]["Variables"])


def state_machines(template: Template) -> dict[str, tuple[str, dict[str, Any]]]:
    """StateMachineName -> (logical id, properties)."""
    return {props["StateMachineName"]: (logical, props)
            for logical, props in resources(template, "AWS::StepFunctions::StateMachine").items()}


def role_of(function: dict[str, Any]) -> str:
    return str(function["Role"]["Fn::GetAtt"][0])


def statements(template: Template, role: str) -> list[dict[str, Any]]:
    """Every statement the IAM policies attached to a role grant (actions always as a list)."""
    found = []
    for policy in resources(template, "AWS::IAM::Policy").values():
        if {"Ref": role} in policy.get("Roles", []):
            for statement in policy["PolicyDocument"]["Statement"]:
                actions = statement["Action"]
                found.append({**statement, "Action": [actions] if isinstance(actions, str) else actions})
    return found


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def placeholder(token: dict[str, Any]) -> str:
    """A readable stand-in for an intrinsic inside the ASL text: ${Logical.Attr}, ${Logical}."""
    if "Fn::GetAtt" in token:
        logical, attr = token["Fn::GetAtt"]
        return f"${{{logical}.{attr}}}"
    if "Ref" in token:
        return f"${{{token['Ref']}}}"
    return "${" + json.dumps(token).replace('"', "'") + "}"


def definition(template: Template, name: str) -> dict[str, Any]:
    """A state machine's ASL: the DefinitionString's Fn::Join parts joined, tokens as placeholders."""
    _, props = state_machines(template)[name]
    body = props["DefinitionString"]
    if isinstance(body, str):
        return dict(json.loads(body))
    separator, parts = body["Fn::Join"]
    return dict(json.loads(separator.join(p if isinstance(p, str) else placeholder(p) for p in parts)))


def all_states(asl: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every state, including those inside Map and Parallel states."""
    for name, state in asl["States"].items():
        yield name, state
        for inner in (state.get("ItemProcessor"), state.get("Iterator"), *state.get("Branches", [])):
            if inner:
                yield from all_states(inner)
