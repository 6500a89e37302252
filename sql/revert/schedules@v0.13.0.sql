-- Revert cyclone:schedules
BEGIN;

DROP FUNCTION cyclone._fire_schedules(text[], timestamptz, int, int);
DROP FUNCTION cyclone._schedule_cancellations(text[]);
DROP FUNCTION cyclone._lock_due_schedules(timestamptz, int);
DROP FUNCTION cyclone.backfill(text, timestamptz, timestamptz);
DROP FUNCTION cyclone.resume_schedule(text);
DROP FUNCTION cyclone.pause_schedule(text);
DROP FUNCTION cyclone.unschedule(text);
DROP FUNCTION cyclone.schedule(text, text, text, jsonb, text, text, interval, interval);
DROP FUNCTION cyclone._unfinished_schedule_runs(text);
DROP FUNCTION cyclone._fire_slot(cyclone.cyclone_schedules, timestamptz);
DROP FUNCTION cyclone._slot_text(timestamptz);
DROP VIEW cyclone.cyclone_v_schedules;
DROP TABLE cyclone.cyclone_schedule_runs;
DROP TABLE cyclone.cyclone_schedules;

COMMIT;
