-- The fuzzy stage of the resolution cascade scores an alias by its trigram similarity alone, as seed 004's
-- `similarity(alias_text, mention) > 0.7` does; a world with `fuzzy_by_alias_confidence` keeps engram's earlier
-- score, similarity times the alias's confidence (0008's function, replaced by this one with that choice).
DROP FUNCTION engram_fuzzy_aliases(text, text, float8, int);

CREATE FUNCTION engram_fuzzy_aliases(p_name text, p_user_id text, p_min float8, p_limit int,
                                     p_by_confidence boolean DEFAULT false)
RETURNS TABLE (entity_id text, score float8, user_id text, source text)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public AS $$
    SELECT s.entity_id, s.score, s.user_id, s.source FROM (
        SELECT a.entity_id,
               (similarity(a.normalized_alias, p_name)
                * CASE WHEN p_by_confidence THEN a.confidence ELSE 1.0 END)::float8 AS score,
               nullif(a.user_id, '') AS user_id, a.source
        FROM entity_aliases a
        WHERE a.world_id = current_setting('engram.world_id', true)
          AND a.normalized_alias % p_name AND a.user_id IN ('', p_user_id)
    ) s
    WHERE s.score > p_min
    ORDER BY s.score DESC
    LIMIT p_limit
$$;

REVOKE ALL ON FUNCTION engram_fuzzy_aliases(text, text, float8, int, boolean) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION engram_fuzzy_aliases(text, text, float8, int, boolean) TO engram_app;
ALTER FUNCTION engram_fuzzy_aliases(text, text, float8, int, boolean) OWNER TO engram_definer;
