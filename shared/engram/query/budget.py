"""Context thinning at token budgets: drop the lowest-scoring items, then strip the bodies of summaries
(and of anything as long), then compact the conversation."""

from __future__ import annotations

from engram.config import Heuristics
from engram.query.context import QueryContext


def thin(context: QueryContext, h: Heuristics) -> list[str]:
    """Thin the context in place until it fits `h.context_token_budget`; returns the measures taken (for the trace)."""
    taken: list[str] = []

    def over() -> bool:
        return context.stats(h.chars_per_token).estimated_tokens > h.context_token_budget

    if not over():
        return taken
    # Entities outrank other items: every id the model may ask about stays in view.
    ranked = sorted(context.items, key=lambda i: (i.kind == "entity", i.score), reverse=True)
    before = len(ranked)
    while over() and len(ranked) > h.context_keep_at_least:
        dropped = ranked.pop()
        context.items = [i for i in context.items if (i.kind, i.id) != (dropped.kind, dropped.id)]
    if len(ranked) < before:
        taken.append(f"dropped {before - len(ranked)} low-scoring items")
    if over():
        limit = h.context_summary_body_chars
        context.items = [i.model_copy(update={"text": i.text[:limit] + "…"}) if len(i.text) > limit else i
                         for i in context.items]
        taken.append("stripped the bodies of summaries")
    if over():
        context.conversation = context.conversation[-h.context_compact_conversation:]
        context.items = [i.model_copy(update={"text": " ".join(i.text.split())}) for i in context.items]
        taken.append("compacted")
    return taken
