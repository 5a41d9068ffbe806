-- Retrieval (issue #6): a second vector per event, of the turn read after the one before it in its
-- conversation (what it answers); the semantic brain scores events by both. It is not searched on its
-- own (no HNSW index): events are found by their own vector. And the indexes the graph brain's
-- traversals filter on. Every index starts with world_id.
ALTER TABLE chat_events ADD COLUMN context_embedding vector({{EMBEDDING_DIM}});

CREATE INDEX semantic_memories_object ON semantic_memories (world_id, object_entity_id)
    WHERE object_entity_id IS NOT NULL;
CREATE INDEX entity_relationships_source ON entity_relationships (world_id, source_entity_id);
CREATE INDEX episodic_memories_entities ON episodic_memories USING gin (entity_ids);
