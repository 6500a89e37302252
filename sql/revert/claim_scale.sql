-- Revert cyclone:claim_scale
DROP INDEX IF EXISTS cyclone.cyclone_steps_limited_priority;
DROP INDEX IF EXISTS cyclone.cyclone_buckets_served;
