"""PostgreSQL repository: canonical entities, aliases (pg_trgm), mentions and relationships."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from psycopg import Cursor
from psycopg.types.json import Jsonb

from engram.adapters.postgres.base import PostgresBase, Row, normalize_name
from engram.adapters.postgres.edges import edge_columns, seen_edges, visible_edges
from engram.adapters.postgres.evidence import existing, live_events, user_stands
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

_ENTITY = (
    "e.world_id, e.entity_id, e.name, e.entity_type, e.description, e.created_at, e.external_ref, "
    "coalesce((SELECT array_agg(DISTINCT a.alias) FROM entity_aliases a WHERE a.world_id = e.world_id "
    "AND a.entity_id = e.entity_id), '{}') AS aliases"
)
_ALIAS = "world_id, entity_id, alias, nullif(user_id, '') AS user_id, confidence, source"
_REL = ("world_id, relationship_id, source_entity_id, relation, target_entity_id, confidence, "
        "evidence_event_ids, created_at, source_memory_ids")
_USER_REF = "user:"  # the external reference of a user's own entity: "user:<user_id>"
_MENTION = (
    "m.mention_id, m.world_id, m.event_id, ev.user_id, ev.conversation_id, m.mention AS text, m.kind, "
    "m.span_start AS start, m.span_end AS \"end\", m.entity_id, m.method, m.confidence, m.candidates, m.created_at "
    "FROM entity_mentions m JOIN chat_events ev ON ev.world_id = m.world_id AND ev.event_id = m.event_id"
)
# The fast path in one statement: the canonical name and the aliases equal to the text (global and the
# user's own, which break a tie between two entities of one name); then, only when neither found a confident
# match, trigram neighbours: an exact or alias hit never pays for the trigram scan. The trigram stage goes through
# `engram_fuzzy_aliases` (migration 0008), which keeps the trigram index usable under row-level security.
_MATCH = """
WITH exact (entity_id, stage, score, user_id, source) AS (
    SELECT e.entity_id, 'exact', 1.0::float8, NULL::text, 'created' FROM canonical_entities e
    WHERE e.world_id = %(w)s AND e.normalized_name = %(n)s LIMIT %(k)s
), alias (entity_id, stage, score, user_id, source) AS (
    SELECT a.entity_id, 'alias', a.confidence::float8, nullif(a.user_id, ''), a.source FROM entity_aliases a
    WHERE a.world_id = %(w)s AND a.normalized_alias = %(n)s AND a.user_id IN ('', %(u)s)
), fuzzy (entity_id, stage, score, user_id, source) AS (
    SELECT f.entity_id, 'fuzzy', f.score, f.user_id, f.source
    FROM engram_fuzzy_aliases(%(n)s, %(u)s, %(fuzzy_min)s, %(k_fuzzy)s) f
    WHERE NOT EXISTS (SELECT 1 FROM exact) AND NOT EXISTS (SELECT 1 FROM alias WHERE alias.score > %(accept)s)
)
SELECT * FROM exact UNION ALL SELECT * FROM alias UNION ALL SELECT * FROM fuzzy
"""


class EntityRepo(PostgresBase):
    def get_entity(self, world_id: str, entity_id: str) -> CanonicalEntity | None:
        with self.tx(world_id) as cur:
            cur.execute(f"SELECT {_ENTITY} FROM canonical_entities e WHERE e.world_id = %s AND e.entity_id = %s",
                        (world_id, entity_id))
            row = cur.fetchone()
        return CanonicalEntity.model_validate(row) if row else None

    def get_entities(self, world_id: str, entity_ids: Sequence[str]) -> list[CanonicalEntity]:
        with self.tx(world_id) as cur:
            cur.execute(f"SELECT {_ENTITY} FROM canonical_entities e WHERE e.world_id = %s AND e.entity_id = ANY(%s)",
                        (world_id, list(entity_ids)))
            return [CanonicalEntity.model_validate(r) for r in cur.fetchall()]

    def find_entity_by_name(self, world_id: str, name: str) -> CanonicalEntity | None:
        with self.tx(world_id) as cur:
            cur.execute(f"SELECT {_ENTITY} FROM canonical_entities e WHERE e.world_id = %s AND e.normalized_name = %s "
                        "ORDER BY e.created_at LIMIT 1", (world_id, normalize_name(name)))
            row = cur.fetchone()
        return CanonicalEntity.model_validate(row) if row else None

    def find_alias(self, world_id: str, alias: str, user_id: str | None) -> list[EntityAlias]:
        with self.tx(world_id) as cur:
            cur.execute(
                f"SELECT {_ALIAS} FROM entity_aliases WHERE world_id = %s AND normalized_alias = %s "
                "AND user_id IN ('', coalesce(%s, '')) ORDER BY (user_id = '') ASC, confidence DESC",
                (world_id, normalize_name(alias), user_id),
            )
            return [EntityAlias.model_validate(r) for r in cur.fetchall()]

    def create_entity(self, world_id: str, name: str, entity_type: str, description: str | None = None, *,
                      origin_event_id: str | None = None) -> CanonicalEntity:
        """A new canonical entity with its name as a global alias; `origin_event_id` is the event whose words
        made it (an erasure of its user takes it along unless someone else's rows refer to it). When that event
        was erased meanwhile nothing is stored: the entity returned stands for nothing, and every write naming
        it is refused by its own check (evidence.py)."""
        entity = CanonicalEntity(world_id=world_id, entity_id=new_id("ent"), name=name, entity_type=entity_type,
                                 description=description, created_at=utcnow(), aliases=[name])
        with self.tx(world_id) as cur:
            if origin_event_id is not None and not live_events(cur, world_id, [origin_event_id]):
                return entity
            cur.execute(
                "INSERT INTO canonical_entities (world_id, entity_id, name, normalized_name, entity_type, "
                "description, created_at, origin_event_id) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
                (world_id, entity.entity_id, name, normalize_name(name), entity_type, description, entity.created_at,
                 origin_event_id),
            )
            cur.execute(
                "INSERT INTO entity_aliases (world_id, entity_id, alias, normalized_alias, user_id, confidence, source) "
                "VALUES (%s, %s, %s, %s, '', 1.0, 'created') ON CONFLICT DO NOTHING",
                (world_id, entity.entity_id, name, normalize_name(name)),
            )
            cur.execute("INSERT INTO index_outbox (world_id, kind, doc_id, op) VALUES (%s, 'entity', %s, 'upsert')",
                        (world_id, entity.entity_id))
        return entity

    def add_alias(self, alias: EntityAlias) -> None:
        with self.tx(alias.world_id) as cur:
            self._upsert_alias(cur, alias)

    @staticmethod
    def _upsert_alias(cur: Cursor[Row], alias: EntityAlias) -> None:
        """An alias, or a surer confidence for one already known; the entity's index document follows. The events
        that taught it accumulate; one taught by no event ('{}': a user's choice, a domain row) stands for good.
        Nothing is written when the event that taught it, or its entity, was erased meanwhile."""
        origins = [alias.origin_event_id] if alias.origin_event_id else []
        if origins and not live_events(cur, alias.world_id, origins):
            return
        if not existing(cur, alias.world_id, "canonical_entities", "entity_id", [alias.entity_id]):
            return
        cur.execute(
            "INSERT INTO entity_aliases (world_id, entity_id, alias, normalized_alias, user_id, confidence, source, "
            "origin_event_ids) VALUES (%s, %s, %s, %s, %s, %s, %s, %s) "
            "ON CONFLICT (world_id, normalized_alias, entity_id, user_id) "
            "DO UPDATE SET confidence = greatest(entity_aliases.confidence, EXCLUDED.confidence), "
            "origin_event_ids = CASE WHEN entity_aliases.origin_event_ids = '{}' OR EXCLUDED.origin_event_ids = '{}' "
            "THEN '{}' ELSE ARRAY(SELECT DISTINCT x FROM unnest(entity_aliases.origin_event_ids "
            "|| EXCLUDED.origin_event_ids) x ORDER BY x) END",
            (alias.world_id, alias.entity_id, alias.alias, normalize_name(alias.alias), alias.user_id or "",
             alias.confidence, alias.source, origins),
        )
        cur.execute("INSERT INTO index_outbox (world_id, kind, doc_id, op) VALUES (%s, 'entity', %s, 'upsert')",
                    (alias.world_id, alias.entity_id))

    def list_entities(self, world_id: str, name: str | None, limit: int, definition: str | None = None,
                      min_similarity: float = 0.5) -> list[CanonicalEntity]:
        """Entities whose name or an alias contains `name` or is within trigram reach of it (best first), and
        whose type or description names `definition`."""
        params = {"w": world_id, "n": name and normalize_name(name), "n_like": name and _like(normalize_name(name)),
                  "d": definition and normalize_name(definition), "d_like": definition and _like(normalize_name(definition)),
                  "k": limit}
        with self.tx(world_id) as cur:
            cur.execute("SELECT set_config('pg_trgm.similarity_threshold', %s, true)", (str(min_similarity),))
            cur.execute(
                f"SELECT {_ENTITY} FROM canonical_entities e WHERE e.world_id = %(w)s AND (%(n)s::text IS NULL OR "
                "e.entity_id IN (SELECT engram_entities_named(%(n)s, %(n_like)s))) "  # index-backed: migration 0008
                "AND (%(d)s::text IS NULL OR lower(e.entity_type) = %(d)s "
                "OR lower(coalesce(e.description, '')) LIKE %(d_like)s) "
                "ORDER BY CASE WHEN %(n)s::text IS NULL THEN 0 ELSE similarity(e.normalized_name, %(n)s) END DESC, "
                "e.name LIMIT %(k)s", params)
            return [CanonicalEntity.model_validate(r) for r in cur.fetchall()]

    def record_resolutions(self, world_id: str, resolutions: Sequence[Resolution],
                           aliases: Sequence[EntityAlias] = ()) -> None:
        """Mentions of events still stored (an erased one's are left out, with the aliases they taught); a mention
        whose entity was erased meanwhile is recorded unresolved."""
        with self.tx(world_id) as cur:
            live = live_events(cur, world_id, [r.mention.event_id for r in resolutions])
            resolutions = [r for r in resolutions if r.mention.event_id in live]
            if not resolutions:
                return
            entities = existing(cur, world_id, "canonical_entities", "entity_id",
                                [r.entity_id for r in resolutions if r.entity_id is not None])
            resolutions = [r if r.entity_id is None or r.entity_id in entities else
                           r.model_copy(update={"entity_id": None, "method": "unresolved", "confidence": 0.0,
                                                "candidates": []}) for r in resolutions]
            for alias in aliases:
                self._upsert_alias(cur, alias)
            cur.executemany(
                "INSERT INTO entity_mentions (world_id, event_id, mention, kind, span_start, span_end, entity_id, "
                "method, confidence, candidates) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s) "
                "ON CONFLICT (world_id, event_id, span_start, span_end) DO UPDATE SET entity_id = EXCLUDED.entity_id, "
                "method = EXCLUDED.method, confidence = EXCLUDED.confidence, candidates = EXCLUDED.candidates",
                [(world_id, r.mention.event_id, r.mention.text, r.mention.kind, r.mention.start, r.mention.end,
                  r.entity_id, r.method, r.confidence, Jsonb([c.model_dump() for c in r.candidates]))
                 for r in resolutions],
            )

    def event_entity_ids(self, world_id: str, event_ids: Sequence[str]) -> dict[str, list[str]]:
        """The resolved entities mentioned in each event."""
        with self.tx(world_id) as cur:
            cur.execute("SELECT event_id, array_agg(DISTINCT entity_id) AS ids FROM entity_mentions "
                        "WHERE world_id = %s AND event_id = ANY(%s) AND entity_id IS NOT NULL GROUP BY event_id",
                        (world_id, list(event_ids)))
            return {r["event_id"]: list(r["ids"]) for r in cur.fetchall()}

    def upsert_relationship(self, rel: Relationship) -> Relationship:
        """The edge, merged with the one already between its entities. Nothing is written when its evidence, its
        facts or its entities were erased meanwhile (the edge returned is then the one asked for)."""
        with self.tx(rel.world_id) as cur:
            w = rel.world_id
            if (not live_events(cur, w, rel.evidence_event_ids) >= set(rel.evidence_event_ids)
                    or not existing(cur, w, "semantic_memories", "memory_id", rel.source_memory_ids)
                    >= set(rel.source_memory_ids)
                    or len(existing(cur, w, "canonical_entities", "entity_id",
                                    [rel.source_entity_id, rel.target_entity_id]))
                    < len({rel.source_entity_id, rel.target_entity_id})):
                return rel
            cur.execute(
                f"INSERT INTO entity_relationships ({_REL}) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s) "
                "ON CONFLICT (world_id, source_entity_id, relation, target_entity_id) DO UPDATE SET "
                "confidence = greatest(entity_relationships.confidence, EXCLUDED.confidence), "
                "evidence_event_ids = (SELECT array_agg(DISTINCT x) FROM unnest(entity_relationships.evidence_event_ids "
                "|| EXCLUDED.evidence_event_ids) x), "
                "source_memory_ids = (SELECT coalesce(array_agg(DISTINCT x), '{}') FROM "
                "unnest(entity_relationships.source_memory_ids || EXCLUDED.source_memory_ids) x), "
                "updated_at = now() RETURNING " + _REL,
                (rel.world_id, rel.relationship_id, rel.source_entity_id, rel.relation, rel.target_entity_id,
                 rel.confidence, rel.evidence_event_ids, rel.created_at, rel.source_memory_ids),
            )
            row = cur.fetchone()
        return Relationship.model_validate(row)

    def relationships(self, world_id: str, entity_id: str, depth: int, *,
                      user_id: str | None = None) -> list[Relationship]:
        """Relationships reachable from an entity within `depth` hops, either direction: the edges `user_id`
        sees when given (`edges.seen_edges`), every edge of the world otherwise."""
        with self.tx(world_id) as cur:
            cur.execute(
                "WITH RECURSIVE walk(entity_id, hops) AS (SELECT %(e)s::text, 0 UNION "
                " SELECT CASE WHEN r.source_entity_id = w.entity_id THEN r.target_entity_id "
                "  ELSE r.source_entity_id END, w.hops + 1 "
                f" FROM walk w JOIN {visible_edges()} r "
                "  ON r.source_entity_id = w.entity_id OR r.target_entity_id = w.entity_id WHERE w.hops < %(d)s) "
                f"SELECT DISTINCT {edge_columns('r')} FROM {seen_edges()} r WHERE "
                "r.source_entity_id IN (SELECT entity_id FROM walk WHERE hops < %(d)s) "
                "OR r.target_entity_id IN (SELECT entity_id FROM walk WHERE hops < %(d)s)",
                {"w": world_id, "u": user_id, "e": entity_id, "d": depth},
            )
            return [Relationship.model_validate(r) for r in cur.fetchall()]

    # ------------------------------------------------------------ resolution
    def match_name(self, world_id: str, name: str, user_id: str | None, *, fuzzy_min: float, alias_accept: float,
                   limit: int) -> list[NameMatch]:
        params = {"w": world_id, "n": normalize_name(name), "u": user_id or "", "k": limit, "k_fuzzy": limit * 3,
                  "fuzzy_min": fuzzy_min, "accept": alias_accept}
        with self.tx(world_id) as cur, cur.connection.pipeline():  # both statements in one round trip
            # The trigram index prunes with this threshold: at pg_trgm's default (0.3) it would hand far more
            # rows to the recheck than the cascade ever keeps.
            cur.execute("SELECT set_config('pg_trgm.similarity_threshold', %s, true)", (str(fuzzy_min),))
            cur.execute(_MATCH, params)  # not prepared: named statements would pin sessions on RDS Proxy
            rows = cur.fetchall()
        return [NameMatch.model_validate(r) for r in rows]

    def entity_usage(self, world_id: str, entity_ids: Sequence[str]) -> dict[str, tuple[str, int, datetime | None]]:
        with self.tx(world_id) as cur:
            cur.execute("SELECT e.entity_id, e.name, count(m.mention_id) AS n, max(m.created_at) AS last "
                        "FROM canonical_entities e LEFT JOIN entity_mentions m ON m.world_id = e.world_id "
                        "AND m.entity_id = e.entity_id WHERE e.world_id = %s AND e.entity_id = ANY(%s) "
                        "GROUP BY e.entity_id, e.name", (world_id, list(entity_ids)))
            return {r["entity_id"]: (r["name"], int(r["n"]), r["last"]) for r in cur.fetchall()}

    def set_external_ref(self, world_id: str, entity_id: str, external_ref: str) -> CanonicalEntity | None:
        with self.tx(world_id) as cur:
            if external_ref.startswith(_USER_REF) and not user_stands(cur, world_id, external_ref[len(_USER_REF):]):
                return None  # the user was erased meanwhile: no entity becomes theirs
            cur.execute("UPDATE canonical_entities SET external_ref = %s WHERE world_id = %s AND entity_id = %s "
                        "AND external_ref IS NULL AND NOT EXISTS (SELECT 1 FROM canonical_entities o "
                        "WHERE o.world_id = %s AND o.external_ref = %s)",
                        (external_ref, world_id, entity_id, world_id, external_ref))
        return self.find_entity_by_external_ref(world_id, external_ref)

    def find_entity_by_external_ref(self, world_id: str, external_ref: str) -> CanonicalEntity | None:
        with self.tx(world_id) as cur:
            cur.execute(f"SELECT {_ENTITY} FROM canonical_entities e WHERE e.world_id = %s AND e.external_ref = %s",
                        (world_id, external_ref))
            row = cur.fetchone()
        return CanonicalEntity.model_validate(row) if row else None

    def create_entity_with_ref(self, world_id: str, name: str, entity_type: str, external_ref: str,
                               description: str | None = None, alias_source: str = "created") -> CanonicalEntity:
        """Idempotent on the reference: two resolutions racing to create the same entity make one. A user's own
        entity ("user:<id>") is not made for a user erased while a step ran (no event stored, a tombstone): then
        nothing is stored and the entity returned stands for nothing (every write naming it is refused)."""
        with self.tx(world_id) as cur:
            if external_ref.startswith(_USER_REF) and not user_stands(cur, world_id, external_ref[len(_USER_REF):]):
                cur.execute(f"SELECT {_ENTITY} FROM canonical_entities e WHERE e.world_id = %s AND e.external_ref = %s",
                            (world_id, external_ref))
                row = cur.fetchone()
                return CanonicalEntity.model_validate(row) if row else CanonicalEntity(
                    world_id=world_id, entity_id=new_id("ent"), name=name, entity_type=entity_type,
                    description=description, created_at=utcnow(), aliases=[name], external_ref=external_ref)
            cur.execute(
                "INSERT INTO canonical_entities (world_id, entity_id, name, normalized_name, entity_type, description, "
                "external_ref) VALUES (%s, %s, %s, %s, %s, %s, %s) ON CONFLICT (world_id, external_ref) "
                "WHERE external_ref IS NOT NULL DO NOTHING RETURNING entity_id",
                (world_id, new_id("ent"), name, normalize_name(name), entity_type, description, external_ref))
            created = cur.fetchone()
            if created is not None:
                cur.execute(
                    "INSERT INTO entity_aliases (world_id, entity_id, alias, normalized_alias, user_id, confidence, "
                    "source) VALUES (%s, %s, %s, %s, '', 1.0, %s) ON CONFLICT DO NOTHING",
                    (world_id, created["entity_id"], name, normalize_name(name), alias_source))
                cur.execute("INSERT INTO index_outbox (world_id, kind, doc_id, op) VALUES (%s, 'entity', %s, 'upsert')",
                            (world_id, created["entity_id"]))
            cur.execute(f"SELECT {_ENTITY} FROM canonical_entities e WHERE e.world_id = %s AND e.external_ref = %s",
                        (world_id, external_ref))
            return CanonicalEntity.model_validate(cur.fetchone())

    def known_aliases_in(self, world_id: str, phrases: Sequence[str], user_id: str | None) -> list[str]:
        if not phrases:
            return []
        with self.tx(world_id) as cur:
            cur.execute("SELECT DISTINCT normalized_alias FROM entity_aliases WHERE world_id = %s "
                        "AND normalized_alias = ANY(%s) AND user_id IN ('', %s)",
                        (world_id, [normalize_name(p) for p in phrases], user_id or ""))
            return [r["normalized_alias"] for r in cur.fetchall()]

    def recorded_mentions(self, world_id: str, event_ids: Sequence[str]) -> list[RecordedMention]:
        with self.tx(world_id) as cur:
            cur.execute(f"SELECT {_MENTION} WHERE m.world_id = %s AND m.event_id = ANY(%s) "
                        "ORDER BY ev.occurred_at, m.event_id, m.span_start", (world_id, list(event_ids)))
            return [RecordedMention.model_validate(r) for r in cur.fetchall()]

    def get_mention(self, world_id: str, mention_id: str) -> RecordedMention | None:
        with self.tx(world_id) as cur:
            cur.execute(f"SELECT {_MENTION} WHERE m.world_id = %s AND m.mention_id = %s", (world_id, mention_id))
            row = cur.fetchone()
        return RecordedMention.model_validate(row) if row else None

    def pending_disambiguations(self, world_id: str, user_id: str | None, limit: int) -> list[RecordedMention]:
        with self.tx(world_id) as cur:
            cur.execute(f"SELECT {_MENTION} WHERE m.world_id = %s AND m.method = 'disambiguation_required' "
                        "AND (%s::text IS NULL OR ev.user_id = %s) ORDER BY m.created_at, m.mention_id LIMIT %s",
                        (world_id, user_id, user_id, limit))
            return [RecordedMention.model_validate(r) for r in cur.fetchall()]

    def set_mention_entities(self, world_id: str, updates: Sequence[tuple[str, str, str, float]]) -> None:
        if not updates:
            return
        with self.tx(world_id) as cur:
            entities = existing(cur, world_id, "canonical_entities", "entity_id", [u[1] for u in updates])
            updates = [u for u in updates if u[1] in entities]  # an entity erased meanwhile links nothing
            if not updates:
                return
            cur.executemany("UPDATE entity_mentions SET entity_id = %s, method = %s, confidence = %s "
                            "WHERE world_id = %s AND mention_id = %s",
                            [(entity_id, method, confidence, world_id, mention_id)
                             for mention_id, entity_id, method, confidence in updates])

    def conversation_sightings(self, world_id: str, conversation_id: str, until: datetime,
                               limit: int) -> list[EntitySighting]:
        with self.tx(world_id) as cur:
            cur.execute(
                "SELECT m.entity_id, e.name, e.entity_type, m.event_id, ev.occurred_at, m.span_start AS start "
                "FROM chat_events ev JOIN entity_mentions m ON m.world_id = ev.world_id AND m.event_id = ev.event_id "
                "JOIN canonical_entities e ON e.world_id = m.world_id AND e.entity_id = m.entity_id "
                "WHERE ev.world_id = %s AND ev.conversation_id = %s AND ev.occurred_at <= %s "
                "ORDER BY ev.occurred_at DESC, m.span_start DESC LIMIT %s",
                (world_id, conversation_id, until, limit))
            return [EntitySighting.model_validate(r) for r in cur.fetchall()]

    def relations_of(self, world_id: str, entity_ids: Sequence[str], *,
                     user_id: str | None = None) -> list[EntitySighting]:
        with self.tx(world_id) as cur:
            cur.execute(
                "SELECT r.source_entity_id AS entity_id, e.name, e.entity_type, left(r.relation, -3) AS relation, "
                f"r.target_entity_id AS related_entity_id FROM {seen_edges()} r JOIN canonical_entities e "
                "ON e.world_id = r.world_id AND e.entity_id = r.source_entity_id "
                "WHERE r.target_entity_id = ANY(%(e)s) AND r.relation LIKE '%%\\_of' ORDER BY r.confidence DESC",
                {"w": world_id, "u": user_id, "e": list(entity_ids)})
            return [EntitySighting.model_validate(r) for r in cur.fetchall()]

    def entity_aliases(self, world_id: str, entity_id: str, user_id: str | None) -> list[EntityAlias]:
        with self.tx(world_id) as cur:
            cur.execute(f"SELECT {_ALIAS} FROM entity_aliases WHERE world_id = %s AND entity_id = %s "
                        "AND (%s::text IS NULL OR user_id IN ('', %s)) ORDER BY user_id, confidence DESC, alias",
                        (world_id, entity_id, user_id, user_id))
            return [EntityAlias.model_validate(r) for r in cur.fetchall()]

    def neighbours(self, world_id: str, entity_ids: Sequence[str], *,
                   user_id: str | None = None) -> list[Relationship]:
        with self.tx(world_id) as cur:
            cur.execute(f"SELECT {edge_columns('r')} FROM {seen_edges()} r "
                        "WHERE r.source_entity_id = ANY(%(e)s) OR r.target_entity_id = ANY(%(e)s)",
                        {"w": world_id, "u": user_id, "e": list(entity_ids)})
            return [Relationship.model_validate(r) for r in cur.fetchall()]

    def drop_relationship_source(self, world_id: str, memory_id: str) -> int:
        with self.tx(world_id) as cur:
            cur.execute("UPDATE entity_relationships SET source_memory_ids = array_remove(source_memory_ids, %s), "
                        "updated_at = now() WHERE world_id = %s AND %s = ANY(source_memory_ids) "
                        "RETURNING relationship_id, cardinality(source_memory_ids) AS left", (memory_id, world_id, memory_id))
            orphans = [r["relationship_id"] for r in cur.fetchall() if r["left"] == 0]
            if orphans:
                cur.execute("DELETE FROM entity_relationships WHERE world_id = %s AND relationship_id = ANY(%s)",
                            (world_id, orphans))
            return len(orphans)

    def domain_sources(self, world_id: str) -> list[DomainSource]:
        with self.tx(world_id) as cur:
            cur.execute("SELECT concept AS entity_type, source_table, key_column, name_column FROM domain_ontology "
                        "WHERE world_id = %s AND kind = 'entity_type' AND source_table IS NOT NULL ORDER BY concept",
                        (world_id,))
            return [DomainSource.model_validate(r) for r in cur.fetchall()]

    def upsert_domain_source(self, world_id: str, source: DomainSource, description: str | None = None) -> None:
        with self.tx(world_id) as cur:
            cur.execute(
                "INSERT INTO domain_ontology (world_id, kind, concept, description, source_table, key_column, "
                "name_column) VALUES (%s, 'entity_type', %s, %s, %s, %s, %s) ON CONFLICT (world_id, kind, concept) "
                "DO UPDATE SET description = coalesce(EXCLUDED.description, domain_ontology.description), "
                "source_table = EXCLUDED.source_table, key_column = EXCLUDED.key_column, "
                "name_column = EXCLUDED.name_column",
                (world_id, source.entity_type, description, source.source_table, source.key_column, source.name_column))

    def ontology_predicates(self, world_id: str) -> list[OntologyPredicate]:
        with self.tx(world_id) as cur:
            cur.execute("SELECT concept, description, synonyms FROM domain_ontology WHERE world_id = %s "
                        "AND kind = 'predicate' ORDER BY concept", (world_id,))
            return [OntologyPredicate.model_validate(r) for r in cur.fetchall()]

    def upsert_ontology_predicate(self, world_id: str, predicate: OntologyPredicate) -> None:
        with self.tx(world_id) as cur:
            cur.execute(
                "INSERT INTO domain_ontology (world_id, kind, concept, description, synonyms) "
                "VALUES (%s, 'predicate', %s, %s, %s) ON CONFLICT (world_id, kind, concept) DO UPDATE SET "
                "description = coalesce(EXCLUDED.description, domain_ontology.description), "
                "synonyms = EXCLUDED.synonyms",
                (world_id, predicate.concept, predicate.description, list(predicate.synonyms)))


def _like(text: str) -> str:
    """A LIKE pattern for text contained anywhere, its own wildcards taken literally."""
    return "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
