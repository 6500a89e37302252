-- @@ the clock table
-- TABLE clock
CREATE TABLE cyclone.clock (
    singleton boolean DEFAULT true NOT NULL,
    time_offset interval DEFAULT '00:00:00'::interval NOT NULL,
    CONSTRAINT clock_singleton CHECK (singleton)
);

-- COMMENT TABLE clock
COMMENT ON TABLE cyclone.clock IS 'Offset added to now() by cyclone.now(); zero in production.';

-- CONSTRAINT clock clock_pkey
ALTER TABLE ONLY cyclone.clock
    ADD CONSTRAINT clock_pkey PRIMARY KEY (singleton);

-- ACL TABLE clock
GRANT SELECT ON TABLE cyclone.clock TO cyclone_admin;
