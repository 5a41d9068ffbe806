"""The research prompts: plan (sub-questions with capability requests), evaluate (the completeness
check) and synthesize (citations, conflicting evidence named). Each system text is the same for every
query (the provider caches it); the question, the context and this round's ids are in the user message."""

from __future__ import annotations

from collections.abc import Sequence

from engram.model.context import QueryContext
from engram.model.research import EvidenceConflict, SubQuestion
from engram.prompts.answer import capability_lines, render_context
from engram.query import offer as offers

_CAPABILITIES = "Capabilities (each request: capability, with params):\n" + "\n".join(capability_lines()) + "\n\n"

PLAN_SYSTEM = """You plan research in an agent's long-term memory. Break the question into the fewest
sub-questions that together answer it (one per distinct thing to find out), and give each the
capability requests that should answer it: search_entities and search_memories with the words to
look for, expand_entity or get_entity_timeline for an entity the context already names. Use only the
ids the user message allows; any other id is rejected. Report through the plan_research tool, with a
one-sentence rationale.

""" + _CAPABILITIES

EVALUATE_SYSTEM = """You check whether research in an agent's long-term memory is complete. For each
sub-question, decide from the context items alone whether they answer it, and list the ids of those
that are answered. Set complete when every sub-question is answered, or when nothing more could be
found. When follow-ups are allowed and something is missing, give follow-up sub-questions, each with
capability requests different from those already tried, using only the ids the user message allows.
Notes: one sentence on what is still missing. Report through the evaluate_research tool.

""" + _CAPABILITIES

SYNTHESIZE_SYSTEM = """You write the answer to a researched question from an agent's long-term memory.

Use only the context items of the user message. Answer each sub-question that the items answer and
cite every item you rely on by its id in `sources`, with its contribution. Say plainly which
sub-questions memory does not answer. Every conflict listed in the user message (C1, C2...) is
evidence that disagrees: name each one in the answer with both sides and their ids, say whether it is
open or settled, and do not silently pick a side; list the conflicts you named in `conflicts_named`.
Give a confidence in [0, 1]: lower it for open conflicts and unanswered sub-questions. Suggest up to
three follow-up questions. Report through the synthesize_research tool."""


def _sub_questions(sub_questions: Sequence[SubQuestion]) -> list[str]:
    lines = []
    for s in sub_questions:
        tried = ", ".join(f"{r.capability} {r.params}" for r in s.requests)
        lines.append(f"- {s.sub_id} ({s.status}): {s.question} [tried: {tried}; found: "
                     f"{', '.join(s.evidence) or 'nothing'}]")
    return lines


def _allowed(context: QueryContext) -> str:
    return "This round's capabilities and the ids they allow:\n" + "\n".join(offers.offer(context).describe())


def plan_messages(context: QueryContext, max_sub_questions: int) -> list[dict[str, str]]:
    text = (render_context(context) + f"\n\nPlan at most {max_sub_questions} sub-questions.\n\n" + _allowed(context))
    return [{"role": "user", "content": text}]


def evaluate_messages(context: QueryContext, sub_questions: Sequence[SubQuestion], can_continue: bool,
                      max_follow_ups: int) -> list[dict[str, str]]:
    text = render_context(context) + "\n\nSub-questions:\n" + "\n".join(_sub_questions(sub_questions))
    if can_continue:
        text += f"\n\nUp to {max_follow_ups} follow-up sub-questions are allowed.\n\n" + _allowed(context)
    else:
        text += "\n\nNo more research rounds are left: give no follow-ups."
    return [{"role": "user", "content": text}]


def conflict_lines(conflicts: Sequence[EvidenceConflict]) -> list[str]:
    return [f"- C{n} ({c.status}{f', kept {c.winner_id}' if c.winner_id else ''}): {c.ids[0]} \"{c.statements[0]}\" "
            f"against {c.ids[1]} \"{c.statements[1]}\"" for n, c in enumerate(conflicts, 1)]


def synthesize_messages(context: QueryContext, sub_questions: Sequence[SubQuestion],
                        conflicts: Sequence[EvidenceConflict]) -> list[dict[str, str]]:
    text = render_context(context) + "\n\nSub-questions:\n" + "\n".join(_sub_questions(sub_questions))
    text += "\n\nConflicting evidence among the sources:\n" + ("\n".join(conflict_lines(conflicts)) or "(none)")
    return [{"role": "user", "content": text}]
