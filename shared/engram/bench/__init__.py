"""Benchmarks run in process (`engram bench ...`): evaluation tooling, never part of the service."""
