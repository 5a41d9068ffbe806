-- Insights: inflection points detected every few turns of a conversation and the interventions its
-- signals call for, with the per-conversation state that makes both idempotent and bounded.

-- Where insights stand per conversation. `turns` is counted from the stored events on every run (so a
-- re-run counts the same); `checked_turn` is the last checkpoint the inflection check ran on, and
-- `intervention_turn` the turn of the last intervention offered (the cooldown starts there).
CREATE TABLE insight_states (
    world_id          text        NOT NULL,
    conversation_id   text        NOT NULL,
    turns             int         NOT NULL DEFAULT 0 CHECK (turns >= 0),
    checked_turn      int         NOT NULL DEFAULT 0 CHECK (checked_turn >= 0),
    inflection_turn   int,
    intervention_turn int,
    updated_at        timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (world_id, conversation_id)
);

-- Inflections that counted (above the confidence threshold), one per checkpoint turn at most.
CREATE TABLE inflections (
    world_id        text        NOT NULL,
    inflection_id   text        NOT NULL,
    conversation_id text        NOT NULL,
    turn            int         NOT NULL CHECK (turn >= 1),
    kind            text        NOT NULL CHECK (kind IN ('research_depth', 'critique_assumptions',
                                                         'synthesis_decision')),
    confidence      real        NOT NULL CHECK (confidence >= 0 AND confidence <= 1),
    suggested_topic text        NOT NULL,
    rationale       text        NOT NULL DEFAULT '',
    signal_ids      text[]      NOT NULL DEFAULT '{}',
    event_ids       text[]      NOT NULL DEFAULT '{}',
    model           text        NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (world_id, inflection_id),
    UNIQUE (world_id, conversation_id, turn)
);

-- Interventions offered to a conversation; a dismissed one stays, so that it is never offered again.
CREATE TABLE interventions (
    world_id        text        NOT NULL,
    intervention_id text        NOT NULL,
    conversation_id text        NOT NULL,
    kind            text        NOT NULL CHECK (kind IN ('organise_questions', 'validate_assumptions',
                                                         'structure_case', 'organise_signals')),
    status          text        NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'dismissed')),
    message         text        NOT NULL,
    signal_ids      text[]      NOT NULL DEFAULT '{}',
    turn            int         NOT NULL CHECK (turn >= 1),
    created_at      timestamptz NOT NULL DEFAULT now(),
    dismissed_at    timestamptz,
    PRIMARY KEY (world_id, intervention_id),
    CHECK ((status = 'dismissed') = (dismissed_at IS NOT NULL))
);
CREATE INDEX interventions_conversation ON interventions (world_id, conversation_id, created_at);
