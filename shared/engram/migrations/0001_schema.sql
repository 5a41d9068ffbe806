-- engram schema. Every row of every data table carries world_id, first in every key and index.
-- {{EMBEDDING_DIM}} is replaced by the configured embedder's dimension when the migration is applied.
CREATE EXTENSION IF NOT EXISTS vector;
CREATE EXTENSION IF NOT EXISTS pg_trgm;

CREATE TABLE system_config (
    world_id    text        NOT NULL,
    key         text        NOT NULL,
    value       jsonb       NOT NULL,
    updated_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (world_id, key)
);

-- Layer 1: immutable chat events. Only the enrichment columns and the derived embedding change.
CREATE TABLE chat_events (
    world_id          text        NOT NULL,
    event_id          text        NOT NULL,
    user_id           text        NOT NULL,
    conversation_id   text        NOT NULL,
    role              text        NOT NULL CHECK (role IN ('user', 'assistant', 'system', 'tool')),
    content           text        NOT NULL,
    content_type      text        NOT NULL,
    occurred_at       timestamptz NOT NULL,
    received_at       timestamptz NOT NULL DEFAULT now(),
    metadata          jsonb       NOT NULL DEFAULT '{}'::jsonb,
    importance        real        NOT NULL CHECK (importance >= 0 AND importance <= 1),
    tags              text[]      NOT NULL DEFAULT '{}',
    enrichment_status text        NOT NULL DEFAULT 'pending'
                      CHECK (enrichment_status IN ('pending', 'enriching', 'enriched', 'failed')),
    enrichment_id     text,
    enrichment_error  text,
    embedding         vector({{EMBEDDING_DIM}}),
    PRIMARY KEY (world_id, event_id)
);
CREATE INDEX chat_events_conversation ON chat_events (world_id, conversation_id, occurred_at);
CREATE INDEX chat_events_user ON chat_events (world_id, user_id, occurred_at);
CREATE INDEX chat_events_enrichment ON chat_events (world_id, enrichment_status);

CREATE TABLE canonical_entities (
    world_id        text        NOT NULL,
    entity_id       text        NOT NULL,
    name            text        NOT NULL,
    normalized_name text        NOT NULL,
    entity_type     text        NOT NULL DEFAULT 'thing',
    description     text,
    created_at      timestamptz NOT NULL DEFAULT now(),
    embedding       vector({{EMBEDDING_DIM}}),
    PRIMARY KEY (world_id, entity_id)
);
CREATE INDEX canonical_entities_name ON canonical_entities (world_id, normalized_name);
CREATE INDEX canonical_entities_name_trgm ON canonical_entities USING gin (normalized_name gin_trgm_ops);

CREATE TABLE entity_aliases (
    world_id          text        NOT NULL,
    entity_id         text        NOT NULL,
    alias             text        NOT NULL,
    normalized_alias  text        NOT NULL,
    user_id           text        NOT NULL DEFAULT '',  -- '' is a global alias of the world
    confidence        real        NOT NULL CHECK (confidence >= 0 AND confidence <= 1),
    source            text        NOT NULL,
    created_at        timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (world_id, normalized_alias, entity_id, user_id),
    FOREIGN KEY (world_id, entity_id) REFERENCES canonical_entities (world_id, entity_id) ON DELETE CASCADE
);
CREATE INDEX entity_aliases_trgm ON entity_aliases USING gin (normalized_alias gin_trgm_ops);
CREATE INDEX entity_aliases_entity ON entity_aliases (world_id, entity_id);

-- How each mention was resolved; disambiguation_required rows wait here for the user.
CREATE TABLE entity_mentions (
    world_id    text        NOT NULL,
    mention_id  bigserial   NOT NULL,
    event_id    text        NOT NULL,
    mention     text        NOT NULL,
    kind        text        NOT NULL,
    span_start  int         NOT NULL,
    span_end    int         NOT NULL,
    entity_id   text,
    method      text        NOT NULL,
    confidence  real        NOT NULL,
    candidates  jsonb       NOT NULL DEFAULT '[]'::jsonb,
    created_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (world_id, mention_id),
    UNIQUE (world_id, event_id, span_start, span_end)
);
CREATE INDEX entity_mentions_entity ON entity_mentions (world_id, entity_id);

