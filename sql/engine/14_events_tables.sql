-- sql/engine/14_events_tables.sql: events (SPEC 17), what event nodes wait for.
-- Owns: cyclone_events.
-- Requires: 02_clock.sql (emitted_at's default calls cyclone.now()).
-- Used by: emit_event (46_coordination.sql), which records an event and completes the event nodes waiting on
-- its key; _reach_event (46_coordination.sql), which completes a node reached after its event came;
-- cyclone_v_events (15_views.sql); prune (32_prune.sql), which removes events older than its cutoff.
-- sqitch reaches this shape through the change coordination_tables.
-- Only the owner writes it (emit_event, prune). An event is not consumed: every event node of its key in a
-- run created at or before it was emitted completes with it, whenever that node is reached.

-- One row per emitted event: its key (1 to 1,000 bytes: a btree key, as an idempotency key), its payload
-- (checked by emit_event as every stored JSON is) and when it was emitted on the engine clock.
CREATE TABLE cyclone.cyclone_events (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    key        text NOT NULL,
    payload    jsonb,
    emitted_at timestamptz NOT NULL DEFAULT cyclone.now()
);
-- The earliest event of a key emitted at or after a run's creation (an event node reached after its event).
CREATE INDEX cyclone_events_key ON cyclone.cyclone_events (key, emitted_at, id);
-- prune's cutoff.
CREATE INDEX cyclone_events_emitted ON cyclone.cyclone_events (emitted_at);
COMMENT ON TABLE cyclone.cyclone_events IS
    'Emitted events (SPEC 17), kept until prune: an event node of the key completes with the earliest one emitted since its run began.';
GRANT SELECT ON cyclone.cyclone_events TO cyclone_admin;
