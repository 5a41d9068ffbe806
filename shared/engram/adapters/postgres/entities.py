"""PostgreSQL repository: canonical entities and their aliases (pg_trgm), domain sources and the ontology.
Mentions are in `mentions.py`, relationships in `relationships.py`."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from psycopg import Cursor

from engram.adapters.postgres.base import PostgresBase, Row, normalize_name
from engram.adapters.postgres.evidence import existing, live_events, user_stands
from engram.adapters.postgres.graph import walk_sql
from engram.model.common import new_id, utcnow
from engram.model.entities import (
    CanonicalEntity,
    DomainSource,
    EntityAlias,
    NameMatch,
)
from engram.model.memories import OntologyPredicate

_ENTITY = (
    "e.world_id, e.entity_id, e.name, e.entity_type, e.description, e.created_at, e.external_ref, "
    "coalesce((SELECT array_agg(DISTINCT a.alias) FROM entity_aliases a WHERE a.world_id = e.world_id "
    "AND a.entity_id = e.entity_id), '{}') AS aliases"
)
_ALIAS = "world_id, entity_id, alias, nullif(user_id, '') AS user_id, confidence, source"
_USER_REF = "user:"  # the external reference of a user's own entity: "user:<user_id>"
# The fast path in one statement: the canonical name and the aliases equal to the text (global and the
# user's own, which break a tie between two entities of one name); then, only when neither found a confident
# match, trigram neighbours: an exact or alias hit never pays for the trigram scan. The trigram stage goes through
# `engram_fuzzy_aliases` (migrations 0008, 0024), which keeps the trigram index usable under row-level security.
_MATCH = """
WITH exact (entity_id, stage, score, user_id, source) AS (
    SELECT e.entity_id, 'exact', 1.0::float8, NULL::text, 'created' FROM canonical_entities e
    WHERE e.world_id = %(w)s AND e.normalized_name = %(n)s LIMIT %(k)s
), alias (entity_id, stage, score, user_id, source) AS (
    SELECT a.entity_id, 'alias', a.confidence::float8, nullif(a.user_id, ''), a.source FROM entity_aliases a
    WHERE a.world_id = %(w)s AND a.normalized_alias = %(n)s AND a.user_id IN ('', %(u)s)
), fuzzy (entity_id, stage, score, user_id, source) AS (
    SELECT f.entity_id, 'fuzzy', f.score, f.user_id, f.source
    FROM engram_fuzzy_aliases(%(n)s, %(u)s, %(fuzzy_min)s, %(k_fuzzy)s, %(by_confidence)s) f
    WHERE NOT EXISTS (SELECT 1 FROM exact) AND NOT EXISTS (SELECT 1 FROM alias WHERE alias.score > %(accept)s)
)
SELECT * FROM exact UNION ALL SELECT * FROM alias UNION ALL SELECT * FROM fuzzy
"""
# The same for a search's question, each match with its entity's external reference and, when %(d)s > 0, the entities
# within %(d)s hops of it (on the edges user %(eu)s sees, every edge when NULL), nearest first by (hops, id), at most
# %(kw)s: the walk the graph brain starts from, in the same round trip (`graph.weights_near`). The rows the cascade
# cannot choose (trigram neighbours when there are several) are not walked.
_MATCH_NEAR = _MATCH.replace(
    "SELECT * FROM exact UNION ALL SELECT * FROM alias UNION ALL SELECT * FROM fuzzy",
    ", m AS MATERIALIZED (SELECT row_number() OVER () AS i, u.* FROM ("
    "SELECT * FROM exact UNION ALL SELECT * FROM alias UNION ALL SELECT * FROM fuzzy) u), "
    "near AS (SELECT d.entity_id, x.near, x.near_hops FROM (SELECT DISTINCT entity_id FROM m WHERE stage <> 'fuzzy' "
    " OR (SELECT count(DISTINCT entity_id) FROM fuzzy) = 1) d CROSS JOIN LATERAL ("
    " SELECT coalesce(array_agg(y.entity_id ORDER BY y.hops, y.entity_id COLLATE \"C\"), '{}') AS near, "
    " coalesce(array_agg(y.hops ORDER BY y.hops, y.entity_id COLLATE \"C\"), '{}') AS near_hops FROM ("
    f"  {walk_sql('SELECT d.entity_id, 0', 'entity_id <> d.entity_id', user='%(eu)s', limit='%(kw)s')}) y) x "
    "WHERE %(d)s > 0) "
    "SELECT m.entity_id, m.stage, m.score, m.user_id, m.source, (SELECT c.external_ref FROM canonical_entities c "
    "WHERE c.world_id = %(w)s AND c.entity_id = m.entity_id) AS external_ref, near.near, near.near_hops "
    "FROM m LEFT JOIN near ON near.entity_id = m.entity_id ORDER BY m.i")
assert _MATCH_NEAR != _MATCH


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
            upsert_alias(cur, alias)

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

    # ------------------------------------------------------------ resolution
    def match_name(self, world_id: str, name: str, user_id: str | None, *, fuzzy_min: float, alias_accept: float,
                   limit: int, by_confidence: bool = False) -> list[NameMatch]:
        params = {"w": world_id, "n": normalize_name(name), "u": user_id or "", "k": limit, "k_fuzzy": limit * 3,
                  "fuzzy_min": fuzzy_min, "accept": alias_accept, "by_confidence": by_confidence}
        with self.tx(world_id) as cur, cur.connection.pipeline():  # both statements in one round trip
            # The trigram index prunes with this threshold: at pg_trgm's default (0.3) it would hand far more
            # rows to the recheck than the cascade ever keeps.
            cur.execute("SELECT set_config('pg_trgm.similarity_threshold', %s, true)", (str(fuzzy_min),))
            cur.execute(_MATCH, params)
            rows = cur.fetchall()
        return [NameMatch.model_validate(r) for r in rows]

    def match_names(self, world_id: str, names: Sequence[str], user_id: str | None, *, fuzzy_min: float,
                    alias_accept: float, limit: int, by_confidence: bool = False, walk_depth: int = 0,
                    walk_limit: int = 0) -> list[list[NameMatch]]:
        if not names:
            return []
        base = {"w": world_id, "u": user_id or "", "eu": user_id, "k": limit, "k_fuzzy": limit * 3,
                "fuzzy_min": fuzzy_min, "accept": alias_accept, "by_confidence": by_confidence, "d": walk_depth,
                "kw": walk_limit}
        # One round trip for every name: the trigram threshold (as `match_name`), then a statement per name.
        found = self.read_once(world_id, [
            ("SELECT set_config('pg_trgm.similarity_threshold', %(t)s, true)", {"t": str(fuzzy_min)}),
            *((_MATCH_NEAR, {**base, "n": normalize_name(name)}) for name in names)])
        return [[_near_match(r) for r in rows] for rows in found[1:]]

    def entities_named_from(self, world_id: str, words: str, limit: int) -> list[CanonicalEntity]:
        n = normalize_name(words)
        with self.tx(world_id) as cur:
            # At threshold 1 the trigram branch of engram_entities_named (migration 0008) is an exact alias match.
            cur.execute("SELECT set_config('pg_trgm.similarity_threshold', '1', true)")
            cur.execute(f"SELECT {_ENTITY} FROM canonical_entities e WHERE e.world_id = %s AND e.entity_id IN "
                        "(SELECT engram_entities_named(%s, %s)) ORDER BY e.created_at LIMIT %s",
                        (world_id, n, _like(n)[1:-1] + " %", limit))
            return [CanonicalEntity.model_validate(r) for r in cur.fetchall()]

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

    def entity_aliases(self, world_id: str, entity_id: str, user_id: str | None) -> list[EntityAlias]:
        with self.tx(world_id) as cur:
            cur.execute(f"SELECT {_ALIAS} FROM entity_aliases WHERE world_id = %s AND entity_id = %s "
                        "AND (%s::text IS NULL OR user_id IN ('', %s)) ORDER BY user_id, confidence DESC, alias",
                        (world_id, entity_id, user_id, user_id))
            return [EntityAlias.model_validate(r) for r in cur.fetchall()]

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


def _near_match(row: Row) -> NameMatch:
    """A row of `_MATCH_NEAR`: its walk's two arrays as (entity id, hops) pairs."""
    near, hops = row.pop("near"), row.pop("near_hops")
    return NameMatch.model_validate({**row, "near": None if near is None else tuple(zip(near, hops, strict=True))})


def upsert_alias(cur: Cursor[Row], alias: EntityAlias) -> None:
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

def _like(text: str) -> str:
    """A LIKE pattern for text contained anywhere, its own wildcards taken literally."""
    return "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
