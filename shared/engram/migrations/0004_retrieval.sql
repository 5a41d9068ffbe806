-- Retrieval (issue #6): a second vector per event, of the turn read with the one before it in its
-- conversation (what it answers), so the semantic brain finds replies by the question they answer;
-- and the indexes the graph brain's traversals filter on. Every index starts with world_id.
ALTER TABLE chat_events ADD COLUMN context_embedding vector({{EMBEDDING_DIM}});
CREATE INDEX chat_events_context_embedding ON chat_events USING hnsw (context_embedding vector_cosine_ops);

CREATE INDEX semantic_memories_object ON semantic_memories (world_id, object_entity_id)
    WHERE object_entity_id IS NOT NULL;
CREATE INDEX entity_relationships_source ON entity_relationships (world_id, source_entity_id);
CREATE INDEX episodic_memories_entities ON episodic_memories USING gin (entity_ids);
