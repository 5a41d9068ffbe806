"""The offline model's research answer: each sub-question's short answer (engram.adapters.offline.answers), each
conflicting pair named with both sides, what memory does not hold said."""

from __future__ import annotations

from collections.abc import Sequence

from engram.adapters.offline.answers import UNKNOWN, UNKNOWN_CONFIDENCE, compose, source_kind, unknown
from engram.model.context import QueryContext
from engram.model.queries import Answer, Source
from engram.model.research import EvidenceConflict, SubQuestion


def synthesize(context: QueryContext, sub_questions: Sequence[SubQuestion],
               conflicts: Sequence[EvidenceConflict]) -> Answer:
    """The research answer: each sub-question's short answer, each conflicting pair named with both sides, what
    memory does not hold said; the confidence of the weakest part, lower for conflicts and gaps."""
    parts: list[str] = []
    sources: dict[str, Source] = {}
    unknowns: list[str] = []
    sure: list[float] = []
    for sub in [s for s in sub_questions if s.status != "pending"]:
        found = compose(context, sub.question)
        if found is None:
            unknowns.append(sub.question)
            continue
        sure.append(found.confidence)
        parts.append(f"{sub.question.rstrip('?')}: {found.content} [{', '.join(i.id for i in found.items)}].")
        for item in found.items:
            sources.setdefault(item.id, Source(kind=source_kind(item), id=item.id, excerpt=item.text[:200],
                                               score=round(item.score, 3), contribution=0.5))
    by_id = {i.id: i for i in context.items}
    for conflict in conflicts:
        (a, b), (text_a, text_b) = conflict.ids, conflict.statements
        parts.append(f'Conflicting evidence: "{_clean(text_a)}." [{a}] against "{_clean(text_b)}." [{b}] '
                     f"({_conflict_status(conflict)}).")
        for i in (a, b):
            if i in by_id:
                sources.setdefault(i, Source(kind=source_kind(by_id[i]), id=i, excerpt=by_id[i].text[:200],
                                             score=by_id[i].score, contribution=0.1))
    if unknowns:
        parts.append("Memory holds nothing that answers: " + "; ".join(unknowns) + ".")
    if not sure:
        return unknown().model_copy(update={"sources": list(sources.values()), "content": " ".join(parts) or UNKNOWN})
    share = len(sure) / (len(sure) + len(unknowns))
    confidence = min(sure) * share * (0.8 if conflicts else 1.0)
    return Answer(content=" ".join(parts), confidence=round(max(UNKNOWN_CONFIDENCE, confidence), 2),
                  sources=list(sources.values()), suggested_follow_ups=unknowns[:3])


def _conflict_status(conflict: EvidenceConflict) -> str:
    if conflict.status == "open":
        return "an open conflict: memory has not settled which is true"
    if conflict.status == "resolved":
        kept = f"[{conflict.winner_id}] was kept" if conflict.winner_id else "both were kept"
        return f"a settled conflict: {kept}"
    return "not recorded as a conflict; both are still held"


def _clean(text: str) -> str:
    return " ".join(text.split()).rstrip(".")
