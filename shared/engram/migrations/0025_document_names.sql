-- Seed 004's own names for how a mention was resolved, what taught an alias, and a conflict's type and strategy
-- (docs/rules.md: "resolution method names", "conflict kinds and strategy names"). engram's extensions with no
-- counterpart in the document keep their names: created, disambiguation_required, user; confidence_gap,
-- correction, change, history.

-- Mentions: coreference -> llm_coreference, domain -> domain_db; unresolved -> not_found for a name,
-- no_candidates for a pronoun or description (a reference no coreference linked).
UPDATE entity_mentions SET method = CASE
        WHEN method = 'coreference' THEN 'llm_coreference'
        WHEN method = 'domain' THEN 'domain_db'
        WHEN kind = 'name' THEN 'not_found'
        ELSE 'no_candidates' END
    WHERE method IN ('coreference', 'domain', 'unresolved');

-- Aliases: the document's learn_alias sources are fuzzy, coreference and domain_db.
UPDATE entity_aliases SET source = 'domain_db' WHERE source = 'domain';

-- A world's rank_source_weights override is keyed by alias source.
UPDATE system_config SET value = (value - 'domain') || jsonb_build_object('domain_db', value -> 'domain')
    WHERE key = 'rank_source_weights' AND jsonb_typeof(value) = 'object' AND value ? 'domain'
      AND NOT value ? 'domain_db';

-- Conflicts: same_predicate -> memory_vs_db where the domain database's value decided it, else
-- memory_vs_memory; cross_predicate -> semantic_conflict. Strategies: trust_domain_database -> trust_db,
-- recency_gap -> trust_recent.
ALTER TABLE memory_conflicts DROP CONSTRAINT IF EXISTS memory_conflicts_kind_check;
UPDATE memory_conflicts SET kind = CASE
        WHEN kind = 'cross_predicate' THEN 'semantic_conflict'
        WHEN strategy = 'trust_domain_database' THEN 'memory_vs_db'
        ELSE 'memory_vs_memory' END
    WHERE kind IN ('same_predicate', 'cross_predicate');
UPDATE memory_conflicts SET strategy = CASE strategy
        WHEN 'trust_domain_database' THEN 'trust_db'
        ELSE 'trust_recent' END
    WHERE strategy IN ('trust_domain_database', 'recency_gap');
ALTER TABLE memory_conflicts ALTER COLUMN kind SET DEFAULT 'memory_vs_memory',
    ADD CONSTRAINT memory_conflicts_kind_check CHECK (kind IN ('memory_vs_memory', 'memory_vs_db', 'semantic_conflict'));
