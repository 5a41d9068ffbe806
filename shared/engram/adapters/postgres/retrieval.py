"""PostgreSQL repository: what the search reads, and only reads, at query time. The semantic brain
(pgvector HNSW, one ORDER BY ... LIMIT per table so the index serves it, iterative scan so filters keep
full result sets), the candidates' documents with their similarity to the query, the turns around an
event, the documents the graph brain reaches from the question's entities, the turns the expansion brain
reaches through their facts, relationships and co-mentions, and find-similar. Every
statement filters on world_id."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Sequence
from datetime import datetime
from typing import Any

from psycopg import Cursor

from engram.adapters.postgres.base import PostgresBase, to_vector
from engram.adapters.postgres.edges import visible_edges
from engram.adapters.postgres.memories import VALID_AT
from engram.adapters.postgres.search import DOCUMENT_SQL, FACT_DOCUMENT
from engram.model.search import DocKind, IndexDocument, LinkedTurn, SemanticHit

# kind -> (table, id column, extra filter)
_VECTOR_TABLES: dict[str, tuple[str, str, str]] = {
    "event": ("chat_events", "event_id", "TRUE"),
    "episodic": ("episodic_memories", "memory_id", "status = 'active'"),
    "semantic": ("semantic_memories", "memory_id", "status = 'active'"),
    "summary": ("memory_summaries", "summary_id", "TRUE"),
    "procedural": ("procedural_memories", "memory_id", "status = 'active'"),
    "entity": ("canonical_entities", "entity_id", "TRUE"),
}
# Each kind's document columns (`DOCUMENT_SQL`), read in binary: a `real` as the float8 of its text, the value the
# text protocol gives (0.3, where its binary value is 0.30000001192092896).
_DOCUMENT_COLUMNS: dict[str, tuple[str, ...]] = {
    "event": ("doc_id", "text", "user_id", "conversation_id", "speaker", "occurred_at", "importance", "entity_ids",
              "event_ids"),
    "episodic": ("doc_id", "text", "user_id", "conversation_id", "occurred_at", "importance", "entity_ids", "event_ids"),
    "semantic": ("doc_id", "text", "user_id", "occurred_at", "conversation_id", "importance", "entity_ids", "event_ids",
                 "confidence", "reinforcements", "validated_at"),
    "summary": ("doc_id", "text", "user_id", "conversation_id", "occurred_at", "importance", "confidence",
                "validated_at", "event_ids"),
    "procedural": ("doc_id", "text", "user_id", "occurred_at", "importance", "event_ids"),
    "entity": ("doc_id", "text", "entity_ids", "occurred_at"),
}
_COLUMNS = {kind: ", ".join(f"d.{c}::text::float8 AS {c}" if c in ("importance", "confidence") else f"d.{c}"
                            for c in columns) for kind, columns in _DOCUMENT_COLUMNS.items()}
# An event's document with its similarity (`SIMILARITY`, over `e`) in the same select list.
_SCORED_EVENT = DOCUMENT_SQL["event"].replace("AS event_ids FROM chat_events e WHERE",
                                              "AS event_ids, SIMILARITY AS similarity FROM chat_events e WHERE")
assert "SIMILARITY" in _SCORED_EVENT
_NO_USER = ("entity",)  # world-level documents: no user filter applies
_VISIBLE = visible_edges()  # the relationships the user sees (aliased r)


def _similarity(kind: str, context_weight: float) -> str:
    """Cosine similarity to %(q)s; an event blends its own vector with its in-context one."""
    if kind == "event" and context_weight > 0:
        return ("((1 - %(cw)s) * (1 - (embedding <=> %(q)s)) + %(cw)s * "
                "(1 - (coalesce(context_embedding, embedding) <=> %(q)s)))")
    return "(1 - (embedding <=> %(q)s))"


def _user_filter(kind: str, user_id: str | None, alias: str = "") -> str:
    if user_id is None or kind in _NO_USER:
        return "TRUE"
    return f"({alias}user_id = %(u)s OR {alias}user_id IS NULL)"


class RetrievalRepo(PostgresBase):
    def facts_as_of(self, world_id: str, embedding: Sequence[float], as_of: datetime, *, user_id: str | None,
                    limit: int) -> list[tuple[IndexDocument, float]]:
        """The facts true at `as_of` (superseded ones included) nearest the vector, with their documents and
        cosine similarity, best first: the semantic brain's facts for a search as of then."""
        with self.tx(world_id) as cur:
            # A scan of the world's facts true then (the HNSW index serves the current ones): a read of the past.
            cur.execute(f"SELECT d.*, 1 - (t.embedding <=> %(q)s) AS similarity FROM ({FACT_DOCUMENT}"
                        f"WHERE m.world_id = %(w)s AND {VALID_AT.format(m='m.')} "
                        f"AND {_user_filter('semantic', user_id, 'm.')}) d JOIN semantic_memories t "
                        "ON t.world_id = %(w)s AND t.memory_id = d.doc_id WHERE t.embedding IS NOT NULL "
                        "ORDER BY t.embedding <=> %(q)s LIMIT %(k)s",
                        {"q": to_vector(embedding), "w": world_id, "at": as_of, "u": user_id, "k": limit})
            rows = cur.fetchall()
        found = []
        for r in rows:
            sim = float(r.pop("similarity"))
            found.append((IndexDocument.model_construct(world_id=world_id, kind="semantic",
                                                        **{k: v for k, v in r.items() if v is not None}), sim))
        return found

    def semantic_search(self, world_id: str, embedding: Sequence[float], *, user_id: str | None,
                        kinds: Sequence[DocKind], limit: int, min_similarity: float,
                        context_weight: float = 0.0) -> list[SemanticHit]:
        """The nearest rows of each kind by cosine similarity, best first, within the world (and the user's
        own and shared rows). Events are found by their own vector and scored by the blend with their
        in-context one (searching the in-context vectors as well found nothing more on LoCoMo)."""
        if not kinds:
            return []
        params = {"q": to_vector(embedding), "w": world_id, "u": user_id, "k": limit, "cw": context_weight}
        hits: dict[tuple[str, str], float] = {}
        # The world's settings, the HNSW setting and the search in one round trip. The graph search keeps `ef_search`
        # candidates: as many as asked for finds them in one pass (iterative scan still continues past rows a filter
        # drops). One statement: a branch per kind, each served by its own table's index.
        _, rows = self.read_once(world_id, [
            ("SELECT set_config('hnsw.ef_search', %(ef)s, true)", {"ef": str(max(40, min(limit, 1000)))}),
            (" UNION ALL ".join(
                f"(SELECT %(kind_{kind})s AS kind, {id_col} AS id, {_similarity(kind, context_weight)} AS sim "
                f"FROM {table} WHERE world_id = %(w)s AND embedding IS NOT NULL AND {extra} "
                f"AND {_user_filter(kind, user_id)} ORDER BY embedding <=> %(q)s LIMIT %(k)s)"
                for kind in kinds for table, id_col, extra in [_VECTOR_TABLES[kind]]),
             {**params, **{f"kind_{kind}": kind for kind in kinds}})], binary=True)
        for r in rows:
            if float(r["sim"]) >= min_similarity:
                hits[(r["kind"], r["id"])] = float(r["sim"])
        ranked = sorted(hits.items(), key=lambda item: item[1], reverse=True)
        return [SemanticHit(doc_id=doc_id, kind=kind, score=sim) for (kind, doc_id), sim in ranked]  # type: ignore[arg-type]

    def candidate_documents(self, world_id: str, refs: Sequence[tuple[DocKind, str]], embedding: Sequence[float], *,
                            context_weight: float = 0.0) -> list[tuple[IndexDocument, float | None]]:
        """The documents of the rows (as `documents`) with their similarity to the vector (None without a
        vector), in the order asked, missing rows skipped: one statement per kind for the search's candidates."""
        if not refs:
            return []
        wanted: dict[DocKind, list[str]] = defaultdict(list)
        for kind, doc_id in refs:
            wanted[kind].append(doc_id)
        found: dict[tuple[str, str], tuple[IndexDocument, float | None]] = {}
        with self.tx(world_id) as cur:
            for wanted_kind, ids in wanted.items():
                found.update(_scored_documents(cur, world_id, wanted_kind, ids, embedding, context_weight))
        return [found[(k, i)] for k, i in refs if (k, i) in found]

    def adjacent_documents(self, world_id: str, event_ids: Sequence[str], embedding: Sequence[float], *,
                           context_weight: float = 0.0, span: int = 1, known: Collection[str] = ()
                           ) -> tuple[dict[str, list[str]], list[tuple[IndexDocument, float | None]]]:
        """For each event, the `span` events before and after it in its conversation, nearest first; and the
        documents of those neighbours not `known` already (as `candidate_documents`), in one transaction: the
        turns around the search's best events in one step."""
        if not event_ids:
            return {}, []
        with self.tx(world_id) as cur:
            adjacent = _adjacent(cur, world_id, event_ids, span)
            wanted = [n for n in dict.fromkeys(n for near in adjacent.values() for n in near) if n not in known]
            found = _scored_documents(cur, world_id, "event", wanted, embedding, context_weight) if wanted else {}
        return adjacent, [found[("event", n)] for n in wanted if ("event", n) in found]

    def entity_documents(self, world_id: str, entity_weights: dict[str, float], embedding: Sequence[float], *,
                         user_id: str | None, kinds: Sequence[DocKind], limit: int,
                         context_weight: float = 0.0) -> list[SemanticHit]:
        """What the graph reaches from entities: the entities themselves, the facts they are subject or object
        of, the events that name them or that they said (a user's entity), and the episodes they figure in;
        each kind ranked by similarity to the query times its entity's weight (how near the question it is)."""
        if not entity_weights:
            return []
        ids, weights = list(entity_weights), [entity_weights[e] for e in entity_weights]
        params = {"q": to_vector(embedding), "w": world_id, "u": user_id, "k": limit, "e": ids, "ew": weights,
                  "cw": context_weight}
        seeds = "SELECT * FROM unnest(%(e)s::text[], %(ew)s::float8[]) AS s(entity_id, weight)"
        queries: dict[str, str] = {
            "entity": (f"SELECT c.entity_id AS id, max(s.weight) * {_similarity('entity', 0)} AS score "
                       f"FROM ({seeds}) s JOIN canonical_entities c ON c.world_id = %(w)s AND c.entity_id = s.entity_id "
                       "WHERE c.embedding IS NOT NULL GROUP BY c.entity_id, c.embedding"),
            "semantic": (f"SELECT m.memory_id AS id, max(s.weight) * {_similarity('semantic', 0)} AS score "
                         f"FROM ({seeds}) s JOIN semantic_memories m ON m.world_id = %(w)s AND m.status = 'active' "
                         "AND (m.subject_entity_id = s.entity_id OR m.object_entity_id = s.entity_id) "
                         f"WHERE m.embedding IS NOT NULL AND {_user_filter('semantic', user_id, 'm.')} "
                         "GROUP BY m.memory_id, m.embedding"),
            # Each step is materialized and every join is a plain column equality, so that the plan stays an index
            # lookup per row whatever the statistics say (a world just filled has none) and under row-level
            # security (a join on substr(external_ref, 6), not LEAKPROOF, could not use an index: every event of
            # the world was read). A user's own events are many: the nearest `k` of each (by HNSW or by the
            # user's index, the planner's choice), scored from the rows that read holds (the user filter after it, as
            # for the others); only a turn reached by a mention alone is read again, by primary key.
            "event": (f"WITH s AS MATERIALIZED ({seeds}), "
                      "speakers AS MATERIALIZED (SELECT substr(c.external_ref, 6) AS user_id, s.weight FROM s "
                      "JOIN canonical_entities c ON c.world_id = %(w)s AND c.entity_id = s.entity_id "
                      "WHERE c.external_ref LIKE 'user:%%'), "
                      "t AS MATERIALIZED (SELECT event_id, max(weight) AS weight, max(sim) AS sim, "
                      " bool_or(said) AS said FROM ("
                      " SELECT m.event_id, s.weight, NULL::float8 AS sim, false AS said FROM s JOIN entity_mentions m "
                      " ON m.world_id = %(w)s AND m.entity_id = s.entity_id "
                      " UNION ALL SELECT e.event_id, p.weight, CASE WHEN e.visible THEN e.sim END, true "
                      " FROM speakers p CROSS JOIN LATERAL (SELECT n.event_id, "
                      f"  {_similarity('event', context_weight)} AS sim, {_user_filter('event', user_id)} AS visible "
                      "  FROM (SELECT event_id, user_id, embedding, context_embedding FROM chat_events e "
                      "  WHERE e.world_id = %(w)s AND e.user_id = p.user_id AND e.embedding IS NOT NULL "
                      "  ORDER BY e.embedding <=> %(q)s LIMIT %(k)s) n) e) x "
                      " GROUP BY event_id) "
                      "SELECT t.event_id AS id, t.weight * t.sim AS score FROM t WHERE t.sim IS NOT NULL UNION ALL "
                      # One primary-key lookup per event reached by a mention alone (LIMIT 1 keeps the planner from
                      # turning it around into a scan of the user's events, one per reached event, without statistics).
                      f"SELECT ev.id, t.weight * ev.sim AS score FROM t CROSS JOIN LATERAL (SELECT ev.event_id AS id, "
                      f"{_similarity('event', context_weight)} AS sim FROM chat_events ev WHERE ev.world_id = %(w)s "
                      "AND ev.event_id = t.event_id AND ev.embedding IS NOT NULL "
                      f"AND {_user_filter('event', user_id, 'ev.')} LIMIT 1) ev WHERE NOT t.said"),
            # The episodes naming a seed, found on the GIN index by a lookup that row-level security leaves it to
            # (migration 0016), then read by primary key.
            "episodic": (f"SELECT p.memory_id AS id, max(s.weight) * {_similarity('episodic', 0)} AS score "
                         f"FROM ({seeds}) s JOIN engram_episodes_naming(%(e)s::text[]) n "
                         "ON n.entity_ids @> ARRAY[s.entity_id] "
                         "JOIN episodic_memories p ON p.world_id = %(w)s AND p.memory_id = n.memory_id "
                         "AND p.status = 'active' "
                         f"WHERE p.embedding IS NOT NULL AND {_user_filter('episodic', user_id, 'p.')} "
                         "GROUP BY p.memory_id, p.embedding"),
        }
        reached = [kind for kind in kinds if kind in queries]
        if not reached:
            return []
        # One statement, one round trip: the best `k` of each kind, a branch each, in the order of `kinds`.
        [rows] = self.read_once(world_id, [(" UNION ALL ".join(
            f"(SELECT %(kind_{kind})s AS kind, x.id, x.score FROM ({queries[kind]} ORDER BY score DESC "
            "LIMIT %(k)s) x)" for kind in reached), {**params, **{f"kind_{kind}": kind for kind in reached}})],
            binary=True)
        hits = [SemanticHit(doc_id=r["id"], kind=r["kind"], score=float(r["score"])) for r in rows]
        hits.sort(key=lambda h: h.score, reverse=True)
        return hits[:limit]

    def linked_turns(self, world_id: str, entity_weights: dict[str, float], embedding: Sequence[float], *,
                     user_id: str | None, limit: int, context_weight: float = 0.0) -> list[LinkedTurn]:
        """The expansion brain's turns, in one statement: those stating a current fact whose subject or object was
        reached (a turn that states a reached fact since superseded or closed is left out, by any link: it would
        answer with the old value; the other brains still find it), the evidence of the reached entities'
        relationships (the edges the user sees), the turns naming two reached entities, and the nearest `limit` turns each seed user said. A turn
        keeps its strongest link: the nearer end's weight (a fact's times its similarity to the query; two names
        together, the weaker's). The best `limit` by weight times similarity, each with its text."""
        if not entity_weights:
            return []
        ids, weights = list(entity_weights), [entity_weights[e] for e in entity_weights]
        params = {"q": to_vector(embedding), "w": world_id, "u": user_id, "k": limit, "e": ids, "ew": weights,
                  "cw": context_weight}
        facts = _user_filter("semantic", user_id, "m.")
        [rows] = self.read_once(world_id, [(  # one round trip: the search's fusion waits for it
                "WITH s AS MATERIALIZED (SELECT * FROM unnest(%(e)s::text[], %(ew)s::float8[]) AS s(entity_id, weight)), "
                "f AS MATERIALIZED (SELECT memory_id, max(weight) AS weight FROM ("
                " SELECT m.memory_id, s.weight FROM s JOIN semantic_memories m ON m.world_id = %(w)s "
                " AND m.subject_entity_id = s.entity_id UNION ALL "
                " SELECT m.memory_id, s.weight FROM s JOIN semantic_memories m ON m.world_id = %(w)s "
                " AND m.object_entity_id = s.entity_id) x GROUP BY memory_id), "
                "fl AS MATERIALIZED (SELECT unnest(m.source_event_ids) AS event_id, f.weight * greatest(0.0, coalesce("
                " 1 - (m.embedding <=> %(q)s), 0.5)) AS weight, (m.status = 'active' AND m.valid_to IS NULL) AS current "
                f" FROM f JOIN semantic_memories m ON m.world_id = %(w)s AND m.memory_id = f.memory_id WHERE {facts}), "
                "stale AS MATERIALIZED (SELECT DISTINCT event_id FROM fl WHERE NOT current), "
                "links AS MATERIALIZED ("
                " (SELECT event_id, 'fact' AS via, weight FROM fl WHERE current) UNION ALL "
                f" (SELECT unnest(r.evidence_event_ids), 'relationship', s.weight FROM s JOIN {_VISIBLE} r "
                " ON r.source_entity_id = s.entity_id) UNION ALL "
                f" (SELECT unnest(r.evidence_event_ids), 'relationship', s.weight FROM s JOIN {_VISIBLE} r "
                " ON r.target_entity_id = s.entity_id) UNION ALL "
                " (SELECT n.event_id, 'mention', (array_agg(s.weight ORDER BY s.weight DESC))[2] FROM s "
                " JOIN entity_mentions n ON n.world_id = %(w)s AND n.entity_id = s.entity_id GROUP BY n.event_id "
                " HAVING count(DISTINCT n.entity_id) >= 2) UNION ALL "
                " (SELECT e.event_id, 'said', p.weight FROM (SELECT substr(c.external_ref, 6) AS user_id, s.weight "
                " FROM s JOIN canonical_entities c ON c.world_id = %(w)s AND c.entity_id = s.entity_id "
                " WHERE c.external_ref LIKE 'user:%%' AND s.weight >= 1) p CROSS JOIN LATERAL (SELECT event_id "
                " FROM chat_events e WHERE e.world_id = %(w)s AND e.user_id = p.user_id AND e.embedding IS NOT NULL "
                " ORDER BY e.embedding <=> %(q)s LIMIT %(k)s) e)), "
                "t AS MATERIALIZED (SELECT DISTINCT ON (event_id) event_id, via, weight FROM links "
                " WHERE event_id NOT IN (SELECT event_id FROM stale) ORDER BY event_id, weight DESC) "
                "SELECT t.via, t.weight, ev.* FROM t CROSS JOIN LATERAL (SELECT ev.event_id, ev.content AS text, "
                f"ev.user_id, ev.conversation_id, ev.occurred_at, {_similarity('event', context_weight)} AS similarity "
                "FROM chat_events ev WHERE ev.world_id = %(w)s AND ev.event_id = t.event_id AND ev.embedding IS NOT NULL "
                f"AND {_user_filter('event', user_id, 'ev.')} LIMIT 1) ev "
                "ORDER BY t.weight * ev.similarity DESC, ev.event_id LIMIT %(k)s", params)], binary=True)
        return [LinkedTurn.model_validate(r) for r in rows]

    def similar_to(self, world_id: str, kind: DocKind, doc_id: str, *, kinds: Sequence[DocKind], limit: int,
                   min_similarity: float, user_id: str | None = None) -> list[SemanticHit]:
        """Rows nearest to one row's vector (itself excluded), best first: find-similar for a memory or entity.
        For a user, only from a row the user may read, and only among those."""
        table, id_col, _extra = _VECTOR_TABLES[kind]
        with self.tx(world_id) as cur:
            cur.execute(f"SELECT embedding FROM {table} WHERE world_id = %(w)s AND {id_col} = %(d)s "
                        f"AND {_user_filter(kind, user_id)}", {"w": world_id, "d": doc_id, "u": user_id})
            row = cur.fetchone()
        if row is None or row["embedding"] is None:
            return []
        hits = self.semantic_search(world_id, row["embedding"].to_numpy(), user_id=user_id, kinds=kinds,
                                    limit=limit + 1, min_similarity=min_similarity)
        return [h for h in hits if (h.kind, h.doc_id) != (kind, doc_id)][:limit]


