"""Context thinning at token budgets: the conversation lines items already show, then compaction, then the bodies
of summaries (and of anything as long), then the lowest-scoring items."""

from __future__ import annotations

from collections.abc import Callable

from engram.model.context import QueryContext
from engram.model.heuristics import Heuristics
from engram.model.research import ResearchBudgets
from engram.ports.llm import ContextDigest, DigestedItem

Digester = Callable[[QueryContext], ContextDigest | None]
"""The compaction digest of a research context (the model's, through `LLM.digest`); None: it could not be had."""


def thin(context: QueryContext, h: Heuristics) -> list[str]:
    """Thin the context in place until it fits `context_token_budget`: first the conversation lines an item already
    shows go (the item says it, with its id and date); then, over budget, the conversation is compacted, long bodies
    are stripped, and only then the lowest-scoring items are dropped (the search's evidence goes last). Returns the
    measures taken (for the trace)."""
    taken: list[str] = []
    unshown = unshown_conversation(context)
    if len(unshown) < len(context.conversation):
        taken.append(f"left out {len(context.conversation) - len(unshown)} conversation lines items show")
        context.conversation = unshown
    budget = h.query.context_token_budget
    if _tokens(context, h) <= budget:
        return taken
    _compact(context, h)
    taken.append("compacted")
    if _tokens(context, h) > budget:
        _mask(context, h)
        taken.append("stripped the bodies of summaries")
    if _tokens(context, h) > budget:
        dropped = _drop(context, h, budget, h.query.context_keep_at_least)
        if dropped:
            taken.append(f"dropped {dropped} low-scoring items")
    return taken


def unshown_conversation(context: QueryContext) -> list[str]:
    """The conversation lines (`- <who> (<when>): <text>`) whose text no event item already shows (a search hit is
    often also a line of the conversation context: the item, with its id and date, is kept); a header stays only
    with lines under it."""
    shown = [i.text for i in context.items if i.kind == "event"]
    kept = [line for line in context.conversation if not (
        line.startswith("- ") and (said := line.partition("): ")[2]) and any(t.endswith(said) for t in shown))]
    if len(kept) < len(context.conversation) and not any(line.startswith("- ") for line in kept):
        return []
    return kept


def research_budgets(h: Heuristics) -> ResearchBudgets:
    q = h.query
    return ResearchBudgets(drop=q.research_drop_tokens, mask=q.research_mask_tokens, compact=q.research_compact_tokens)


def thin_research(context: QueryContext, h: Heuristics, protected: frozenset[str] = frozenset(),
                  digest: Digester | None = None) -> tuple[int, list[str]]:
    """Research thinning by how far the gathered context overshoots: past `mask` the long bodies go first
    (breadth is kept), past `compact` the context is compacted too (seed 003: an LLM compaction digest, `digest`;
    without one, or when the call failed, by the rules the offline model's digest follows), and past `drop` the lowest-scoring
    items are dropped until it fits; items in `protected` (a sub-question's only evidence, a conflict's
    sides) go last. `compact` is a hard ceiling: the floor of kept items yields to it. Returns the
    estimated tokens as gathered and the measures taken."""
    budgets = research_budgets(h)
    gathered = _tokens(context, h)
    taken: list[str] = []
    if gathered > budgets.mask:
        _mask(context, h)
        taken.append(f"masked long bodies (gathered {gathered} > {budgets.mask} tokens)")
    if gathered > budgets.compact:
        made = digest(context) if digest is not None else None
        if made is not None:
            apply_digest(context, made)
        else:
            _compact(context, h)
        how = "" if made is not None or digest is None else ", by rules: the digest call failed"
        taken.append(f"compacted (gathered {gathered} > {budgets.compact} tokens{how})")
    if _tokens(context, h) > budgets.drop:
        dropped = _drop(context, h, budgets.drop, h.query.context_keep_at_least, protected)
        if dropped:
            taken.append(f"dropped {dropped} low-scoring items (over {budgets.drop} tokens)")
    if _tokens(context, h) > budgets.compact:
        dropped = _drop(context, h, budgets.compact, 0, protected)
        taken.append(f"dropped {dropped} more items to the {budgets.compact}-token ceiling")
    if _tokens(context, h) > budgets.compact:  # the conversation alone is over: cut its lines too
        limit = h.query.context_summary_body_chars
        context.conversation = [line[:limit] + "…" if len(line) > limit else line for line in context.conversation]
        taken.append(f"cut the conversation's lines to the {budgets.compact}-token ceiling")
    return gathered, taken


def _tokens(context: QueryContext, h: Heuristics) -> int:
    return context.stats(h.query.chars_per_token).estimated_tokens


def _drop(context: QueryContext, h: Heuristics, budget: int, keep_at_least: int,
          protected: frozenset[str] = frozenset()) -> int:
    """Drop the lowest-ranked items until the context fits `budget` or only `keep_at_least` are left.
    Entities outrank other items: every id the model may ask about stays in view."""
    ranked = sorted(context.items, key=lambda i: (i.id in protected, i.kind == "entity", i.score), reverse=True)
    before = len(ranked)
    while _tokens(context, h) > budget and len(ranked) > keep_at_least:
        dropped = ranked.pop()
        context.items = [i for i in context.items if (i.kind, i.id) != (dropped.kind, dropped.id)]
    return before - len(ranked)


def _mask(context: QueryContext, h: Heuristics) -> None:
    limit = h.query.context_summary_body_chars
    context.items = [i.model_copy(update={"text": i.text[:limit] + "…"}) if len(i.text) > limit else i
                     for i in context.items]


def _compact(context: QueryContext, h: Heuristics) -> None:
    apply_digest(context, rule_digest(context, h.query.context_compact_conversation))


def rule_digest(context: QueryContext, keep_lines: int) -> ContextDigest:
    """The compaction digest by rules (the offline model's): the conversation's last `keep_lines` lines, every
    item's text with its whitespace collapsed."""
    return ContextDigest(conversation=context.conversation[-keep_lines:],
                         items=[DigestedItem(kind=i.kind, id=i.id, text=" ".join(i.text.split())) for i in context.items])


def apply_digest(context: QueryContext, made: ContextDigest) -> int:
    """Apply a compaction digest in place: its conversation replaces the context's unless it is longer, and each
    item it names by kind and id takes its text where that is no longer (and not emptied); items it does not name,
    or names wrongly, stay as they are: no item is added or lost. Returns the items condensed."""
    if sum(map(len, made.conversation)) <= sum(map(len, context.conversation)):
        context.conversation = list(made.conversation)
    texts = {(d.kind, d.id): d.text for d in made.items}
    condensed = 0
    items = []
    for item in context.items:
        text = texts.get((item.kind, item.id))
        if text is not None and text != item.text and len(text) <= len(item.text) and (text.strip()
                                                                                       or not item.text.strip()):
            item = item.model_copy(update={"text": text})
            condensed += 1
        items.append(item)
    context.items = items
    return condensed
