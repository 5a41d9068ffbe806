-- Consolidation. An entity's summary is per user (facts are a user's own: a summary made of one user's facts
-- must not reach another), so a scope is unique per user; conversation and user scopes keep one each.
ALTER TABLE memory_summaries DROP CONSTRAINT IF EXISTS memory_summaries_world_id_scope_kind_scope_id_key;
CREATE UNIQUE INDEX memory_summaries_scope ON memory_summaries (world_id, scope_kind, scope_id, (coalesce(user_id, '')));

-- Forgetting reads a world's active facts, the longest unvalidated first.
CREATE INDEX semantic_memories_validated ON semantic_memories (world_id, last_validated_at) WHERE status = 'active';
