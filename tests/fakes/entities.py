"""An in-memory EntityStore: entities, aliases, mentions, relationships and the ontology, dict-backed.

Names match as PostgreSQL matches them (lowercased, spacing collapsed); the fuzzy stage uses pg_trgm's
trigram similarity, computed here in a few lines. An edge is a user's when one of its facts is theirs, the
world's when no user's fact or event stands behind it (as `engram.adapters.postgres.edges`), read as stored."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from engram.model.common import new_id, utcnow
from engram.model.entities import (
    CanonicalEntity,
    DomainSource,
    EntityAlias,
    EntitySighting,
    NameMatch,
    RecordedMention,
    Relationship,
    Resolution,
)
from engram.model.memories import OntologyPredicate
from tests.fakes.tables import Tables, copy, normalized


def trigrams(text: str) -> set[str]:
    """pg_trgm's trigrams: of each word, padded with two spaces before and one after."""
    grams: set[str] = set()
    for word in normalized(text).split():
        padded = f"  {word} "
        grams |= {padded[i:i + 3] for i in range(len(padded) - 2)}
    return grams


def similarity(a: str, b: str) -> float:
    """pg_trgm's `similarity`: shared trigrams over all trigrams of either."""
    x, y = trigrams(a), trigrams(b)
    return len(x & y) / len(x | y) if x | y else 0.0


