-- The memory lifecycle made explainable: why a fact is believed, who was there when something happened,
-- and how each conflict was settled (by the rules or by the user) and which side won.

-- A fact's confidence factors: {"base", "reinforcement", "source", "source_weight"}. The stored confidence
-- is min(max_confidence, base * source_weight + reinforcement); recency (passive decay) is applied at read
-- time from last_validated_at, never stored.
ALTER TABLE semantic_memories ADD COLUMN confidence_factors jsonb NOT NULL DEFAULT '{}'::jsonb;

-- The entities an episode involves: [{"entity_id", "name", "entity_type", "roles": [...]}]. entity_ids
-- stays beside it for the GIN index the graph brain filters on.
ALTER TABLE episodic_memories ADD COLUMN entities jsonb NOT NULL DEFAULT '[]'::jsonb;

ALTER TABLE memory_conflicts
    ADD COLUMN kind             text NOT NULL DEFAULT 'same_predicate'
        CHECK (kind IN ('same_predicate', 'cross_predicate')),
    ADD COLUMN winner_memory_id text,
    ADD COLUMN resolved_by      text CHECK (resolved_by IN ('rules', 'user')),
    ADD COLUMN note             text;
CREATE INDEX memory_conflicts_memories ON memory_conflicts (world_id, memory_id, conflicting_memory_id);
