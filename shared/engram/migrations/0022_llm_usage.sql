-- Model spend (issue 21): tokens and requests by world, UTC day and stage (extract, answer, summarize, research),
-- added to after each model call. A world's daily budget is checked against the day's sum before every call.
CREATE TABLE llm_usage (
    world_id      text   NOT NULL,
    day           date   NOT NULL,
    stage         text   NOT NULL CHECK (stage IN ('extract', 'answer', 'summarize', 'research')),
    input_tokens  bigint NOT NULL DEFAULT 0,
    output_tokens bigint NOT NULL DEFAULT 0,
    calls         bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (world_id, day, stage)
);
