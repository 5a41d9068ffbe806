"""The answer prompt. The system text (instructions and the capability definitions) is the same for
every query, so the provider caches it; what changes per round (the context, this round's allowed
ids) is in the user message."""

from __future__ import annotations

from engram.model.context import QueryContext
from engram.query import capabilities

CAPABILITIES = """Capabilities (request_info.info_requests[].capability, with params):
- expand_entity {entity_id}: one entity's full record
- expand_entities {entity_ids}: up to five entities' full records
- search_entities {query, limit}: entities the memories matching a text are about, as summaries
- get_entity_by_name {name, limit}: entities whose name or alias is a near spelling of name
- get_relationships {entity_id, depth 1-3}: an entity's relationships, either direction
- list_entity_definitions {}: the kinds of entity the world holds, with counts
- get_entities_by_definition {definition, limit}: entities of one kind, as summaries
- search_memories {query, limit}: memories and events matching a text
- get_conversation_history {conversation_id, limit}: a conversation's latest turns
- get_entity_timeline {entity_id, limit}: an entity's facts in time order
- find_path {from_entity_id, to_entity_id, max_length 1-4}: the relationships linking two entities

"""

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
                 + "\n".join(capabilities.offer(context).describe())
                 + f"\n\nInfo requests remaining: {remaining_info_requests}.")
    else:
        text += "\n\nNo more information can be requested: answer now with what you have."
    if context.missing:
        text += "\n\nCould not be looked up: " + "; ".join(context.missing) + ". Say so in the answer."
    return [{"role": "user", "content": text}]