def _scored_documents(cur: Cursor[dict[str, Any]], world_id: str, kind: DocKind, ids: list[str],
                      embedding: Sequence[float], context_weight: float
                      ) -> dict[tuple[str, str], tuple[IndexDocument, float | None]]:
    """The documents of one kind's rows with their similarity to the vector, by (kind, id)."""
    table, id_col, _extra = _VECTOR_TABLES[kind]
    vector = to_vector(embedding)
    if kind == "event" and context_weight > 0:
        similarity = ("(1 - %s::float8) * (1 - (t.embedding <=> %s)) + %s::float8 * "
                      "(1 - (coalesce(t.context_embedding, t.embedding) <=> %s))")
        params: tuple[object, ...] = (context_weight, vector, context_weight, vector)
    else:
        similarity, params = "1 - (t.embedding <=> %s)", (vector,)
    # Binary rows: psycopg reads timestamps, arrays and floats in a quarter less time than their text.
    # An event is scored in the row its document is read from: PostgreSQL 18 drops the self-join itself, 16 does not.
    if kind == "event":
        scored = _SCORED_EVENT.replace("SIMILARITY", similarity.replace("t.", "e."))
        cur.execute(f"SELECT {_COLUMNS[kind]}, d.similarity FROM ({scored}) d",
                    (*params, world_id, ids), binary=True)
    else:
        cur.execute(f"SELECT {_COLUMNS[kind]}, {similarity} AS similarity FROM ({DOCUMENT_SQL[kind]}) d "
                    f"JOIN {table} t ON t.world_id = %s AND t.{id_col} = d.doc_id", (*params, world_id, ids, world_id),
                    binary=True)
    found: dict[tuple[str, str], tuple[IndexDocument, float | None]] = {}
    validate = IndexDocument.__pydantic_validator__.validate_python
    for r in cur.fetchall():
        sim = r.pop("similarity")
        # Validated, not constructed: pydantic-core validates a row in half the time `model_construct` fills in
        # the defaults in Python (400 documents a search: about 4 ms less).
        found[(kind, r["doc_id"])] = (
            validate({"world_id": world_id, "kind": kind, **{k: v for k, v in r.items() if v is not None}}),
            None if sim is None else float(sim))
    return found


