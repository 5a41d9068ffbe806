"""AWS Secrets Manager: the secrets engram reads at cold start (the database's credentials, the model's key)."""

from __future__ import annotations

import json
from typing import Any

import boto3

from engram.errors import ConfigurationError


def secret_string(secret_arn: str) -> str:
    """A secret's value, as stored."""
    return str(boto3.client("secretsmanager").get_secret_value(SecretId=secret_arn)["SecretString"])


def secret_json(secret_arn: str) -> dict[str, Any]:
    """A secret stored as a JSON object (RDS's generated credentials)."""
    value = json.loads(secret_string(secret_arn))
    if not isinstance(value, dict):
        raise ConfigurationError(f"the secret {secret_arn} is not a JSON object")
    return value


def api_key(secret_arn: str) -> str:
    """An API key's secret: the plain string, or the `api_key` of a JSON object."""
    value = secret_string(secret_arn)
    try:
        parsed = json.loads(value)
    except json.JSONDecodeError:
        return value.strip()
    if isinstance(parsed, dict) and "api_key" in parsed:
        return str(parsed["api_key"])
    raise ConfigurationError(f"the secret {secret_arn} is neither a plain key nor a JSON object with api_key")
