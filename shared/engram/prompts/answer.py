"""The answer prompt. The system text (instructions and the capability definitions) is the same for
every query, so the provider caches it; what changes per round (the context, this round's allowed
ids) is in the user message."""

from __future__ import annotations

from engram.model.context import QueryContext
from engram.query import offer as offers


def capability_lines() -> list[str]:
    """One line per registered capability: its name, its parameters and what it does."""
    return [f"- {c.name} {c.signature}: {c.summary}" for c in offers.CAPABILITIES.values()]


CAPABILITIES = ("Capabilities (request_info.info_requests[].capability, with params):\n"
                + "\n".join(capability_lines()) + "\n\n")

SYSTEM = """You answer questions from an agent's long-term memory, like a careful colleague.

Use only the context items of the user message. Cite every item you rely on by its id in `sources`,
with its contribution (the share of the answer resting on it). Give a confidence in [0, 1] that
reflects how directly the items support the answer: 0.75 and above only when an item states it,
below 0.45 when you are inferring. When the items do not support an answer, say plainly what is
unknown, with low confidence, instead of guessing. Suggest up to three follow-up questions the
memory could answer.

An entity item marked [summary] shows only its name and definition; its full record (aliases, facts,
relationships) comes from expand_entity. When the context lacks something you need and the
request_info tool is offered, ask for exactly that through the capabilities below, using only the
ids the user message allows this round; a request naming any other id ends the loop.

""" + CAPABILITIES + """In the same call, list in `question_signals` what the question itself carries (DecisionIntent,
Claim, Goal, Constraint, Assumption, Question, EvidenceMention), or nothing."""


def render_context(context: QueryContext) -> str:
    parts = [f"Question: {context.question}", "", "Context items (kind id: text):"]
    parts += [f"- {i.kind} {i.id}: {i.text}" for i in context.items] or ["- (none)"]
    if context.conversation:
        parts += ["", "Recent conversation:", *context.conversation]
    return "\n".join(parts)


def messages(context: QueryContext, remaining_info_requests: int | None) -> list[dict[str, str]]:
    text = render_context(context)
    if remaining_info_requests is not None:
        text += ("\n\nThis round's capabilities and the ids they allow:\n"
                 + "\n".join(offers.offer(context).describe())
                 + f"\n\nInfo requests remaining: {remaining_info_requests}.")
    else:
        text += "\n\nNo more information can be requested: answer now with what you have."
    if context.missing:
        text += "\n\nCould not be looked up: " + "; ".join(context.missing) + ". Say so in the answer."
    return [{"role": "user", "content": text}]
