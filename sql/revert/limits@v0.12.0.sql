-- Revert cyclone:limits (back to its v0.7.0 deploy: a claim locks its bucket
-- rows, a slot released goes away, and the claim times of a rate window are
-- pruned once they leave it; the functions below are the v0.6.0 deploy's, the
-- trigger's search_path pinned)
BEGIN;

DROP TRIGGER cyclone_steps_release_slots ON cyclone.cyclone_steps;
DROP TABLE cyclone.cyclone_free_slots;
ALTER TABLE cyclone.cyclone_slots ADD CONSTRAINT cyclone_slots_bucket_id_fkey
    FOREIGN KEY (bucket_id) REFERENCES cyclone.cyclone_buckets (id) ON DELETE CASCADE;
ALTER TABLE cyclone.cyclone_buckets DROP COLUMN debt, DROP COLUMN held_back;
ALTER TABLE cyclone.cyclone_bucket_claims DROP COLUMN id;
COMMENT ON TABLE cyclone.cyclone_bucket_claims IS 'Claim times per rate-limited bucket, kept while inside its period.';

CREATE OR REPLACE FUNCTION cyclone._release_slots()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = cyclone, pg_temp
AS $$
BEGIN
    DELETE FROM cyclone_slots s WHERE s.step_id = OLD.id;
    IF NOT FOUND THEN
        RETURN NULL;  -- rate-only buckets hold no slot
    END IF;
    PERFORM 1
       FROM unnest(OLD.buckets) AS b(id)
       JOIN cyclone_buckets k ON k.id = b.id
       JOIN cyclone_limits l ON l.name = k.limit_name
      WHERE l.concurrency IS NOT NULL
        AND (SELECT count(*) FROM (SELECT 1 FROM cyclone_slots x WHERE x.bucket_id = b.id
                                    LIMIT l.concurrency) y) = l.concurrency - 1;
    IF FOUND THEN
        PERFORM 1 FROM cyclone_steps s
         WHERE s.state = 'available' AND s.queue_bucket > 0 AND s.scheduled_at <= cyclone.now()
         LIMIT 1;
        IF FOUND THEN
            PERFORM pg_notify('cyclone_wakeup', '');
        END IF;
    END IF;
    RETURN NULL;
END
$$;
CREATE TRIGGER cyclone_steps_release_slots
    AFTER UPDATE OF state ON cyclone.cyclone_steps
    FOR EACH ROW
    WHEN (OLD.state = 'running' AND NEW.state <> 'running' AND OLD.buckets <> '{}')
    EXECUTE FUNCTION cyclone._release_slots();

CREATE OR REPLACE FUNCTION cyclone.define_limit(
    p_name text,
    p_concurrency int DEFAULT NULL,
    p_rate int DEFAULT NULL,
    p_period interval DEFAULT NULL)
RETURNS void
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = cyclone, pg_temp
AS $$
BEGIN
    PERFORM cyclone._require_given('define_limit', p_name IS NOT NULL, 'p_name is required');
    PERFORM cyclone._require('define_limit', cyclone._name_problem(p_name) IS NULL,
        format('the limit name %s %s', cyclone._shown(p_name), cyclone._name_problem(p_name)));
    PERFORM cyclone._require('define_limit', p_concurrency IS NOT NULL OR p_rate IS NOT NULL OR p_period IS NOT NULL,
        'give p_concurrency, or p_rate with p_period, or both');
    PERFORM cyclone._require('define_limit', (p_rate IS NULL) = (p_period IS NULL),
        'p_rate and p_period come together');
    PERFORM cyclone._require('define_limit', coalesce(p_concurrency > 0, true),
        format('p_concurrency must be positive, got %s', p_concurrency));
    PERFORM cyclone._require('define_limit', coalesce(p_rate > 0, true), format('p_rate must be positive, got %s', p_rate));
    PERFORM cyclone._require('define_limit', coalesce(p_period > interval '0', true),
        format('p_period must be positive, got %s', p_period));
    INSERT INTO cyclone_limits AS l (name, concurrency, rate, period, updated_at)
    VALUES (p_name, p_concurrency, p_rate, p_period, cyclone.now())
    ON CONFLICT (name) DO UPDATE
       SET concurrency = excluded.concurrency, rate = excluded.rate, period = excluded.period,
           updated_at = excluded.updated_at;
END
$$;

CREATE OR REPLACE FUNCTION cyclone.drop_limit(p_name text)
RETURNS boolean
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = cyclone, pg_temp
AS $$
DECLARE
    v_workflow text;
    v_step bigint;
BEGIN
    PERFORM cyclone._require_given('drop_limit', p_name IS NOT NULL, 'p_name is required');
    -- The row lock orders this against define_workflow naming the limit and
    -- against a submit creating one of its buckets.
    PERFORM 1 FROM cyclone_limits l WHERE l.name = p_name FOR UPDATE;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    SELECT min(w.name) INTO v_workflow
      FROM cyclone_workflows w
     WHERE EXISTS (SELECT 1 FROM jsonb_array_elements(coalesce(w.definition -> 'limits', '[]')) l
                    WHERE l ->> 'name' = p_name)
        OR EXISTS (SELECT 1 FROM jsonb_array_elements(w.definition -> 'nodes') n,
                                 jsonb_array_elements(coalesce(n -> 'limits', '[]')) l
                    WHERE l ->> 'name' = p_name);
    IF v_workflow IS NOT NULL THEN
        RAISE EXCEPTION 'drop_limit: limit % is named by workflow %', cyclone._shown(p_name), cyclone._shown(v_workflow)
            USING ERRCODE = '55000';
    END IF;
    SELECT min(s.id) INTO v_step
      FROM cyclone_steps s
     WHERE s.buckets <> '{}' AND s.finished_at IS NULL
       AND s.buckets && ARRAY(SELECT b.id FROM cyclone_buckets b WHERE b.limit_name = p_name);
    IF v_step IS NOT NULL THEN
        RAISE EXCEPTION 'drop_limit: limit % is taken by step % (not finished)', cyclone._shown(p_name), v_step
            USING ERRCODE = '55000';
    END IF;
    DELETE FROM cyclone_limits l WHERE l.name = p_name;  -- its buckets, slots and claim times go with it
    RETURN true;
END
$$;

COMMIT;
