-- A mention's id tells nothing: a random token, like every other id of the schema, in place of a serial that
-- every world drew from, whose values let one world count the mentions of all the others (issue 17).
-- Existing mentions get new ids; a disambiguation still waiting is listed again with its new one.
ALTER TABLE entity_mentions ALTER COLUMN mention_id DROP DEFAULT;
DROP SEQUENCE IF EXISTS entity_mentions_mention_id_seq;
ALTER TABLE entity_mentions
    ALTER COLUMN mention_id TYPE text USING 'men_' || replace(gen_random_uuid()::text, '-', ''),
    ALTER COLUMN mention_id SET DEFAULT 'men_' || replace(gen_random_uuid()::text, '-', '');
