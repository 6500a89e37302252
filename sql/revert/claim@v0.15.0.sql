-- Revert cyclone:claim (back to its v0.13.0 state: _admit as v0.11.0
-- deployed it, which knows no rate debt)
BEGIN;

-- Chooses which of the locked candidates are claimed. For each bucket they
-- take, by id: takes up to as many free slots (concurrency) and locks as many
-- free tokens (rate) as candidates take it, with SKIP LOCKED; when too few are
-- free, locks the bucket row if no other claim holds it and adds slots or
-- tokens up to the limit, counting what the bucket has (a claim never waits
-- for a bucket row). Then admits candidates in claim order — priority,
-- then one per fairness group per turn, groups least recently served first
-- (never served first), then scheduled_at, id — while every bucket a candidate takes has a slot and a
-- token left, up to p_limit (one statement when no candidate takes two
-- buckets). Each admitted step holds a slot of each of its concurrency
-- buckets (cyclone_slots) and sets a token of each rate bucket to now. Each
-- group's last serve (each row one serve) is written unless another claim is
-- writing it (fairness in order, not under a lock). Returns the ids in claim
-- order.
CREATE OR REPLACE FUNCTION cyclone._admit(p_candidates bigint[], p_limit int, p_now timestamptz)
RETURNS bigint[]
LANGUAGE plpgsql
AS $$
DECLARE
    v_c cyclone._claim_candidate[];
    v_fair boolean;
    v_bucket record;
    v_got bigint[];
    v_room int;
    v_locked boolean;
    v_bids bigint[] := '{}'::bigint[];
    v_rooms int[] := '{}'::int[];
    v_slots int;
    v_add int;
    v_used int;
    v_slot_bucket bigint[] := '{}'::bigint[];
    v_slot_count int[] := '{}'::int[];
    v_token_bucket bigint[] := '{}'::bigint[];
    v_token_id bigint[] := '{}'::bigint[];
    v_step record;
    v_i int;
    v_ids bigint[] := '{}'::bigint[];
    v_groups bigint[] := '{}'::bigint[];
    v_base bigint;
