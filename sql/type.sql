-- The simhash type: text and binary I/O, casts, comparison and hashing.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS simhash;
RESET client_min_messages;

-- canonical form: 16 hex digits, lower-case out, either case in
SELECT '0123456789abcdef'::simhash, 'FEDCBA9876543210'::simhash, 'aBcDeF0123456789'::simhash;
SELECT '0000000000000000'::simhash, 'ffffffffffffffff'::simhash;

-- every class of bad input: SQLSTATE 22P02 with a hint
\set VERBOSITY default
SELECT ''::simhash;
SELECT '0123456789abcde'::simhash;
SELECT '0123456789abcdef0'::simhash;
SELECT '0123456789abcdeg'::simhash;
SELECT '0x23456789abcdef'::simhash;
-- the parser reads simhash('literal') as a cast, and the hint shows the fix
SELECT simhash('hello world');
SELECT simhash('hello world'::text) = simhash(body => 'hello world') AS named_argument_fingerprints;
\set VERBOSITY terse
DO $$ BEGIN PERFORM 'xyz'::simhash; EXCEPTION WHEN invalid_text_representation THEN RAISE NOTICE 'sqlstate 22P02'; END $$;

-- binary I/O round trip (COPY BINARY)
CREATE TEMP TABLE io (fp simhash);
INSERT INTO io VALUES ('0123456789abcdef'), ('8000000000000001'), ('ffffffffffffffff'), (NULL);
COPY io TO '/tmp/simhash_io.bin' WITH (FORMAT binary);
CREATE TEMP TABLE io2 (fp simhash);
COPY io2 FROM '/tmp/simhash_io.bin' WITH (FORMAT binary);
SELECT (SELECT array_agg(fp ORDER BY fp) FROM io) IS NOT DISTINCT FROM (SELECT array_agg(fp ORDER BY fp) FROM io2) AS binary_round_trip;
SELECT simhash_send('0123456789abcdef');

-- casts: bit-for-bit and explicit
SELECT '0123456789abcdef'::simhash::bigint, 'ffffffffffffffff'::simhash::bigint, (-2)::bigint::simhash;
SELECT '8000000000000000'::simhash::bigint::simhash;
SELECT '0123456789abcdef'::simhash::bit(64);
SELECT B'1111111111111111111111111111111111111111111111111111111111111110'::simhash;
SELECT ('0123456789abcdef'::simhash::bit(64))::simhash;
SELECT '0123456789abcdef'::simhash::bytea, '\x0123456789abcdef'::bytea::simhash;
SELECT '0123456789abcdef'::simhash::bit(32);
SELECT B'101'::simhash;
SELECT '\x0123'::bytea::simhash;
SELECT 42::simhash;  -- integer needs an explicit bigint: no implicit casts exist
CREATE TEMP TABLE no_assign (fp simhash);
INSERT INTO no_assign VALUES (1::bigint);

-- comparison is the unsigned order of the value, i.e. the order of the hex text
SELECT fp FROM (VALUES ('8000000000000000'::simhash), ('7fffffffffffffff'), ('0000000000000001'), ('ffffffffffffffff')) v(fp) ORDER BY fp;
SELECT '8000000000000000'::simhash > '7fffffffffffffff'::simhash AS unsigned_order,
       '0123456789abcdef'::simhash = '0123456789ABCDEF'::simhash AS eq,
       '0123456789abcdef'::simhash <> '0123456789abcdee'::simhash AS ne,
       '0000000000000001'::simhash <= '0000000000000001'::simhash AS le,
       '0000000000000002'::simhash >= '0000000000000001'::simhash AS ge,
       '0000000000000001'::simhash < '0000000000000002'::simhash AS lt;

-- btree and hash opclasses: UNIQUE, DISTINCT, GROUP BY, merge and hash joins
CREATE TEMP TABLE fps AS
SELECT i, (((i * 7919) % 50)::bigint * 1234567891011)::simhash AS fp FROM generate_series(1, 200) i;
SELECT count(DISTINCT fp) AS distinct_fps, (SELECT count(*) FROM (SELECT fp FROM fps GROUP BY fp) g) AS groups FROM fps;
CREATE TEMP TABLE uniq (fp simhash UNIQUE);
INSERT INTO uniq VALUES ('0123456789abcdef');
INSERT INTO uniq VALUES ('0123456789ABCDEF');
SET enable_hashjoin = off; SET enable_nestloop = off;
EXPLAIN (COSTS OFF) SELECT count(*) FROM fps a JOIN fps b ON a.fp = b.fp;
SELECT count(*) AS merge_join_rows FROM fps a JOIN fps b ON a.fp = b.fp;
RESET enable_hashjoin; SET enable_mergejoin = off;
EXPLAIN (COSTS OFF) SELECT count(*) FROM fps a JOIN fps b ON a.fp = b.fp;
SELECT count(*) AS hash_join_rows FROM fps a JOIN fps b ON a.fp = b.fp;
RESET enable_mergejoin; RESET enable_nestloop;
-- hash values are of the value, not of its bytes in memory
SELECT simhash_hash('0123456789abcdef'), simhash_hash_extended('0123456789abcdef', 0), simhash_hash_extended('0123456789abcdef', 1);
CREATE TEMP TABLE parts (fp simhash) PARTITION BY HASH (fp);
CREATE TEMP TABLE parts0 PARTITION OF parts FOR VALUES WITH (MODULUS 2, REMAINDER 0);
CREATE TEMP TABLE parts1 PARTITION OF parts FOR VALUES WITH (MODULUS 2, REMAINDER 1);
INSERT INTO parts SELECT fp FROM fps;
SELECT count(*) = 200 AS all_routed, (SELECT count(*) FROM parts0) > 0 AND (SELECT count(*) FROM parts1) > 0 AS both_used FROM parts;

-- Hamming distance: an integer in all but name
SELECT '0000000000000000'::simhash <~> 'ffffffffffffffff'::simhash AS d64,
       '0123456789abcdef'::simhash <~> '0123456789abcdef'::simhash AS d0,
       hamming_distance('0000000000000000', '0000000000000007') AS d3;
SELECT pg_typeof('0000000000000000'::simhash <~> '0000000000000001'::simhash);
SELECT ('0000000000000000'::simhash <~> '0000000000000007'::simhash) + 1 AS plus_one,
       ('0000000000000000'::simhash <~> '0000000000000007'::simhash) * 2.5 AS times_numeric,
       ('0000000000000000'::simhash <~> '0000000000000007'::simhash) < 3.5 AS lt_numeric,
       ('0000000000000000'::simhash <~> '0000000000000007'::simhash)::bigint AS as_bigint;
SELECT avg(fp <~> '0000000000000000'), sum(fp <~> '0000000000000000'), max(fp <~> '0000000000000000') FROM io;
SELECT fp, fp <~> 'ffffffffffffffff' AS d FROM io WHERE fp IS NOT NULL ORDER BY d, fp;
SELECT NULL::simhash <~> '0000000000000000' AS null_distance;
