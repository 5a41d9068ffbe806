-- Research queries (issue 11): a world query is answered by the NeedsMoreInfo loop or researched (plan,
-- gather, evaluate, synthesize); the research report (sub-questions, budgets, conflicts) is kept with it.
ALTER TABLE world_queries ADD COLUMN IF NOT EXISTS mode text NOT NULL DEFAULT 'answer'
    CHECK (mode IN ('answer', 'research'));
ALTER TABLE world_queries ADD COLUMN IF NOT EXISTS research jsonb;
