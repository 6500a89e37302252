-- Bench-only helpers, loaded into the benchmark's own databases (never part of
-- the sqitch deployment). They write the engine's tables directly, which only
-- the benchmark may do, and only to make big backlogs fast.

CREATE SCHEMA IF NOT EXISTS bench;

-- The template runs, as cyclone.submit() wrote them: copied here by the first
-- clone_runs() call, so that later copies do not pick up what happened to the
-- original since (it is a run like the others and may be claimed).
CREATE TABLE IF NOT EXISTS bench.tpl_runs (LIKE cyclone.cyclone_runs);
CREATE TABLE IF NOT EXISTS bench.tpl_steps (LIKE cyclone.cyclone_steps);

-- p_n copies of a run that cyclone.submit() created (its row and all its step
-- rows, every column but the ids), in one statement: about 20k runs/s here,
-- against 11-17k for submit_many(), which also cannot schedule runs for later
-- (the prune baseline needs that). The copies are what submit() would have
-- written for the same input at the same instant.
CREATE OR REPLACE FUNCTION bench.clone_runs(p_template uuid, p_n int)
RETURNS int
LANGUAGE plpgsql
AS $$
DECLARE
    v_run_cols text;
    v_step_cols text;
    v_count int;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM bench.tpl_runs WHERE id = p_template) THEN
        INSERT INTO bench.tpl_runs SELECT * FROM cyclone.cyclone_runs WHERE id = p_template;
        INSERT INTO bench.tpl_steps SELECT * FROM cyclone.cyclone_steps WHERE run_id = p_template;
    END IF;
    SELECT string_agg(quote_ident(a.attname), ', ' ORDER BY a.attnum) INTO v_run_cols
      FROM pg_attribute a
     WHERE a.attrelid = 'cyclone.cyclone_runs'::regclass AND a.attnum > 0 AND NOT a.attisdropped
       AND a.attname <> 'id';
    SELECT string_agg(quote_ident(a.attname), ', ' ORDER BY a.attnum) INTO v_step_cols
      FROM pg_attribute a
     WHERE a.attrelid = 'cyclone.cyclone_steps'::regclass AND a.attnum > 0 AND NOT a.attisdropped
       AND a.attname NOT IN ('id', 'run_id');
    EXECUTE format($f$
        WITH ids AS (
            SELECT gen_random_uuid() AS id FROM generate_series(1, $2)
        ), runs AS (
            INSERT INTO cyclone.cyclone_runs (id, %1$s)
            SELECT ids.id, %2$s FROM ids CROSS JOIN (SELECT * FROM bench.tpl_runs WHERE id = $1) r
            RETURNING id
        ), steps AS (
            INSERT INTO cyclone.cyclone_steps (run_id, %3$s)
            SELECT runs.id, %4$s FROM runs CROSS JOIN (SELECT * FROM bench.tpl_steps WHERE run_id = $1 ORDER BY id) s
            RETURNING 1
        )
        SELECT count(*) FROM steps$f$,
        v_run_cols,
        (SELECT string_agg('r.' || c, ', ') FROM unnest(string_to_array(v_run_cols, ', ')) c),
        v_step_cols,
        (SELECT string_agg('s.' || c, ', ') FROM unnest(string_to_array(v_step_cols, ', ')) c))
    INTO v_count USING p_template, p_n;
    RETURN v_count;
END
$$;

-- The raw SKIP LOCKED baseline's queue (bench/raw_queue.py).
CREATE TABLE IF NOT EXISTS public.bench_raw_jobs (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    state      text NOT NULL DEFAULT 'available',
    payload    jsonb NOT NULL,
    output     jsonb,
    claimed_at timestamptz,
    done_at    timestamptz
);
CREATE INDEX IF NOT EXISTS bench_raw_jobs_available ON public.bench_raw_jobs (id) WHERE state = 'available';
