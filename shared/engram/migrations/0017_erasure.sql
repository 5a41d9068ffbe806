-- Erasure (issue 17): what a user's words made goes with the user.
--
-- Where an entity and a world-wide alias come from. An entity's words may be nobody's but one user's (a passport
-- number, a bank PIN became entity names): erasing that user must find it. NULL / '{}': made from no chat event
-- (a user's own entity, a domain row, an import, a user's choice), so it stands on its own.
ALTER TABLE canonical_entities ADD COLUMN origin_event_id text;  -- the event whose words created it
CREATE INDEX canonical_entities_origin ON canonical_entities (world_id, origin_event_id) WHERE origin_event_id IS NOT NULL;
-- The events that taught a global alias ("My name is Dana Lopez"); a user's own alias is theirs by user_id.
ALTER TABLE entity_aliases ADD COLUMN origin_event_ids text[] NOT NULL DEFAULT '{}';
