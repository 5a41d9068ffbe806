"""The answer prompt. The system text is the same for every query and the tools' schemas (the capability
definitions ride on request_info's description, sent only while the model may ask for more) are the same for every
round, so the provider caches them; what changes per round (the context, this round's allowed ids) is in the user
message, kept short: each item once, with its date, and the ids the round allows named by the items they belong to
when they are exactly those."""

from __future__ import annotations

from datetime import datetime

from engram.model.context import QueryContext
from engram.query import offer as offers
from engram.query.budget import unshown_conversation


def capability_lines() -> list[str]:
    """One line per registered capability: its name, its parameters and what it does."""
    return [f"- {c.name} {c.signature}: {c.summary}" for c in offers.CAPABILITIES.values()]


# request_info's description: the capabilities, sent only with the tool, and the ids a request may name.
REQUEST_INFO = ("Ask for what the context lacks. Capabilities {params}:\n" + "\n".join(capability_lines())
                + "\nIds: expand_* take [summary] items' ids, other entity ids any entity item's; the user message "
                "lists the rest. Any other id ends the loop.")

SYSTEM = """You answer from an agent's long-term memory, using only the context items of the user message. Cite
the items you use by id in `sources`, with their contribution (share of the answer). Confidence in [0, 1]: 0.75+
only when an item states the answer, under 0.45 when inferred. If the items do not support an answer, say what is
unknown, with low confidence; never guess. Give up to three follow-up questions memory could answer, and in
`question_signals` what the question itself carries. A [summary] entity shows only its name and definition;
expand_entity brings its full record. Use request_info, when offered, only for what the context lacks."""

# Offer kinds whose ids, when they are exactly those of the context's entity items (or its summaries), go unsaid:
# request_info's description says so.
def _shown(context: QueryContext) -> dict[offers.IdKind, frozenset[str]]:
    entities = [i for i in context.items if i.kind == "entity"]
    return {offers.ENTITIES: frozenset(i.id for i in entities),
            offers.EXPANDABLE: frozenset(i.id for i in entities if not i.full)}


def render_context(context: QueryContext) -> str:
    """The question, each item once (`kind id (date): text`, a turn with a `re:` line: the end of the turn it
    replies to), and the conversation lines no item already shows."""
    parts = [f"Question: {context.question}", "", "Context items (kind id: text):"]
    parts += [f"- {i.kind} {i.id}{_when(i.occurred_at)}: {i.text}" + (f"\n  re: {i.replying_to}" if i.replying_to
                                                                         else "") for i in context.items] or ["- (none)"]
    conversation = unshown_conversation(context)
    if conversation:
        parts += ["", "Recent conversation:", *conversation]
    return "\n".join(parts)


def messages(context: QueryContext, remaining_info_requests: int | None) -> list[dict[str, str]]:
    text = render_context(context)
    if remaining_info_requests is not None:
        listed = offers.offer(context).describe(shown=_shown(context))
        text += ("\n\nThis round's ids:\n" + "\n".join(listed) if listed else "") \
            + f"\n\nInfo requests remaining: {remaining_info_requests}."
    else:
        text += "\n\nNo more information can be requested: answer now with what you have."
    if context.missing:
        text += "\n\nCould not be looked up: " + "; ".join(context.missing) + ". Say so in the answer."
    return [{"role": "user", "content": text}]


def _when(moment: datetime | None) -> str:
    return f" ({moment.day} {moment:%B %Y})" if moment is not None else ""
