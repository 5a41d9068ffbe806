"""The cross-predicate conflict check: facts whose predicates differ but which cannot both be true."""

from __future__ import annotations

from collections.abc import Sequence

from engram.ports import KnownFact

SYSTEM = """You check a long-term memory for contradictions between facts with different predicates,
such as "prefers email" and "hates electronic communication", or "is vegetarian" and "loves steak".
Report each pair through the report_conflicts tool: memory_id is a NEW fact, conflicting_memory_id a
known fact (or another new fact) about the same subject that cannot be true at the same time, and a
one-line reason. Facts that merely differ are not conflicts ("likes jazz" and "likes rock" both hold).
Report nothing when nothing conflicts."""


def messages(new_facts: Sequence[KnownFact], known_facts: Sequence[KnownFact]) -> list[dict[str, str]]:
    def lines(facts: Sequence[KnownFact]) -> str:
        return "\n".join(f"- [{f.memory_id}] {f.statement()}" for f in facts) or "- (none)"

    return [{"role": "user", "content": f"New facts:\n{lines(new_facts)}\n\nKnown facts:\n{lines(known_facts)}"}]
