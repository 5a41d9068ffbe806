-- Row-level security on world_id. The policies themselves are not here: apply_migrations creates them after
-- every batch for every table that has a world_id column (engram.adapters.postgres.migrations.secure_world_tables),
-- so a table a later migration adds is covered without anyone remembering to.
--
-- Roles are cluster-wide, so each is created only when missing (another database of the cluster may have made it).
-- engram_app          what the application runs as (its sessions SET ROLE to it at connect): it sees and writes
--                     only the rows of the world its transaction names in `engram.world_id`.
-- engram_maintenance  the explicit all-worlds scope of a few reviewed paths (outbox drain, stalled-enrichment sweep,
--                     consolidation planning: `PostgresBase.all_worlds_tx`); a member of engram_app.
-- engram_definer      owns the SECURITY DEFINER lookups below; reads every world, writes nothing.
-- None of them can log in, bypass row-level security or own the tables. The migrator (the schema owner) is made a
-- member of the three so that its login may switch to them; through engram_maintenance it sees every world, so a
-- data migration reads the same rows on Aurora (owner, FORCE'd) as locally (superuser).
DO $$
BEGIN
    CREATE ROLE engram_app NOLOGIN NOBYPASSRLS;
EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
END $$;
DO $$
BEGIN
    CREATE ROLE engram_maintenance NOLOGIN NOBYPASSRLS;
EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
END $$;
DO $$
BEGIN
    CREATE ROLE engram_definer NOLOGIN NOBYPASSRLS;
EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
END $$;
GRANT engram_app TO engram_maintenance;
GRANT engram_app, engram_maintenance, engram_definer TO CURRENT_USER;
GRANT USAGE ON SCHEMA public TO engram_app, engram_definer;
-- Only to receive ownership of the lookups below (ALTER ... OWNER needs it when the migrator is no superuser).
GRANT CREATE ON SCHEMA public TO engram_definer;

-- Index-backed lookups that row-level security would otherwise slow down. pg_trgm's `%`, LIKE and `@@` are not
-- LEAKPROOF, so under a policy the planner must evaluate them after the policy's qual: they stop being index
-- conditions and every row of the world is read and filtered (a typo lookup over 50,000 aliases: 6 ms -> 230 ms).
-- These functions run as engram_definer, whose policy admits every row (the planner drops a qual that is always
-- true, so the trigram and full-text indexes serve again), and they pin the world themselves: to the one the
-- caller's transaction set, never to a parameter. Unset, current_setting(..., true) is NULL and nothing matches.

-- Aliases within trigram reach of a name (the resolution cascade's fuzzy stage). The caller sets
-- pg_trgm.similarity_threshold; `p_min` is the bar on similarity times the alias's confidence.
CREATE FUNCTION engram_fuzzy_aliases(p_name text, p_user_id text, p_min float8, p_limit int)
RETURNS TABLE (entity_id text, score float8, user_id text, source text)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public AS $$
    SELECT a.entity_id, (similarity(a.normalized_alias, p_name) * a.confidence)::float8 AS score,
           nullif(a.user_id, ''), a.source
    FROM entity_aliases a
    WHERE a.world_id = current_setting('engram.world_id', true)
      AND a.normalized_alias % p_name AND a.user_id IN ('', p_user_id)
      AND similarity(a.normalized_alias, p_name) * a.confidence > p_min
    ORDER BY score DESC
    LIMIT p_limit
$$;

-- Entities whose normalized name or an alias matches a LIKE pattern, or whose alias is within trigram reach of
-- a name (the entities route's name filter).
CREATE FUNCTION engram_entities_named(p_name text, p_like text)
RETURNS SETOF text
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public AS $$
    SELECT e.entity_id FROM canonical_entities e
    WHERE e.world_id = current_setting('engram.world_id', true) AND e.normalized_name LIKE p_like
    UNION
    SELECT a.entity_id FROM entity_aliases a
    WHERE a.world_id = current_setting('engram.world_id', true)
      AND (a.normalized_alias LIKE p_like OR a.normalized_alias % p_name)
$$;

-- Keyword documents matching a full-text query (the PostgreSQL keyword brain); ranked by the caller.
CREATE FUNCTION engram_keyword_matches(p_match tsquery, p_users text[], p_kinds text[])
RETURNS TABLE (doc_id text, kind text, text text, document tsvector)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public AS $$
    SELECT d.doc_id, d.kind, d.text, d.document FROM keyword_documents d
    WHERE d.world_id = current_setting('engram.world_id', true) AND d.document @@ p_match
      AND (p_users IS NULL OR d.user_id = ANY(p_users)) AND (p_kinds IS NULL OR d.kind = ANY(p_kinds))
$$;

REVOKE ALL ON FUNCTION engram_fuzzy_aliases(text, text, float8, int), engram_entities_named(text, text),
    engram_keyword_matches(tsquery, text[], text[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION engram_fuzzy_aliases(text, text, float8, int), engram_entities_named(text, text),
    engram_keyword_matches(tsquery, text[], text[]) TO engram_app;
ALTER FUNCTION engram_fuzzy_aliases(text, text, float8, int) OWNER TO engram_definer;
ALTER FUNCTION engram_entities_named(text, text) OWNER TO engram_definer;
ALTER FUNCTION engram_keyword_matches(tsquery, text[], text[]) OWNER TO engram_definer;
