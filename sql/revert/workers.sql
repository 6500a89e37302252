-- Revert cyclone:workers
BEGIN;
DROP FUNCTION cyclone.register_worker(text,jsonb);
DROP FUNCTION cyclone.deregister_worker(text);
DROP FUNCTION cyclone._forget_workers(timestamptz);
COMMIT;
