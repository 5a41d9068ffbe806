-- Signals can be dismissed and carry a vector (seed 003, "Signal Lifecycle" and "Deduplication"). The dedup key is
-- unique among a conversation's non-dismissed signals only: said again after a dismissal, a signal is stored again.
-- The vector is of the signal's words, by the deployment's embedder; signals stored before this migration have none.
-- No vector index: a conversation's signals are ranked by an exact scan of that conversation's rows.
ALTER TABLE signals
    ADD COLUMN dismissed_at timestamptz,
    ADD COLUMN embedding    vector({{EMBEDDING_DIM}}),
    DROP CONSTRAINT signals_world_id_conversation_id_content_hash_key;
CREATE UNIQUE INDEX signals_undismissed_key ON signals (world_id, conversation_id, content_hash)
    WHERE dismissed_at IS NULL;
