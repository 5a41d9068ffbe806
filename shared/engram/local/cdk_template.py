"""The synthesized CloudFormation template for the local runtime: synthesized in-process with
bundling skipped, cached by a hash of the infra sources, and its intrinsic functions resolved."""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[3]
ACCOUNT = "123456789012"
REGION = "us-east-1"
PSEUDO = {"AWS::Partition": "aws", "AWS::Region": REGION, "AWS::AccountId": ACCOUNT, "AWS::URLSuffix": "amazonaws.com",
          "AWS::StackName": "Engram", "AWS::NoValue": None}


def _sources_hash() -> str:
    digest = hashlib.sha256()
    for path in [*sorted((REPO_ROOT / "infra").rglob("*.py")), REPO_ROOT / "cdk.json"]:
        if path.exists():
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def profile_imitated(keyword_index: str) -> str:
    """The deployment profile whose parts the local stack imitates. The two profiles run the same six
    functions and state machines and differ in the keyword brain: PostgreSQL full-text search is the
    `small` profile's; tantivy (BM25, as OpenSearch ranks) stands in for `prod`'s OpenSearch."""
    return "small" if keyword_index == "postgres" else "prod"


def load_template(cache_dir: Path, profile: str = "prod") -> dict[str, Any]:
    """The stack's template for a deployment profile, synthesized once per change of infra/ (about 5 s
    when it is not cached)."""
    cache_dir.mkdir(parents=True, exist_ok=True)
    cached = cache_dir / f"template-{profile}-{_sources_hash()}.json"
    if cached.exists():
        return dict(json.loads(cached.read_text()))
    import sys

    if str(REPO_ROOT) not in sys.path:
        sys.path.insert(0, str(REPO_ROOT))
    os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")
    from infra.app import STACK_NAME, build_app

    context = json.loads((REPO_ROOT / "cdk.json").read_text()).get("context", {})
    with tempfile.TemporaryDirectory() as outdir:
        assembly = build_app({**context, "profile": profile, "aws:cdk:bundling-stacks": []}, outdir=outdir).synth()
        template = assembly.get_stack_by_name(STACK_NAME).template
    for old in cache_dir.glob(f"template-{profile}-*.json"):
        old.unlink()
    cached.write_text(json.dumps(template))
    return dict(template)


def resolve(value: Any, refs: dict[str, str], attrs: dict[tuple[str, str], str]) -> Any:
    """Evaluate Ref, Fn::GetAtt, Fn::Join, Fn::Select and Fn::Split against the local resources."""
    if isinstance(value, list):
        return [resolve(v, refs, attrs) for v in value]
    if not isinstance(value, dict):
        return value
    if len(value) == 1:
        (key, arg), = value.items()
        if key == "Ref":
            return PSEUDO[arg] if arg in PSEUDO else refs.get(arg, arg)
        if key == "Fn::GetAtt":
            logical, attr = arg if isinstance(arg, list) else arg.split(".", 1)
            return attrs.get((logical, attr), f"{logical}.{attr}")
        if key == "Fn::Join":
            sep, parts = arg
            return sep.join(str(resolve(p, refs, attrs)) for p in resolve(parts, refs, attrs))
        if key == "Fn::Select":
            index, items = arg
            return resolve(items, refs, attrs)[int(index)]
        if key == "Fn::Split":
            sep, text = arg
            return str(resolve(text, refs, attrs)).split(sep)
    return {k: resolve(v, refs, attrs) for k, v in value.items()}
