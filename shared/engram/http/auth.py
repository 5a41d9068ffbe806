"""Who may touch which world: JWT claims on AWS, API keys locally. Pure functions."""

from __future__ import annotations

import hmac
import re
from typing import Any

from engram.errors import Forbidden, Unauthorized

_WORLD_PATH = re.compile(r"^/v1/worlds/([^/]+)")


def parse_api_keys(spec: str | None) -> dict[str, set[str]]:
    """`key1=world-a,world-b;key2=*` as {key: worlds}; empty or None turns local auth off."""
    keys: dict[str, set[str]] = {}
    for part in (spec or "").split(";"):
        if "=" in part:
            key, worlds = part.split("=", 1)
            keys[key.strip()] = {w.strip() for w in worlds.split(",") if w.strip()}
    return keys


def claim_worlds(claims: dict[str, Any]) -> set[str]:
    """The `engram:worlds` claim as a set (a JSON list, or a comma or space separated string). The Cognito
    user pool the stack creates (when no issuer is given) carries it as the ID token's `custom:worlds`."""
    raw = claims.get("engram:worlds", claims.get("custom:worlds", ""))
    if isinstance(raw, list):
        return {str(w) for w in raw}
    return {w for w in re.split(r"[,\s]+", str(raw).strip("[]")) if w}


def world_of(path: str) -> str | None:
    m = _WORLD_PATH.match(path)
    return m.group(1) if m else None


def authorize(path: str, headers: dict[str, str], jwt_claims: dict[str, Any] | None,
              api_keys: dict[str, set[str]]) -> None:
    """Raise Unauthorized or Forbidden before anything is read; return when the call may proceed."""
    world = world_of(path)
    allowed = readable_worlds(headers, jwt_claims, api_keys)
    if world is not None and allowed is not None and world not in allowed:
        raise Forbidden(f"this caller may not access world {world!r}")


def readable_worlds(headers: dict[str, str], jwt_claims: dict[str, Any] | None,
                    api_keys: dict[str, set[str]]) -> set[str] | None:
    """The worlds the caller may touch, None for every world (`*`, or auth off); Unauthorized for a missing or
    unknown key. `headers` have lower-case names."""
    if jwt_claims is not None:  # on AWS the authorizer verified the token; the claim names the worlds
        allowed = claim_worlds(jwt_claims)
    elif api_keys:
        header = headers.get("authorization", "")
        token = header[7:].strip() if header.lower().startswith("bearer ") else ""
        match = next((worlds for key, worlds in api_keys.items() if token and hmac.compare_digest(key, token)), None)
        if match is None:
            raise Unauthorized("a valid API key is required: Authorization: Bearer <key>")
        allowed = match
    else:
        return None  # local default: auth off
    return None if "*" in allowed else allowed
