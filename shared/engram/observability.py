"""Observability singletons shared by every handler."""

from __future__ import annotations

from aws_lambda_powertools import Logger, Metrics, Tracer

logger = Logger(service="engram")
tracer = Tracer(service="engram")
metrics = Metrics(namespace="engram", service="engram")
