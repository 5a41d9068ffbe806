"""Entity resolution: every mention to a canonical entity, cheaply and deterministically first.

The cascade: exact name, known alias (the user's own before global ones), fuzzy trigram match
(one strong candidate resolves and is learned; several ask the user), coreference for pronouns,
and a new entity for an unknown name. Each resolution records its method and confidence.
"""

from __future__ import annotations

from collections.abc import Sequence

from engram.config import Heuristics
from engram.model.entities import Candidate, CanonicalEntity, EntityAlias, Mention, Resolution
from engram.model.events import StoredEvent
from engram.rules.mentions import PERSON_PRONOUNS, detect_mentions
from engram.service import Clients


def user_entity(clients: Clients, world_id: str, user_id: str) -> CanonicalEntity:
    """The entity standing for a user (what "I" and "my" refer to), created on first sight."""
    entity = clients.store.find_entity_by_name(world_id, user_id)
    return entity or clients.store.create_entity(world_id, user_id, "person", description=f"user {user_id}")


def resolve_name(clients: Clients, world_id: str, name: str, user_id: str | None, h: Heuristics,
                 *, create: bool = True, entity_type: str = "thing") -> tuple[str | None, str, float, list[Candidate]]:
    """(entity_id, method, confidence, candidates) for a name, through the cascade."""
    store = clients.store
    exact = store.find_entity_by_name(world_id, name)
    if exact is not None:
        return exact.entity_id, "exact", 1.0, []
    aliases = [a for a in store.find_alias(world_id, name, user_id) if a.confidence > h.alias_accept]
    if aliases:
        return aliases[0].entity_id, "alias", aliases[0].confidence, []
    similar = store.similar_aliases(world_id, name, h.fuzzy_min, 5)
    if len(similar) == 1 and similar[0][1] > h.fuzzy_single_accept:
        alias, score = similar[0]
        store.add_alias(EntityAlias(world_id=world_id, entity_id=alias.entity_id, alias=name, user_id=user_id,
                                    confidence=round(score, 3), source="fuzzy"))
        return alias.entity_id, "fuzzy", round(score, 3), []
    if similar:
        names = {e.entity_id: e.name for e in _entities(clients, world_id, [a.entity_id for a, _ in similar])}
        candidates = [Candidate(entity_id=a.entity_id, name=names.get(a.entity_id, a.alias), score=round(s, 3))
                      for a, s in similar]
        return None, "disambiguation_required", candidates[0].score, candidates
    if not create:
        return None, "unresolved", 0.0, []
    return store.create_entity(world_id, name, entity_type).entity_id, "created", 1.0, []


_ORG_WORDS = {"inc", "corp", "ltd", "llc", "labs", "robotics", "company", "university", "school", "bank",
              "group", "systems", "technologies", "hospital", "college", "institute"}
_PLACE_PREPOSITIONS = {"in", "at", "to", "from", "near", "visit", "visited", "visiting"}


def guess_entity_type(before: str, name: str) -> str:
    """person, organization or place from the name and the word before it: a rule, good enough to
    choose coreference candidates; the model's extraction refines it."""
    if name.split()[-1].lower() in _ORG_WORDS:
        return "organization"
    previous = before.split()[-1].lower() if before.split() else ""
    return "place" if previous in _PLACE_PREPOSITIONS else "person"


def _entities(clients: Clients, world_id: str, ids: Sequence[str]) -> list[CanonicalEntity]:
    return [e for e in (clients.store.get_entity(world_id, i) for i in ids) if e is not None]


def resolve_mention(clients: Clients, event: StoredEvent, mention: Mention, h: Heuristics) -> Resolution:
    if mention.kind == "name":
        entity_id, method, confidence, candidates = resolve_name(
            clients, event.world_id, mention.text, event.user_id, h,
            entity_type=guess_entity_type(event.content[: mention.start], mention.text))
        return Resolution(mention=mention, method=method, entity_id=entity_id,  # type: ignore[arg-type]
                          confidence=confidence, candidates=candidates)
    if mention.kind == "description":
        known = [a for a in clients.store.find_alias(event.world_id, mention.text, event.user_id)
                 if a.confidence > h.alias_accept]
        if known:
            return Resolution(mention=mention, method="alias", entity_id=known[0].entity_id,
                              confidence=known[0].confidence)
        return Resolution(mention=mention, method="unresolved", entity_id=None, confidence=0.0)
    # Pronouns: only when the conversation has exactly one recent person is the rule sure enough.
    # Everything else waits for the model's coreference stage.
    if mention.text.lower() in PERSON_PRONOUNS:
        recent = clients.store.recent_conversation_entities(event.world_id, event.conversation_id, "person", 2)
        recent = [e for e in recent if e != user_entity(clients, event.world_id, event.user_id).entity_id]
        if len(recent) == 1:
            return Resolution(mention=mention, method="coreference", entity_id=recent[0], confidence=0.75)
    return Resolution(mention=mention, method="unresolved", entity_id=None, confidence=0.0)


def resolve_events(clients: Clients, world_id: str, event_ids: Sequence[str]) -> dict[str, int]:
    """Resolve the mentions of a batch of events; idempotent (mentions are keyed by their span)."""
    h = clients.heuristics_for(world_id)
    events = clients.store.get_events(world_id, event_ids)
    clients.store.set_enrichment(world_id, [e.event_id for e in events], "enriching")
    counts = {"mentions": 0, "resolved": 0, "created": 0, "disambiguation": 0}
    for event in sorted(events, key=lambda e: e.occurred_at):
        user_entity(clients, world_id, event.user_id)
        resolutions = [resolve_mention(clients, event, m, h) for m in detect_mentions(event.event_id, event.content)]
        clients.store.record_resolutions(world_id, resolutions)
        counts["mentions"] += len(resolutions)
        counts["resolved"] += sum(r.entity_id is not None for r in resolutions)
        counts["created"] += sum(r.method == "created" for r in resolutions)
        counts["disambiguation"] += sum(r.method == "disambiguation_required" for r in resolutions)
    return counts
