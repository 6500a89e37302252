-- Revert cyclone:shards
BEGIN;

DROP TRIGGER cyclone_schedules_on_their_partition ON cyclone.cyclone_schedules;
DROP FUNCTION cyclone.configure_shard(text, int, int[]);
DROP FUNCTION cyclone._schedule_on_its_partition();
DROP FUNCTION cyclone._new_run_partition(cyclone.cyclone_shard, text, text, uuid);
DROP FUNCTION cyclone.schedule_partition(text);
DROP FUNCTION cyclone.key_partition(text, text);
DROP FUNCTION cyclone.step_partition(bigint);
DROP FUNCTION cyclone.run_partition(uuid);
DROP FUNCTION cyclone._key_hash(text, text);
DROP FUNCTION cyclone._run_id_on(int);
DROP FUNCTION cyclone._id_partition(uuid, int);
DROP TABLE cyclone.cyclone_shard;

COMMIT;