BEGIN
    -- The candidates' columns this needs, read once.
    v_c := ARRAY(SELECT ROW(s.id, s.buckets, s.fair_bucket, s.priority, s.scheduled_at)::cyclone._claim_candidate
                   FROM cyclone_steps s WHERE s.id = ANY (p_candidates));
    v_fair := EXISTS (SELECT 1 FROM unnest(v_c) s WHERE s.fair_bucket <> 0);
    FOR v_bucket IN
        SELECT n.id, n.need, l.concurrency, l.rate, l.period
          FROM (SELECT b.id, least(count(*), p_limit)::int AS need
                  FROM unnest(v_c) s CROSS JOIN unnest(s.buckets) AS b(id)
                 GROUP BY b.id) n
          JOIN cyclone_buckets k ON k.id = n.id
          JOIN cyclone_limits l ON l.name = k.limit_name
         ORDER BY n.id
    LOOP
        v_room := v_bucket.need;
        v_locked := false;
        IF v_bucket.concurrency IS NOT NULL THEN
            -- Free slots no other claim is taking; then, when too few and no
            -- other claim holds the bucket row, new ones up to the concurrency,
            -- counted under its lock: whoever added slots before has committed
            -- them, a slot another claim is taking or giving back is counted
            -- once, and the ones taken here are in neither table for now. A
            -- bucket with no slot to give is full with steps queued: the next
            -- slot given back wakes idle workers (held_back).
            WITH taken AS (
                DELETE FROM cyclone_free_slots f
                 WHERE f.id = ANY (ARRAY(SELECT x.id FROM cyclone_free_slots x WHERE x.bucket_id = v_bucket.id
                                          ORDER BY x.id LIMIT v_bucket.need FOR UPDATE SKIP LOCKED))
                RETURNING 1)
            SELECT count(*)::int INTO v_slots FROM taken;
            IF v_slots < v_bucket.need THEN
                PERFORM 1 FROM cyclone_buckets k WHERE k.id = v_bucket.id FOR UPDATE SKIP LOCKED;
                v_locked := FOUND;
            END IF;
            IF v_slots < v_bucket.need AND v_locked THEN
                v_add := least(v_bucket.need - v_slots, v_bucket.concurrency - v_slots
                    - (SELECT count(*) FROM (SELECT 1 FROM cyclone_slots x WHERE x.bucket_id = v_bucket.id
                                              LIMIT v_bucket.concurrency) y)::int
                    - (SELECT count(*) FROM (SELECT 1 FROM cyclone_free_slots f WHERE f.bucket_id = v_bucket.id
                                              LIMIT v_bucket.concurrency) y)::int);
                v_slots := v_slots + greatest(v_add, 0);
                IF v_slots < v_bucket.need THEN
                    UPDATE cyclone_buckets k SET held_back = true WHERE k.id = v_bucket.id AND NOT k.held_back;
                END IF;
            END IF;
            v_room := least(v_room, v_slots);
            v_slot_bucket := v_slot_bucket || v_bucket.id;
            v_slot_count := v_slot_count || v_slots;
        END IF;
        IF v_bucket.rate IS NOT NULL THEN
            v_got := ARRAY(SELECT c.id FROM cyclone_bucket_claims c
                            WHERE c.bucket_id = v_bucket.id AND c.at <= p_now - v_bucket.period
                            ORDER BY c.at LIMIT v_bucket.need FOR UPDATE SKIP LOCKED);
            IF cardinality(v_got) < v_bucket.need AND NOT v_locked THEN
                PERFORM 1 FROM cyclone_buckets k WHERE k.id = v_bucket.id FOR UPDATE SKIP LOCKED;
                v_locked := FOUND;
            END IF;
            IF cardinality(v_got) < v_bucket.need AND v_locked THEN
                WITH added AS (
                    INSERT INTO cyclone_bucket_claims (bucket_id, at)
                    SELECT v_bucket.id, '-infinity'
                      FROM generate_series(1, least(v_bucket.need - cardinality(v_got), v_bucket.rate
                               - (SELECT count(*) FROM (SELECT 1 FROM cyclone_bucket_claims c WHERE c.bucket_id = v_bucket.id
                                                         LIMIT v_bucket.rate) y)::int))
                    RETURNING id)
                SELECT v_got || coalesce(array_agg(a.id), '{}'::bigint[]) INTO v_got FROM added a;
            END IF;
            v_room := least(v_room, cardinality(v_got));
            v_token_bucket := v_token_bucket || array_fill(v_bucket.id, ARRAY[cardinality(v_got)]);
            v_token_id := v_token_id || v_got;
        END IF;
        v_bids := v_bids || v_bucket.id;
        v_rooms := v_rooms || v_room;
    END LOOP;

    IF NOT EXISTS (SELECT 1 FROM unnest(v_c) s WHERE cardinality(s.buckets) > 1) THEN
        -- Each candidate takes one bucket at most: the loop below would admit
        -- exactly those within their bucket's room by rank in claim order, up
        -- to p_limit; one statement says so.
        WITH groups AS MATERIALIZED (
            SELECT g.id, g.served FROM cyclone_buckets g
             WHERE g.id = ANY (ARRAY(SELECT DISTINCT c.fair_bucket FROM unnest(v_c) c))
        ), turns AS (
            SELECT s.id, s.priority, s.fair_bucket, s.scheduled_at, s.buckets[1] AS bucket, g.served,
                   row_number() OVER (PARTITION BY s.priority, s.fair_bucket ORDER BY s.scheduled_at, s.id) AS turn
              FROM unnest(v_c) s
              JOIN groups g ON g.id = s.fair_bucket
        ), ordered AS (
            SELECT t.id, t.fair_bucket, t.bucket,
                   row_number() OVER (ORDER BY t.priority, t.turn, t.served NULLS FIRST, t.fair_bucket,
                                               t.scheduled_at, t.id) AS ord
              FROM turns t
        ), ranked AS (
            SELECT o.id, o.fair_bucket, o.bucket, o.ord, row_number() OVER (PARTITION BY o.bucket ORDER BY o.ord) AS rank
              FROM ordered o
        )
        SELECT coalesce(array_agg(a.id ORDER BY a.ord), '{}'::bigint[]),
               coalesce(array_agg(a.fair_bucket ORDER BY a.ord), '{}'::bigint[])
          INTO v_ids, v_groups
          FROM (SELECT r.id, r.fair_bucket, r.ord FROM ranked r
                 WHERE r.bucket IS NULL OR r.rank <= v_rooms[array_position(v_bids, r.bucket)]
                 ORDER BY r.ord LIMIT p_limit) a;
    ELSE
        FOR v_step IN
            SELECT s.id, s.buckets, s.fair_bucket
              FROM unnest(v_c) s
              JOIN cyclone_buckets g ON g.id = s.fair_bucket
             ORDER BY s.priority,
                      row_number() OVER (PARTITION BY s.priority, s.fair_bucket ORDER BY s.scheduled_at, s.id),
                      g.served NULLS FIRST, s.fair_bucket, s.scheduled_at, s.id
        LOOP
            CONTINUE WHEN EXISTS (SELECT 1 FROM unnest(v_step.buckets) b WHERE v_rooms[array_position(v_bids, b)] <= 0);
            FOREACH v_i IN ARRAY ARRAY(SELECT array_position(v_bids, b) FROM unnest(v_step.buckets) b) LOOP
                v_rooms[v_i] := v_rooms[v_i] - 1;
            END LOOP;
            v_ids := v_ids || v_step.id;
            v_groups := v_groups || v_step.fair_bucket;
            EXIT WHEN cardinality(v_ids) >= p_limit;
        END LOOP;
    END IF;

    -- Each admitted step holds a slot in each of its concurrency buckets; the
    -- slots taken and not held are free again.
    IF cardinality(v_slot_bucket) > 0 THEN
        INSERT INTO cyclone_slots (bucket_id, step_id)
        SELECT b.id, s.id
          FROM unnest(v_c) s CROSS JOIN unnest(s.buckets) AS b(id)
         WHERE s.id = ANY (v_ids) AND b.id = ANY (v_slot_bucket);
        GET DIAGNOSTICS v_used = ROW_COUNT;
        IF v_used < (SELECT sum(n) FROM unnest(v_slot_count) n) THEN
            INSERT INTO cyclone_free_slots (bucket_id)
            SELECT u.bucket
              FROM unnest(v_slot_bucket, v_slot_count) AS u(bucket, n)
             CROSS JOIN LATERAL generate_series(1, u.n - (SELECT count(*) FROM unnest(v_c) s
                                                            WHERE s.id = ANY (v_ids) AND u.bucket = ANY (s.buckets))::int);
        END IF;
    END IF;
    -- The n-th admitted step of a rate bucket takes the n-th token locked in it.
    IF cardinality(v_token_id) > 0 THEN
        WITH taken AS (
            SELECT b.id AS bucket_id, row_number() OVER (PARTITION BY b.id ORDER BY s.id) AS n
              FROM unnest(v_c) s CROSS JOIN unnest(s.buckets) AS b(id)
             WHERE s.id = ANY (v_ids) AND b.id = ANY (v_token_bucket)
        ), tokens AS (
            SELECT k.bucket_id, k.id, row_number() OVER (PARTITION BY k.bucket_id ORDER BY k.ord) AS n
              FROM unnest(v_token_bucket, v_token_id) WITH ORDINALITY AS k(bucket_id, id, ord)
        )
        UPDATE cyclone_bucket_claims c SET at = p_now
          FROM taken t JOIN tokens k ON k.bucket_id = t.bucket_id AND k.n = t.n
         WHERE c.id = k.id;
    END IF;
    IF v_fair THEN
        -- The n-th row of this claim is serve (serial * 2^20 + n): later than
        -- every serve of an earlier claim, in order within this one.
        v_base := nextval('cyclone.cyclone_serve_seq') * 1048576;
        UPDATE cyclone_buckets k SET served = x.served
          FROM (SELECT u.g, v_base + max(least(u.n, 1048575)) AS served
                  FROM unnest(v_groups) WITH ORDINALITY AS u(g, n) GROUP BY u.g) x
         WHERE k.id = x.g
           AND k.id = ANY (ARRAY(SELECT b.id FROM cyclone_buckets b WHERE b.id = ANY (v_groups) FOR UPDATE SKIP LOCKED));
    END IF;
    RETURN v_ids;
END
$$;

COMMIT;
