-- An event's own vector stays in its row and its in-context one leaves it first: two 384-d vectors (3 KB) do not fit
-- the 2 KB a row is kept under, and the own vector, the one the HNSW index orders by, was the one moved out, read
-- back from TOAST for every turn a user said when the graph brain ranked them (2,000 turns: 6,000 buffers, half
-- the statement). Rows written from now on; an existing row keeps its layout until it is written again.
ALTER TABLE chat_events ALTER COLUMN embedding SET STORAGE MAIN;
ALTER TABLE chat_events ALTER COLUMN context_embedding SET STORAGE EXTERNAL;
