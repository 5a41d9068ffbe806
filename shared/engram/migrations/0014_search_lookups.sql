-- Search (issue #6): the entities an event involves are read per candidate event (DOCUMENT_SQL's entity_ids).
-- The unique (world_id, event_id, span_start, span_end) key serves that lookup only when the planner knows it is
-- selective; in a world just filled (no statistics yet) it took the (world_id, entity_id) index instead and read
-- every mention of the world per event: 35 ms for 250 candidates in a 900-turn world, 3.5 ms with this index,
-- which answers the lookup from the index alone.
CREATE INDEX entity_mentions_event ON entity_mentions (world_id, event_id) INCLUDE (entity_id);