CREATE TABLE entity_relationships (
    world_id           text        NOT NULL,
    relationship_id    text        NOT NULL,
    source_entity_id   text        NOT NULL,
    relation           text        NOT NULL,
    target_entity_id   text        NOT NULL,
    confidence         real        NOT NULL CHECK (confidence >= 0 AND confidence <= 1),
    evidence_event_ids text[]      NOT NULL DEFAULT '{}',
    created_at         timestamptz NOT NULL DEFAULT now(),
    updated_at         timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (world_id, relationship_id),
    UNIQUE (world_id, source_entity_id, relation, target_entity_id)
);
CREATE INDEX entity_relationships_target ON entity_relationships (world_id, target_entity_id);

CREATE TABLE episodic_memories (
    world_id        text        NOT NULL,
    memory_id       text        NOT NULL,
    user_id         text        NOT NULL,
    conversation_id text        NOT NULL,
    content         text        NOT NULL,
    event_ids       text[]      NOT NULL,
    entity_ids      text[]      NOT NULL DEFAULT '{}',
    importance      real        NOT NULL CHECK (importance >= 0 AND importance <= 1),
    occurred_at     timestamptz NOT NULL,
    status          text        NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'superseded', 'archived')),
    created_at      timestamptz NOT NULL DEFAULT now(),
    embedding       vector({{EMBEDDING_DIM}}),
    PRIMARY KEY (world_id, memory_id)
);
CREATE INDEX episodic_memories_user ON episodic_memories (world_id, user_id, occurred_at);
CREATE INDEX episodic_memories_conversation ON episodic_memories (world_id, conversation_id);

CREATE TABLE semantic_memories (
    world_id            text        NOT NULL,
    memory_id           text        NOT NULL,
    user_id             text        NOT NULL,
    subject_entity_id   text        NOT NULL,
    predicate           text        NOT NULL,
    object_value        text        NOT NULL,
    object_entity_id    text,
    confidence          real        NOT NULL CHECK (confidence >= 0 AND confidence <= 1),
    reinforcement_count int         NOT NULL DEFAULT 0,
    source_event_ids    text[]      NOT NULL DEFAULT '{}',
    valid_from          timestamptz,
    valid_to            timestamptz,
    status              text        NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'superseded', 'archived')),
    created_at          timestamptz NOT NULL DEFAULT now(),
    last_validated_at   timestamptz NOT NULL DEFAULT now(),
    embedding           vector({{EMBEDDING_DIM}}),
    PRIMARY KEY (world_id, memory_id)
);
CREATE INDEX semantic_memories_subject ON semantic_memories (world_id, subject_entity_id, predicate);
CREATE INDEX semantic_memories_user ON semantic_memories (world_id, user_id, status);

CREATE TABLE procedural_memories (
    world_id       text        NOT NULL,
    memory_id      text        NOT NULL,
    user_id        text,
    pattern        text        NOT NULL,
    support_count  int         NOT NULL,
    source_ids     text[]      NOT NULL DEFAULT '{}',
    confidence     real        NOT NULL CHECK (confidence >= 0 AND confidence <= 1),
    status         text        NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'superseded', 'archived')),
    created_at     timestamptz NOT NULL DEFAULT now(),
    embedding      vector({{EMBEDDING_DIM}}),
    PRIMARY KEY (world_id, memory_id)
);

CREATE TABLE memory_summaries (
    world_id    text        NOT NULL,
    summary_id  text        NOT NULL,
    user_id     text,
    scope_kind  text        NOT NULL CHECK (scope_kind IN ('entity', 'conversation', 'user')),
    scope_id    text        NOT NULL,
    content     text        NOT NULL,
    key_facts   jsonb       NOT NULL DEFAULT '[]'::jsonb,
    source_ids  text[]      NOT NULL DEFAULT '{}',
    confidence  real        NOT NULL CHECK (confidence >= 0 AND confidence <= 1),
    created_at  timestamptz NOT NULL DEFAULT now(),
    embedding   vector({{EMBEDDING_DIM}}),
    PRIMARY KEY (world_id, summary_id),
    UNIQUE (world_id, scope_kind, scope_id)
);

