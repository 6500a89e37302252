-- Revert cyclone:limits
BEGIN;

DROP FUNCTION cyclone.drop_limit(text);
DROP FUNCTION cyclone.define_limit(text, int, int, interval);
DROP TRIGGER cyclone_steps_release_slots ON cyclone.cyclone_steps;
DROP FUNCTION cyclone._release_slots();
DROP FUNCTION cyclone._bucket_room(bigint, timestamptz);

DROP INDEX cyclone.cyclone_steps_limited_live;
DROP INDEX cyclone.cyclone_steps_claimable;
CREATE INDEX cyclone_steps_claimable
    ON cyclone.cyclone_steps (priority, scheduled_at, id) WHERE state = 'available';
ALTER TABLE cyclone.cyclone_steps DROP COLUMN buckets, DROP COLUMN queue_bucket, DROP COLUMN fair_bucket;

DROP SEQUENCE cyclone.cyclone_serve_seq;
DROP TABLE cyclone.cyclone_bucket_claims;
DROP TABLE cyclone.cyclone_slots;
DROP TABLE cyclone.cyclone_buckets;
DROP TABLE cyclone.cyclone_limits;

COMMIT;
