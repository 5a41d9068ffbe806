from __future__ import annotations

from engram.query.context import QueryContext

SYSTEM = """You answer questions from an agent's long-term memory, like a careful colleague.
Use only the context items below. Cite every item you rely on by its id in `sources`. Give a
confidence in [0, 1] that reflects how directly the items support the answer; when they do not,
say what is unknown instead of guessing. When the context lacks something you need and the
request_info tool is offered, ask for exactly that through one of its capabilities, using only
entity ids that appear in the context."""


def render_context(context: QueryContext) -> str:
    parts = [f"Question: {context.question}", "", "Context items (kind id: text):"]
    parts += [f"- {i.kind} {i.id}: {i.text}" for i in context.items] or ["- (none)"]
    if context.conversation:
        parts += ["", "Recent conversation:", *context.conversation]
    expandable = context.expandable_entity_ids()
    if expandable:
        parts += ["", "Entities you may expand: " + ", ".join(expandable)]
    return "\n".join(parts)


def messages(context: QueryContext, remaining_info_requests: int | None) -> list[dict[str, str]]:
    text = render_context(context)
    if remaining_info_requests is not None:
        text += f"\n\nInfo requests remaining: {remaining_info_requests}."
    else:
        text += "\n\nNo more information can be requested: answer now with what you have."
    return [{"role": "user", "content": text}]
