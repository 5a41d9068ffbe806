"""Pydantic models shared by the API, the handlers, the pipelines and the adapters."""
