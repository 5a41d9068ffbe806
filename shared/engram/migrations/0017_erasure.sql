-- Erasure (issue 17): what a user's words made goes with the user.
--
-- Where an entity and a world-wide alias come from. An entity's words may be nobody's but one user's (a passport
-- number, a bank PIN became entity names): erasing that user must find it. NULL / '{}': made from no chat event
-- (a user's own entity, a domain row, an import, a user's choice), so it stands on its own.
ALTER TABLE canonical_entities ADD COLUMN origin_event_id text;  -- the event whose words created it
CREATE INDEX canonical_entities_origin ON canonical_entities (world_id, origin_event_id) WHERE origin_event_id IS NOT NULL;
-- The events that taught a global alias ("My name is Dana Lopez"); a user's own alias is theirs by user_id.
ALTER TABLE entity_aliases ADD COLUMN origin_event_ids text[] NOT NULL DEFAULT '{}';

-- The tombstone of an erased user: when (the last time) and how many times. An erasure deletes the user's events in
-- the transaction that writes it; every enrichment write locks the events it derives from (FOR KEY SHARE) in its own
-- transaction, so it either commits first (the erasure waits, then removes what it wrote) or finds them gone and
-- writes nothing for them. What has no event to lock (a query of the user's, still running) is checked against this
-- row under the user's advisory lock. Events the same user id sends after `erased_at` are a new start.
CREATE TABLE erased_users (
    world_id  text        NOT NULL,
    user_id   text        NOT NULL,
    erased_at timestamptz NOT NULL DEFAULT now(),
    erasures  int         NOT NULL DEFAULT 1 CHECK (erasures >= 1),  -- their sum over a world only grows
    PRIMARY KEY (world_id, user_id)
);