CREATE TABLE domain_ontology (
    world_id    text NOT NULL,
    kind        text NOT NULL CHECK (kind IN ('entity_type', 'predicate')),
    concept     text NOT NULL,
    description text,
    PRIMARY KEY (world_id, kind, concept)
);

CREATE TABLE memory_conflicts (
    world_id              text        NOT NULL,
    conflict_id           text        NOT NULL,
    memory_id             text        NOT NULL,
    conflicting_memory_id text        NOT NULL,
    status                text        NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'resolved')),
    strategy              text,
    reason                text,
    created_at            timestamptz NOT NULL DEFAULT now(),
    resolved_at           timestamptz,
    PRIMARY KEY (world_id, conflict_id)
);
CREATE INDEX memory_conflicts_status ON memory_conflicts (world_id, status);

CREATE TABLE signals (
    world_id        text        NOT NULL,
    signal_id       text        NOT NULL,
    conversation_id text        NOT NULL,
    user_id         text        NOT NULL,
    event_id        text        NOT NULL,
    signal_type     text        NOT NULL,
    content         text        NOT NULL,
    content_hash    text        NOT NULL,
    status          text        NOT NULL DEFAULT 'open',
    created_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (world_id, signal_id),
    UNIQUE (world_id, conversation_id, content_hash)
);

CREATE TABLE world_queries (
    world_id           text        NOT NULL,
    query_id           text        NOT NULL,
    user_id            text        NOT NULL,
    question           text        NOT NULL,
    conversation_id    text,
    config             jsonb       NOT NULL,
    status             text        NOT NULL CHECK (status IN ('pending', 'processing', 'completed', 'failed')),
    info_requests_used int         NOT NULL DEFAULT 0,
    answer             jsonb,
    trace              jsonb       NOT NULL DEFAULT '[]'::jsonb,
    model              text,
    model_calls        int         NOT NULL DEFAULT 0,
    input_tokens       int         NOT NULL DEFAULT 0,
    output_tokens      int         NOT NULL DEFAULT 0,
    error              text,
    created_at         timestamptz NOT NULL DEFAULT now(),
    completed_at       timestamptz,
    PRIMARY KEY (world_id, query_id)
);
CREATE INDEX world_queries_user ON world_queries (world_id, user_id, created_at DESC);

-- The QueryContext between loop steps: never in the state machine payload (256 KB cap).
CREATE TABLE query_contexts (
    world_id   text        NOT NULL,
    query_id   text        NOT NULL,
    context    jsonb       NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (world_id, query_id)
);

-- Keyword-index writes, recorded in the transaction of the rows they index, applied by the index step.
CREATE TABLE index_outbox (
    world_id   text        NOT NULL,
    outbox_id  bigserial   NOT NULL,
    kind       text        NOT NULL,
    doc_id     text        NOT NULL,
    op         text        NOT NULL CHECK (op IN ('upsert', 'delete')),
    created_at timestamptz NOT NULL DEFAULT now(),
    done_at    timestamptz,
    PRIMARY KEY (world_id, outbox_id)
);
CREATE INDEX index_outbox_pending ON index_outbox (outbox_id) WHERE done_at IS NULL;

CREATE TABLE consolidation_runs (
    world_id    text        NOT NULL,
    run_id      text        NOT NULL,
    started_at  timestamptz NOT NULL DEFAULT now(),
    finished_at timestamptz,
    stats       jsonb       NOT NULL DEFAULT '{}'::jsonb,
    PRIMARY KEY (world_id, run_id)
);

-- Semantic brain: HNSW over cosine distance on every embedded layer.
CREATE INDEX chat_events_embedding ON chat_events USING hnsw (embedding vector_cosine_ops);
CREATE INDEX canonical_entities_embedding ON canonical_entities USING hnsw (embedding vector_cosine_ops);
CREATE INDEX episodic_memories_embedding ON episodic_memories USING hnsw (embedding vector_cosine_ops);
CREATE INDEX semantic_memories_embedding ON semantic_memories USING hnsw (embedding vector_cosine_ops);
CREATE INDEX procedural_memories_embedding ON procedural_memories USING hnsw (embedding vector_cosine_ops);
CREATE INDEX memory_summaries_embedding ON memory_summaries USING hnsw (embedding vector_cosine_ops);
