"""The compaction digest prompt (seed 003, Context Thinning: "80k tokens: LLM compaction digest"): the research
context as gathered, every item by kind and id, and the whole conversation; the reply condenses them."""

from __future__ import annotations

from engram.model.context import QueryContext

SYSTEM = """You compact the context a research agent gathered from its long-term memory, which has grown
too large. Keep every fact, name, number and date the question could need; drop repetition, filler and
greetings. Report through the digest_context tool:
- conversation: the recent conversation digested into at most the number of lines the user message
  gives, oldest first, each line saying who said what;
- items: for each context item you can shorten without losing what it states, its kind, its id exactly
  as given and its shorter text. Leave out the items already short: they are kept as they are. Never
  invent an item or an id, and never merge two items into one."""


def messages(context: QueryContext, keep_lines: int) -> list[dict[str, str]]:
    """The question, every item (`kind id: text`) and the whole conversation, with the line budget."""
    parts = [f"Question: {context.question}", "", "Context items (kind id: text):"]
    parts += [f"- {i.kind} {i.id}: {i.text}" for i in context.items] or ["- (none)"]
    parts += ["", "Recent conversation:", *(context.conversation or ["(none)"])]
    parts += ["", f"Digest the conversation into at most {keep_lines} lines."]
    return [{"role": "user", "content": "\n".join(parts)}]
