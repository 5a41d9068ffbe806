"""engram: long-term memory and question answering for LLM agents."""

__version__ = "0.1.0"
