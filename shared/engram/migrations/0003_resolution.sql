-- Entity resolution: where an entity comes from, the domain tables a world resolves names against, the
-- memories behind each relationship, and the lookups the resolution cascade makes for every mention.
CREATE EXTENSION IF NOT EXISTS btree_gin;

-- 'customers:42' for an entity created from a domain row, 'user:dana' for the entity standing for a user.
ALTER TABLE canonical_entities ADD COLUMN external_ref text;
CREATE UNIQUE INDEX canonical_entities_external_ref ON canonical_entities (world_id, external_ref)
    WHERE external_ref IS NOT NULL;

-- The trigram stage filters on the world inside the index: one world's 100k aliases never scan another's.
CREATE INDEX entity_aliases_world_trgm ON entity_aliases USING gin (world_id, normalized_alias gin_trgm_ops);
DROP INDEX entity_aliases_trgm;

-- An entity type of the ontology may name the domain table holding its instances (searched by name).
ALTER TABLE domain_ontology
    ADD COLUMN source_table text,
    ADD COLUMN key_column   text,
    ADD COLUMN name_column  text,
    ADD CONSTRAINT domain_ontology_source CHECK (
        (source_table IS NULL AND key_column IS NULL AND name_column IS NULL)
        OR (kind = 'entity_type' AND source_table IS NOT NULL AND key_column IS NOT NULL AND name_column IS NOT NULL));

-- The facts an edge stands for: a superseded fact takes its edge away with it.
ALTER TABLE entity_relationships ADD COLUMN source_memory_ids text[] NOT NULL DEFAULT '{}';

-- Mentions waiting for the user to choose among candidates.
CREATE INDEX entity_mentions_pending ON entity_mentions (world_id, created_at)
    WHERE method = 'disambiguation_required';
