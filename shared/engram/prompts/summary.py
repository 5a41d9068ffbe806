from __future__ import annotations

from collections.abc import Sequence

SYSTEM = """You write the summary a long-term memory keeps of a conversation or an entity: a short
paragraph with the durable facts, preferences and decisions, no chit-chat, through the write_summary tool."""


def messages(scope: str, items: Sequence[str]) -> list[dict[str, str]]:
    return [{"role": "user", "content": f"Scope: {scope}\n\nMaterial:\n" + "\n".join(f"- {i}" for i in items)}]