class InMemoryEntityStore:
    t: Tables

    # ------------------------------------------------------------ entities and aliases
    def _entity(self, world_id: str, entity: CanonicalEntity) -> CanonicalEntity:
        aliases = sorted({a.alias for a in self.t.aliases
                          if (a.world_id, a.entity_id) == (world_id, entity.entity_id)})
        return entity.model_copy(update={"aliases": aliases}, deep=True)

    def get_entity(self, world_id: str, entity_id: str) -> CanonicalEntity | None:
        entity = self.t.entities.get((world_id, entity_id))
        return self._entity(world_id, entity) if entity else None

    def get_entities(self, world_id: str, entity_ids: Sequence[str]) -> list[CanonicalEntity]:
        return [self._entity(world_id, self.t.entities[(world_id, i)]) for i in dict.fromkeys(entity_ids)
                if (world_id, i) in self.t.entities]

    def find_entity_by_name(self, world_id: str, name: str) -> CanonicalEntity | None:
        named = [e for e in self.t.of_world(self.t.entities, world_id) if normalized(e.name) == normalized(name)]
        return self._entity(world_id, min(named, key=lambda e: e.created_at)) if named else None

    def _aliases(self, world_id: str, user_id: str | None) -> list[EntityAlias]:
        return [a for a in self.t.aliases if a.world_id == world_id and a.user_id in (None, user_id)]

    def find_alias(self, world_id: str, alias: str, user_id: str | None) -> list[EntityAlias]:
        found = [a for a in self._aliases(world_id, user_id) if normalized(a.alias) == normalized(alias)]
        return [copy(a) for a in sorted(found, key=lambda a: (a.user_id is None, -a.confidence))]

    def create_entity(self, world_id: str, name: str, entity_type: str, description: str | None = None, *,
                      origin_event_id: str | None = None) -> CanonicalEntity:
        entity = CanonicalEntity(world_id=world_id, entity_id=new_id("ent"), name=name, entity_type=entity_type,
                                 description=description, created_at=utcnow(), aliases=[name])
        if origin_event_id is not None and (world_id, origin_event_id) not in self.t.events:
            return entity  # the event was erased meanwhile: nothing stored
        self.t.entities[(world_id, entity.entity_id)] = entity.model_copy(update={"aliases": []})
        self.add_alias(EntityAlias(world_id=world_id, entity_id=entity.entity_id, alias=name, confidence=1.0,
                                   source="created"))
        return entity

    def add_alias(self, alias: EntityAlias) -> None:
        if (alias.world_id, alias.entity_id) not in self.t.entities:
            return
        for i, known in enumerate(self.t.aliases):
            if ((known.world_id, known.entity_id, known.user_id, normalized(known.alias))
                    == (alias.world_id, alias.entity_id, alias.user_id, normalized(alias.alias))):
                self.t.aliases[i] = known.model_copy(update={"confidence": max(known.confidence, alias.confidence)})
                break
        else:
            self.t.aliases.append(copy(alias))
        self.t.queue(alias.world_id, "entity", alias.entity_id)

    def list_entities(self, world_id: str, name: str | None, limit: int, definition: str | None = None,
                      min_similarity: float = 0.5) -> list[CanonicalEntity]:
        def named(e: CanonicalEntity) -> bool:
            forms = [e.name] + [a.alias for a in self.t.aliases if (a.world_id, a.entity_id) == (world_id, e.entity_id)]
            return name is None or any(normalized(name) in normalized(f) or similarity(f, name) >= min_similarity
                                       for f in forms)

        def defined(e: CanonicalEntity) -> bool:
            d = normalized(definition or "")
            return definition is None or e.entity_type.lower() == d or d in (e.description or "").lower()

        found = [e for e in self.t.of_world(self.t.entities, world_id) if named(e) and defined(e)]
        found.sort(key=lambda e: (-(similarity(e.name, name) if name else 0.0), e.name))
        return [self._entity(world_id, e) for e in found[:limit]]

    def entity_aliases(self, world_id: str, entity_id: str, user_id: str | None) -> list[EntityAlias]:
        return [copy(a) for a in self.t.aliases if (a.world_id, a.entity_id) == (world_id, entity_id)
                and (user_id is None or a.user_id in (None, user_id))]

    def known_aliases_in(self, world_id: str, phrases: Sequence[str], user_id: str | None) -> list[str]:
        known = {normalized(a.alias) for a in self._aliases(world_id, user_id)}
        return sorted({normalized(p) for p in phrases} & known)

    # ------------------------------------------------------------ resolution
    def match_name(self, world_id: str, name: str, user_id: str | None, *, fuzzy_min: float, alias_accept: float,
                   limit: int, by_confidence: bool = False) -> list[NameMatch]:
        n = normalized(name)
        exact = [NameMatch(entity_id=e.entity_id, stage="exact", score=1.0)
                 for e in self.t.of_world(self.t.entities, world_id) if normalized(e.name) == n][:limit]
        aliases = [NameMatch(entity_id=a.entity_id, stage="alias", score=a.confidence, user_id=a.user_id,
                             source=a.source) for a in self._aliases(world_id, user_id) if normalized(a.alias) == n]
        if exact or any(m.score > alias_accept for m in aliases):
            return exact + aliases
        fuzzy = [NameMatch(entity_id=a.entity_id, stage="fuzzy", score=similarity(a.alias, n) * (a.confidence if by_confidence else 1.0),
                           user_id=a.user_id, source=a.source) for a in self._aliases(world_id, user_id)]
        fuzzy = sorted((m for m in fuzzy if m.score > fuzzy_min), key=lambda m: -m.score)[: limit * 3]
        return exact + aliases + fuzzy

    def match_names(self, world_id: str, names: Sequence[str], user_id: str | None, *, fuzzy_min: float,
                    alias_accept: float, limit: int, by_confidence: bool = False, walk_depth: int = 0,
                    walk_limit: int = 0) -> list[list[NameMatch]]:
        def read(m: NameMatch) -> NameMatch:
            entity = self.t.entities.get((world_id, m.entity_id))
            near = tuple(self.connected_entities(world_id, [m.entity_id], walk_depth, walk_limit, user_id=user_id)) \
                if walk_depth > 0 else None
            return m.model_copy(update={"external_ref": entity.external_ref if entity else None, "near": near})
        return [[read(m) for m in self.match_name(world_id, name, user_id, fuzzy_min=fuzzy_min, alias_accept=alias_accept,
                                                  limit=limit, by_confidence=by_confidence)] for name in names]

    def entities_named_from(self, world_id: str, words: str, limit: int) -> list[CanonicalEntity]:
        n = normalized(words)
        named = {a.entity_id for a in self.t.aliases
                 if a.world_id == world_id and (normalized(a.alias) == n or normalized(a.alias).startswith(n + " "))}
        found = [e for e in self.t.of_world(self.t.entities, world_id)
                 if e.entity_id in named or normalized(e.name).startswith(n + " ")]
        return [self._entity(world_id, e) for e in sorted(found, key=lambda e: e.created_at)[:limit]]

    def entity_usage(self, world_id: str, entity_ids: Sequence[str]) -> dict[str, tuple[str, int, datetime | None]]:
        usage: dict[str, tuple[str, int, datetime | None]] = {}
        for entity_id in entity_ids:
            entity = self.t.entities.get((world_id, entity_id))
            if entity is not None:
                seen = [m.created_at for m in self.t.of_world(self.t.mentions, world_id) if m.entity_id == entity_id]
                usage[entity_id] = (entity.name, len(seen), max(seen, default=None))
        return usage

    def find_entity_by_external_ref(self, world_id: str, external_ref: str) -> CanonicalEntity | None:
        found = [e for e in self.t.of_world(self.t.entities, world_id) if e.external_ref == external_ref]
        return self._entity(world_id, found[0]) if found else None

    def set_external_ref(self, world_id: str, entity_id: str, external_ref: str) -> CanonicalEntity | None:
        entity = self.t.entities.get((world_id, entity_id))
        if entity is not None and entity.external_ref is None and \
                self.find_entity_by_external_ref(world_id, external_ref) is None:
            entity.external_ref = external_ref
        return self.find_entity_by_external_ref(world_id, external_ref)

    def create_entity_with_ref(self, world_id: str, name: str, entity_type: str, external_ref: str,
                               description: str | None = None, alias_source: str = "created") -> CanonicalEntity:
        known = self.find_entity_by_external_ref(world_id, external_ref)
        if known is not None:
            return known
        entity = CanonicalEntity(world_id=world_id, entity_id=new_id("ent"), name=name, entity_type=entity_type,
                                 description=description, created_at=utcnow(), external_ref=external_ref)
        self.t.entities[(world_id, entity.entity_id)] = entity
        self.add_alias(EntityAlias(world_id=world_id, entity_id=entity.entity_id, alias=name, confidence=1.0,
                                   source=alias_source))  # type: ignore[arg-type]
        return self._entity(world_id, entity)

    def record_resolutions(self, world_id: str, resolutions: Sequence[Resolution],
                           aliases: Sequence[EntityAlias] = ()) -> None:
        live = [r for r in resolutions if (world_id, r.mention.event_id) in self.t.events]
        if not live:
            return
        for alias in aliases:
            self.add_alias(alias)
        for r in live:
            event = self.t.events[(world_id, r.mention.event_id)]
            same = [m for m in self.t.of_world(self.t.mentions, world_id)
                    if (m.event_id, m.start, m.end) == (r.mention.event_id, r.mention.start, r.mention.end)]
            mention_id = same[0].mention_id if same else new_id("men")
            self.t.mentions[(world_id, mention_id)] = RecordedMention(
                mention_id=mention_id, world_id=world_id, event_id=event.event_id, user_id=event.user_id,
                conversation_id=event.conversation_id, text=r.mention.text, kind=r.mention.kind, start=r.mention.start,
                end=r.mention.end, entity_id=r.entity_id, method=r.method, confidence=r.confidence,
                candidates=list(r.candidates), created_at=same[0].created_at if same else utcnow())

    def _mentions_in_order(self, world_id: str) -> list[RecordedMention]:
        def when(m: RecordedMention) -> datetime:
            return self.t.events[(world_id, m.event_id)].occurred_at
        return sorted(self.t.of_world(self.t.mentions, world_id), key=lambda m: (when(m), m.event_id, m.start))

    def recorded_mentions(self, world_id: str, event_ids: Sequence[str]) -> list[RecordedMention]:
        return [copy(m) for m in self._mentions_in_order(world_id) if m.event_id in set(event_ids)]

    def get_mention(self, world_id: str, mention_id: str) -> RecordedMention | None:
        mention = self.t.mentions.get((world_id, mention_id))
        return copy(mention) if mention else None

    def pending_disambiguations(self, world_id: str, user_id: str | None, limit: int) -> list[RecordedMention]:
        pending = [m for m in self.t.of_world(self.t.mentions, world_id) if m.method == "disambiguation_required"
                   and user_id in (None, m.user_id)]
        return [copy(m) for m in sorted(pending, key=lambda m: (m.created_at, m.mention_id))[:limit]]

    def set_mention_entities(self, world_id: str, updates: Sequence[tuple[str, str, str, float]]) -> None:
        for mention_id, entity_id, method, confidence in updates:
            mention = self.t.mentions.get((world_id, mention_id))
            if mention is not None and (world_id, entity_id) in self.t.entities:
                mention.entity_id, mention.method, mention.confidence = entity_id, method, confidence  # type: ignore[assignment]

    def event_entity_ids(self, world_id: str, event_ids: Sequence[str]) -> dict[str, list[str]]:
        found: dict[str, list[str]] = {}
        for m in self._mentions_in_order(world_id):
            if m.event_id in set(event_ids) and m.entity_id is not None:
                found.setdefault(m.event_id, [])
                if m.entity_id not in found[m.event_id]:
                    found[m.event_id].append(m.entity_id)
        return found

    def conversation_sightings(self, world_id: str, conversation_id: str, until: datetime,
                               limit: int) -> list[EntitySighting]:
        sightings = []
        for m in reversed(self._mentions_in_order(world_id)):
            event = self.t.events[(world_id, m.event_id)]
            entity = self.t.entities.get((world_id, m.entity_id or ""))
            if entity is not None and event.conversation_id == conversation_id and event.occurred_at <= until:
                sightings.append(EntitySighting(entity_id=entity.entity_id, name=entity.name,
                                                entity_type=entity.entity_type, event_id=m.event_id,
                                                occurred_at=event.occurred_at, start=m.start))
        return sightings[:limit]

    # ------------------------------------------------------------ the graph
    def _sees(self, rel: Relationship, user_id: str | None) -> bool:
        """A user sees their own edges and the world's (see the module docstring)."""
        if user_id is None:
            return True
        facts = [self.t.facts[(rel.world_id, i)] for i in rel.source_memory_ids if (rel.world_id, i) in self.t.facts]
        if facts:
            return any(f.user_id == user_id for f in facts)
        events = [self.t.events[(rel.world_id, i)] for i in rel.evidence_event_ids
                  if (rel.world_id, i) in self.t.events]
        return not events or any(e.user_id == user_id for e in events)

    def _edges(self, world_id: str, user_id: str | None) -> list[Relationship]:
        return [r for r in self.t.of_world(self.t.relationships, world_id) if self._sees(r, user_id)]

    def upsert_relationship(self, rel: Relationship) -> Relationship:
        for known in self.t.of_world(self.t.relationships, rel.world_id):
            if (known.source_entity_id, known.relation, known.target_entity_id) == \
                    (rel.source_entity_id, rel.relation, rel.target_entity_id):
                known.confidence = max(known.confidence, rel.confidence)
                known.evidence_event_ids = sorted({*known.evidence_event_ids, *rel.evidence_event_ids})
                known.source_memory_ids = sorted({*known.source_memory_ids, *rel.source_memory_ids})
                return copy(known)
        self.t.relationships[(rel.world_id, rel.relationship_id)] = copy(rel)
        return copy(rel)

    def relationships(self, world_id: str, entity_id: str, depth: int, *,
                      user_id: str | None = None) -> list[Relationship]:
        edges = self._edges(world_id, user_id)
        reached, frontier = {entity_id}, {entity_id}
        for _hop in range(depth - 1):
            frontier = {e for r in edges if {r.source_entity_id, r.target_entity_id} & frontier
                        for e in (r.source_entity_id, r.target_entity_id)} - reached
            reached |= frontier
        return [copy(r) for r in edges if {r.source_entity_id, r.target_entity_id} & reached]

    def neighbours(self, world_id: str, entity_ids: Sequence[str], *,
                   user_id: str | None = None) -> list[Relationship]:
        return [copy(r) for r in self._edges(world_id, user_id)
                if r.source_entity_id in entity_ids or r.target_entity_id in entity_ids]

    def connected_entities(self, world_id: str, seeds: Sequence[str], depth: int, limit: int, *,
                           user_id: str | None = None) -> list[tuple[str, int]]:
        edges = self._edges(world_id, user_id)
        hops: dict[str, int] = dict.fromkeys(seeds, 0)
        frontier = set(seeds)
        for hop in range(1, depth + 1):
            frontier = {e for r in edges if {r.source_entity_id, r.target_entity_id} & frontier
                        for e in (r.source_entity_id, r.target_entity_id)} - set(hops)
            hops.update(dict.fromkeys(frontier, hop))
        return sorted(((e, n) for e, n in hops.items() if e not in seeds), key=lambda x: (x[1], x[0]))[:limit]

    def relations_of(self, world_id: str, entity_ids: Sequence[str], *,
                     user_id: str | None = None) -> list[EntitySighting]:
        found = []
        for r in sorted(self._edges(world_id, user_id), key=lambda r: -r.confidence):
            source = self.t.entities.get((world_id, r.source_entity_id))
            if source is not None and r.target_entity_id in entity_ids and r.relation.endswith("_of"):
                found.append(EntitySighting(entity_id=source.entity_id, name=source.name,
                                            entity_type=source.entity_type, relation=r.relation[:-3],
                                            related_entity_id=r.target_entity_id))
        return found

    def drop_relationship_source(self, world_id: str, memory_id: str) -> int:
        removed = 0
        for key, r in list(self.t.relationships.items()):
            if key[0] == world_id and memory_id in r.source_memory_ids:
                r.source_memory_ids = [i for i in r.source_memory_ids if i != memory_id]
                if not r.source_memory_ids:
                    del self.t.relationships[key]
                    removed += 1
        return removed

    # ------------------------------------------------------------ the domain and its ontology
    def domain_sources(self, world_id: str) -> list[DomainSource]:
        return sorted(self.t.of_world(self.t.domain_sources, world_id), key=lambda s: s.entity_type)

    def upsert_domain_source(self, world_id: str, source: DomainSource, description: str | None = None) -> None:
        self.t.domain_sources[(world_id, source.entity_type)] = source

    def ontology_predicates(self, world_id: str) -> list[OntologyPredicate]:
        return sorted(self.t.of_world(self.t.predicates, world_id), key=lambda p: p.concept)

    def upsert_ontology_predicate(self, world_id: str, predicate: OntologyPredicate) -> None:
        self.t.predicates[(world_id, predicate.concept)] = predicate