def _adjacent(cur: Cursor[dict[str, Any]], world_id: str, event_ids: Sequence[str], span: int) -> dict[str, list[str]]:
    cur.execute(
        "SELECT c.event_id AS id, n.event_id AS near FROM chat_events c CROSS JOIN LATERAL ("
        " (SELECT p.event_id, 0 AS side, p.occurred_at FROM chat_events p WHERE p.world_id = c.world_id "
        "   AND p.conversation_id = c.conversation_id AND (p.occurred_at, p.event_id) < (c.occurred_at, c.event_id) "
        "   ORDER BY p.occurred_at DESC, p.event_id DESC LIMIT %(s)s) "
        " UNION ALL "
        " (SELECT p.event_id, 1, p.occurred_at FROM chat_events p WHERE p.world_id = c.world_id "
        "   AND p.conversation_id = c.conversation_id AND (p.occurred_at, p.event_id) > (c.occurred_at, c.event_id) "
        "   ORDER BY p.occurred_at, p.event_id LIMIT %(s)s)) n "
        "WHERE c.world_id = %(w)s AND c.event_id = ANY(%(ids)s) "
        "ORDER BY c.event_id, abs(extract(epoch FROM n.occurred_at - c.occurred_at))",
        {"w": world_id, "ids": list(event_ids), "s": span}, binary=True)
    out: dict[str, list[str]] = defaultdict(list)
    for r in cur.fetchall():
        out[r["id"]].append(r["near"])
    return dict(out)
