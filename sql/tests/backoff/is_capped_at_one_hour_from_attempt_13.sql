-- The cap: 2^12 s = 4096 s would exceed an hour, so from attempt 13 on d is
-- 1 hour and the delay lies in [30 min, 1 hour]; attempt 12 is still uncapped.
BEGIN;
SELECT plan(6);

CREATE TEMP TABLE samples AS
SELECT a AS attempt, extract(epoch FROM cyclone.backoff(a)) AS secs
  FROM generate_series(12, 20) a, generate_series(1, 1000) i;

SELECT ok((SELECT min(secs) >= 1024 AND max(secs) <= 2048 FROM samples WHERE attempt = 12),
          'attempt 12 is uncapped: [1024 s, 2048 s]');
SELECT ok((SELECT max(secs) > 1843 FROM samples WHERE attempt = 12),
          'attempt 12 reaches near 2048 s');
SELECT ok((SELECT max(secs) <= 3600 FROM samples WHERE attempt = 13),
          'attempt 13 never exceeds one hour (uncapped it would reach 4096 s)');
SELECT ok((SELECT min(secs) < 2048 FROM samples WHERE attempt = 13),
          'attempt 13 goes below 2048 s: its window is [30 min, 1 hour], not [2048 s, 4096 s]');
SELECT ok((SELECT min(secs) >= 1800 AND max(secs) <= 3600 FROM samples WHERE attempt >= 13),
          'attempts 13..20 all lie in [30 min, 1 hour]');
SELECT ok((SELECT max(secs) > 3500 AND min(secs) < 1900 FROM samples WHERE attempt >= 13),
          'capped delays still jitter across [30 min, 1 hour]');

SELECT * FROM finish();
ROLLBACK;
