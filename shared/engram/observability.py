"""Observability singletons shared by every handler. Each function is named by its own
POWERTOOLS_SERVICE_NAME (engram-ingest, engram-extract, ...), so logs, traces and metrics say which."""

from __future__ import annotations

import os

from aws_lambda_powertools import Logger, Metrics, Tracer

SERVICE = os.environ.get("POWERTOOLS_SERVICE_NAME") or "engram"

logger = Logger(service=SERVICE)
tracer = Tracer(service=SERVICE)
metrics = Metrics(namespace="engram", service=SERVICE)
