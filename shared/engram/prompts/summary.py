from __future__ import annotations

from collections.abc import Sequence

from engram.ports import KnownFact

SYSTEM = """You write the summary a long-term memory keeps of a conversation or an entity: a short
paragraph with the durable facts, preferences and decisions, no chit-chat, through the write_summary tool.
In confirmed_fact_ids list the ids of the facts given that your summary states as true (only those ids;
leave out a fact the rest of the material contradicts or that you left out)."""


def messages(scope: str, items: Sequence[str], facts: Sequence[KnownFact] = ()) -> list[dict[str, str]]:
    text = f"Scope: {scope}\n\n"
    if facts:
        text += "Facts:\n" + "\n".join(f"- [{f.memory_id}] {f.statement()}" for f in facts) + "\n\n"
    return [{"role": "user", "content": text + "Material:\n" + "\n".join(f"- {i}" for i in items)}]
