-- backoff(a): d = least(1 hour, 2^(a-1) s), uniform in [d/2, d]. 500 samples per
-- attempt: every sample inside [d/2, d], and the samples really jitter (they are
-- not all equal and reach both ends of the window).
BEGIN;
SELECT plan(40);

CREATE TEMP TABLE samples AS
SELECT a AS attempt,
       least(3600, 2 ^ (a - 1))::numeric AS d,
       extract(epoch FROM cyclone.backoff(a)) AS secs
  FROM generate_series(1, 20) a, generate_series(1, 500) i;

SELECT ok(min(secs) >= d / 2 AND max(secs) <= d,
          format('attempt %s: every sample in [%s s, %s s] (got %s .. %s)', attempt, d / 2, d, min(secs), max(secs)))
  FROM samples GROUP BY attempt, d ORDER BY attempt;

SELECT ok(count(DISTINCT secs) > 1 AND min(secs) < d / 2 + d / 10 AND max(secs) > d - d / 10,
          format('attempt %s: samples jitter across the window (%s distinct)', attempt, count(DISTINCT secs)))
  FROM samples GROUP BY attempt, d ORDER BY attempt;

SELECT * FROM finish();
ROLLBACK;
