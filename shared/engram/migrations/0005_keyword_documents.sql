-- The keyword brain on PostgreSQL full-text search (the `small` deployment profile, no OpenSearch).
-- Like the OpenSearch and tantivy indexes it is derived data, rebuilt from the rows by `engram reindex`.
-- The searchable fields are one tsvector, each field at its own weight, so a query can name a field:
-- text A (stemmed English), speaker B, kind C, conversation D. user_id '' marks a world-level document.
CREATE TABLE keyword_documents (
    world_id        text        NOT NULL,
    doc_id          text        NOT NULL,
    kind            text        NOT NULL,
    user_id         text        NOT NULL DEFAULT '',
    conversation_id text        NOT NULL DEFAULT '',
    speaker         text        NOT NULL DEFAULT '',
    text            text        NOT NULL,
    document        tsvector    GENERATED ALWAYS AS (
                        setweight(to_tsvector('english', text), 'A')
                        || setweight(to_tsvector('english', speaker), 'B')
                        || setweight(to_tsvector('english', kind), 'C')
                        || setweight(to_tsvector('english', conversation_id), 'D')) STORED,
    updated_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (world_id, doc_id)
);
CREATE INDEX keyword_documents_document ON keyword_documents USING gin (document);
CREATE INDEX keyword_documents_user ON keyword_documents (world_id, user_id);
