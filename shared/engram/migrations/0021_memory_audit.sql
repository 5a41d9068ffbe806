-- Corrections and deletions of a fact by the user (issue 22): each leaves an audit row, the fact as it was (and, for a
-- correction, as it became), when, and by which request. A deleted fact is gone from the memory tables and the index;
-- this row is what is kept of it. `user_id` is the fact's owner: erasing that user erases their audit rows too.
CREATE TABLE memory_audit (
    world_id   text        NOT NULL,
    audit_id   text        NOT NULL,
    memory_id  text        NOT NULL,
    user_id    text        NOT NULL,
    action     text        NOT NULL CHECK (action IN ('correct', 'delete')),
    before     jsonb       NOT NULL,
    after      jsonb,
    note       text,
    request_id text,
    at         timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (world_id, audit_id)
);
CREATE INDEX memory_audit_memory ON memory_audit (world_id, memory_id, at);
CREATE INDEX memory_audit_user ON memory_audit (world_id, user_id);
