-- Signals: typed, with a confidence, the time of their event and the sentence's place in it; only an
-- Assumption has a status (untested, confirmed, challenged, refuted). The generic `status` of 0001 had
-- no reader or writer: the assumption lifecycle replaces it.
ALTER TABLE signals
    DROP COLUMN status,
    ADD COLUMN confidence        real        NOT NULL DEFAULT 0.5 CHECK (confidence >= 0 AND confidence <= 1),
    ADD COLUMN assumption_status text        CHECK (assumption_status IN ('untested', 'confirmed', 'challenged', 'refuted')),
    ADD COLUMN occurred_at       timestamptz NOT NULL DEFAULT now(),
    ADD COLUMN position          int         NOT NULL DEFAULT 0,  -- the sentence's place in its event
    ADD COLUMN updated_at        timestamptz NOT NULL DEFAULT now(),
    ADD CONSTRAINT signals_type CHECK (signal_type IN ('DecisionIntent', 'Claim', 'Goal', 'Constraint', 'Assumption',
                                                       'Question', 'EvidenceMention')),
    ADD CONSTRAINT signals_assumption_status CHECK ((signal_type = 'Assumption') = (assumption_status IS NOT NULL));
CREATE INDEX signals_conversation ON signals (world_id, conversation_id, occurred_at, event_id, position);

-- Where signal extraction stands per conversation: the last event counted (the watermark), the
-- events counted since the last extraction and their characters. `version` makes a write from a
-- concurrent extract step on the same conversation fail instead of losing the other's turns.
CREATE TABLE signal_cursors (
    world_id          text        NOT NULL,
    conversation_id   text        NOT NULL,
    last_event_id     text        NOT NULL,
    last_occurred_at  timestamptz NOT NULL,
    pending_event_ids text[]      NOT NULL DEFAULT '{}',
    chars_since       int         NOT NULL DEFAULT 0 CHECK (chars_since >= 0),
    version           int         NOT NULL DEFAULT 1,
    updated_at        timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (world_id, conversation_id)
);
