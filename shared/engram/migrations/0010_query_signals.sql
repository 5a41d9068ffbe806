-- The question's own signals, read by the same model call that answers it (no separate extraction call).
ALTER TABLE world_queries ADD COLUMN IF NOT EXISTS signals jsonb NOT NULL DEFAULT '[]'::jsonb;
