-- _clipped (03_checks.sql), how the engine stores a caller's error text: up to 65,536 characters as
-- given; a longer one as its first and last 32,000 characters around a marker line that says how many
-- characters were cut.
BEGIN;
SELECT plan(7);

SELECT is(cyclone._clipped(repeat('a', 65536)), repeat('a', 65536), '65,536 characters are kept whole');
SELECT is(cyclone._clipped(NULL), NULL, 'NULL stays NULL');
SELECT is(cyclone._clipped('short'), 'short', 'a short text is kept as it is');

CREATE TEMP TABLE t AS SELECT cyclone._clipped(repeat('h', 50000) || repeat('é', 20000) || repeat('t', 50000)) AS c;
SELECT ok((SELECT left(c, 32000) = repeat('h', 32000) FROM t), 'the first 32,000 characters are kept');
SELECT ok((SELECT right(c, 32000) = repeat('t', 32000) FROM t), 'the last 32,000 characters are kept');
SELECT is((SELECT substr(c, 32001, char_length(c) - 64000) FROM t),
          E'\n[... 56000 characters cut: the engine keeps the first and the last 32000 characters of a text over 65536 ...]\n',
          'between them, a line says how many characters were cut (characters, not bytes)');
SELECT cmp_ok((SELECT char_length(c) FROM t), '<=', 65536, 'the result is within the limit');

SELECT * FROM finish();
ROLLBACK;
