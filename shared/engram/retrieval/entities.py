"""The entities a query names, found the way resolution finds them (exact name, a confident alias, one
strong trigram neighbour) but read-only: a search never learns an alias or creates an entity."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Protocol

from engram.model.entities import NameMatch
from engram.model.heuristics import Heuristics
from engram.model.search import QueryEntity
from engram.ports.entities import EntityStore
from engram.rules.mentions import detect_mentions

# The names of one question are looked up side by side (each a round trip to the store), not one after another:
# the graph brain waits for them. Its own pool: these tasks start no others, so they cannot wait on themselves.
_LOOKUPS = ThreadPoolExecutor(max_workers=4, thread_name_prefix="engram-names")


class QuestionEntityPorts(Protocol):
    """The ports finding a question's entities uses: the entity store's fast path, read-only."""

    @property
    def store(self) -> EntityStore: ...


def question_entities(clients: QuestionEntityPorts, world_id: str, query: str, user_id: str | None,
                      h: Heuristics) -> list[QueryEntity]:
    """Entities named in the query, in the order named, each once."""
    found: dict[str, QueryEntity] = {}
    names = [mention.text for mention in detect_mentions("query", query) if mention.kind == "name"]

    def lookup(name: str) -> list[NameMatch]:
        return clients.store.match_name(world_id, name, user_id, fuzzy_min=h.resolve.fuzzy_min,
                                        alias_accept=h.resolve.alias_accept, limit=h.resolve.disambiguation_candidates,
                                        by_confidence=h.resolve.fuzzy_by_alias_confidence)

    for name, matches in zip(names, map(lookup, names) if len(names) < 2 else _LOOKUPS.map(lookup, names),
                             strict=True):
        exact = [m for m in matches if m.stage == "exact"]
        aliases = [m for m in matches if m.stage == "alias" and m.score > h.resolve.alias_accept]
        fuzzy = {m.entity_id: m for m in matches if m.stage == "fuzzy"}
        chosen = exact or aliases or ([*fuzzy.values()] if len(fuzzy) == 1 and
                                      next(iter(fuzzy.values())).score > h.resolve.fuzzy_single_accept else [])
        for m in chosen:
            found.setdefault(m.entity_id, QueryEntity(entity_id=m.entity_id, name=name, method=m.stage))
    if not found:
        return []
    # An entity standing for a user (external reference "user:<id>") says whose own words to favour.
    users = {e.entity_id: e.external_ref.removeprefix("user:") for e in clients.store.get_entities(world_id, list(found))
             if e.external_ref and e.external_ref.startswith("user:")}
    return [q.model_copy(update={"user_id": users.get(q.entity_id)}) for q in found.values()]
