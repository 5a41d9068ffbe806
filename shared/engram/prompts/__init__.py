"""Prompts: pure functions from a task's context to (system, messages). One module per task."""
