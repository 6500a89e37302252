-- sql/engine/01_clock_tables.sql: the engine clock's one row (sqitch change `clock` creates it).
-- Owns: the table cyclone.clock and its seed row. Requires 00_schema.sql.
-- It loads before 02_clock.sql, whose cyclone.now() reads it, and before every table whose defaults call
-- cyclone.now(). All engine time is pg_catalog.now() plus this offset: zero in production; tests move it
-- forward with advance_time() and back with reset_time() (02_clock.sql). It is a table, not a setting, so that
-- the offset holds across connections: a test's worker sees the time the test set.

-- Exactly one row: the primary key is a boolean that its CHECK pins to true.
CREATE TABLE cyclone.clock (
    singleton   boolean PRIMARY KEY DEFAULT true CONSTRAINT clock_singleton CHECK (singleton),
    time_offset interval NOT NULL DEFAULT interval '0'
);
COMMENT ON TABLE cyclone.clock IS 'Offset added to now() by cyclone.now(); zero in production.';

-- The row a fresh database starts with: real time.
INSERT INTO cyclone.clock DEFAULT VALUES;

-- Only the owner writes it (through advance_time and reset_time, SECURITY DEFINER); cyclone_admin may read it.
GRANT SELECT ON cyclone.clock TO cyclone_admin;
