"""Context thinning at token budgets: drop the lowest-scoring items, then cut long bodies, then compact."""

from __future__ import annotations

from engram.query.context import QueryContext

_KEEP_AT_LEAST = 5
_BODY_CHARS = 300


def thin(context: QueryContext, budget_tokens: int, chars_per_token: float) -> list[str]:
    """Thin the context in place until it fits; returns the measures taken (for the trace)."""
    taken: list[str] = []

    def over() -> bool:
        return context.stats(chars_per_token).estimated_tokens > budget_tokens

    if not over():
        return taken
    ranked = sorted(context.items, key=lambda i: (i.kind == "entity", i.score), reverse=True)
    while over() and len(ranked) > _KEEP_AT_LEAST:
        ranked.pop()
    if len(ranked) < len(context.items):
        taken.append(f"dropped {len(context.items) - len(ranked)} low-scoring items")
        keep = {(i.kind, i.id) for i in ranked}
        context.items = [i for i in context.items if (i.kind, i.id) in keep]
    if over():
        context.items = [i if len(i.text) <= _BODY_CHARS else i.model_copy(update={"text": i.text[:_BODY_CHARS] + "…"})
                         for i in context.items]
        taken.append("cut long bodies")
    if over():
        context.conversation = context.conversation[-3:]
        taken.append("compacted the conversation")
    return taken
