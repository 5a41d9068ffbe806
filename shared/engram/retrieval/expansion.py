"""The expansion brain: multi-hop and time-aware turns, reached from the question's entities.

The graph brain ranks what the reached entities touch by how near the question each document reads. Evidence
of a question that crosses a hop ("where does the sister of Ana's boss live?") or gathers several turns ("what
activities does Dana do?") often reads far from the question: the turn that says "my boss Rui ..." shares no
word with "where does ... live". This brain follows the links instead, in one round trip (`linked_turns`): the
turns that state a fact whose subject or object the walk reached (the linking facts, whatever their status now:
the turn said it), the evidence turns of the reached entities' relationships, the turns that name two reached
entities together, and the seeds' own words. Each turn weighs its entity's graph weight (times the linking
fact's similarity to the question); it is ranked by that weight times how near it reads, plus the share of the
question's words it contains, plus a lift for a turn that says when something happened (more for a question
asking when). (One turn per session before the second of any was tried: evidence clusters in sessions, and
LoCoMo's multi-hop Recall@10 of this brain alone fell from 0.555 to 0.453.)
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from typing import Protocol

from engram.model.heuristics import Heuristics
from engram.model.search import LinkedTurn, SemanticHit
from engram.retrieval.features import dated
from engram.rules.text import content_terms

# A question asking when, or how long ago or for how long: its answer is a turn's date.
_ASKS_WHEN = re.compile(r"\b(?:when|what\s+(?:date|day|month|year|time)|which\s+(?:date|day|month|year)|"
                        r"how\s+long|how\s+many\s+(?:days|weeks|months|years))\b", re.I)




class ExpansionStore(Protocol):
    """What the expansion brain reads (of `RetrievalStore`)."""

    def linked_turns(self, world_id: str, entity_weights: dict[str, float], embedding: Sequence[float], *,
                     user_id: str | None, limit: int, context_weight: float = 0.0) -> list[LinkedTurn]: ...


class ExpansionPorts(Protocol):
    """The ports the expansion brain uses."""

    @property
    def store(self) -> ExpansionStore: ...


def asks_when(question: str) -> bool:
    """Whether the question asks when something happened (or how long ago, or for how long)."""
    return _ASKS_WHEN.search(question) is not None


def expansion_brain(clients: ExpansionPorts, world_id: str, question: str, weights: dict[str, float],
                    vector: Sequence[float], *, user_id: str | None, h: Heuristics,
                    names: Collection[str] = ()) -> list[SemanticHit]:
    """The turns linked to the weighted entities (`entity_weights`: the seeds and the walk), best first, at most
    `search_expansion_limit`; empty when the question names no known entity. `names`: the question's entity
    names, which are no words to match (every turn of theirs is linked already)."""
    if not weights or h.retrieval.search_expansion_limit <= 0:
        return []
    turns = clients.store.linked_turns(world_id, weights, vector, user_id=user_id,
                                       limit=max(h.retrieval.search_candidates, h.retrieval.search_expansion_limit),
                                       context_weight=h.retrieval.search_context_weight)
    return rank_turns(question, turns, h, names=names)


def rank_turns(question: str, turns: Sequence[LinkedTurn], h: Heuristics, *,
               names: Collection[str] = ()) -> list[SemanticHit]:
    """Pure: the turns scored (weight x similarity + words shared + dated), best first, at most
    `search_expansion_limit`."""
    retrieval = h.retrieval
    named = {t for name in names for t in content_terms(name)}
    terms = content_terms(question) - named
    lift = retrieval.search_expansion_when_weight if asks_when(question) else retrieval.search_expansion_dated_weight
    best: dict[str, tuple[float, LinkedTurn]] = {}
    for turn in turns:
        shared = len(terms & content_terms(turn.text)) / len(terms) if terms else 0.0
        score = turn.weight * max(0.0, turn.similarity) + retrieval.search_expansion_term_weight * shared
        if turn.event_id not in best or score > best[turn.event_id][0]:
            best[turn.event_id] = (score, turn)
    limit = retrieval.search_expansion_limit
    ranked = sorted(best.values(), key=lambda st: (-st[0], st[1].event_id))
    if lift > 0 and ranked:
        # Only a turn the lift can carry into the list is read for dates (the regexes are the brain's main cost).
        floor = ranked[min(limit, len(ranked)) - 1][0] - lift
        ranked = sorted(((s + lift if s >= floor and _dated(t) else s, t) for s, t in ranked),
                        key=lambda st: (-st[0], st[1].event_id))
    ranked = ranked[:limit]
    return [SemanticHit(doc_id=t.event_id, kind="event", score=s) for s, t in ranked]


def _dated(turn: LinkedTurn) -> bool:
    """The turn says when something happened: a date or a time expression grounded against when it was said."""
    return dated(turn.text, turn.occurred_at)
