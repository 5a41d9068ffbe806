-- The graph brain reaches the episodes that figure a question's entities by `entity_ids @> ARRAY[id]`. The array
-- operators are not LEAKPROOF, so under row-level security they cannot be index conditions (see 0008): every active
-- episode of the world was read and filtered instead of the GIN index (episodic_memories_entities) answering. This
-- lookup runs as engram_definer, on that index, and pins the world the caller's transaction set, as 0008's do.
CREATE FUNCTION engram_episodes_naming(p_entity_ids text[])
RETURNS TABLE (memory_id text, entity_ids text[])
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public AS $$
    SELECT p.memory_id, p.entity_ids FROM episodic_memories p
    WHERE p.world_id = current_setting('engram.world_id', true) AND p.entity_ids && p_entity_ids
$$;

REVOKE ALL ON FUNCTION engram_episodes_naming(text[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION engram_episodes_naming(text[]) TO engram_app;
ALTER FUNCTION engram_episodes_naming(text[]) OWNER TO engram_definer;
