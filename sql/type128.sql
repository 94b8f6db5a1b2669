-- The simhash128 type: text and binary I/O, casts, comparison, hashing and
-- the Hamming distance.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS simhash;
RESET client_min_messages;

-- canonical form: 32 hex digits, lower-case out, either case in, white space around
SELECT '0123456789abcdef0123456789abcdef'::simhash128, 'FEDCBA9876543210FEDCBA9876543210'::simhash128;
SELECT '00000000000000000000000000000000'::simhash128, 'ffffffffffffffffffffffffffffffff'::simhash128;
SELECT E' \t0123456789abcdef0123456789abcdef\n'::simhash128 AS spaces_around;
SELECT pg_column_size('0123456789abcdef0123456789abcdef'::simhash128) AS bytes;

-- every class of bad input: SQLSTATE 22P02 with a hint
\set VERBOSITY default
SELECT ''::simhash128;
SELECT '0123456789abcdef'::simhash128;
SELECT '0123456789abcdef0123456789abcde'::simhash128;
SELECT '0123456789abcdef0123456789abcdef0'::simhash128;
SELECT '0123456789abcdef0123456789abcdeg'::simhash128;
SELECT '0123456789abcdef 0123456789abcdef'::simhash128;
SELECT '0x23456789abcdef0123456789abcdef'::simhash128;
\set VERBOSITY terse
DO $$ BEGIN PERFORM 'xyz'::simhash128; EXCEPTION WHEN invalid_text_representation THEN RAISE NOTICE 'sqlstate 22P02'; END $$;

-- NULLs: every function is strict
SELECT NULL::simhash128 AS null_value, NULL::simhash128 <~> '0123456789abcdef0123456789abcdef' AS null_distance,
       NULL::simhash128 = '0123456789abcdef0123456789abcdef' AS null_eq, NULL::simhash128::bytea AS null_bytea,
       simhash128_high(NULL) AS null_high;

-- binary I/O: 16 bytes, most significant first; round trip through COPY BINARY
SELECT simhash128_send('0123456789abcdeffedcba9876543210');
CREATE TEMP TABLE io (fp simhash128);
INSERT INTO io VALUES ('0123456789abcdeffedcba9876543210'), ('80000000000000000000000000000001'),
	('ffffffffffffffffffffffffffffffff'), ('00000000000000000000000000000000'), (NULL);
COPY io TO '/tmp/simhash128_io.bin' WITH (FORMAT binary);
CREATE TEMP TABLE io2 (fp simhash128);
COPY io2 FROM '/tmp/simhash128_io.bin' WITH (FORMAT binary);
SELECT (SELECT array_agg(fp ORDER BY fp) FROM io) IS NOT DISTINCT FROM (SELECT array_agg(fp ORDER BY fp) FROM io2) AS binary_round_trip,
       (SELECT count(*) FROM io2 WHERE fp IS NULL) AS nulls_kept;

-- casts: explicit and bit-for-bit, the same bytes as the binary form
SELECT '0123456789abcdeffedcba9876543210'::simhash128::bytea;
SELECT '\x0123456789abcdeffedcba9876543210'::bytea::simhash128;
SELECT '0123456789abcdeffedcba9876543210'::simhash128::bytea = simhash128_send('0123456789abcdeffedcba9876543210') AS bytea_is_binary_form;
SELECT '8000000000000000000000000000000f'::simhash128::bit(128);
SELECT ('0123456789abcdeffedcba9876543210'::simhash128::bit(128))::simhash128 AS bit_round_trip,
       ('0123456789abcdeffedcba9876543210'::simhash128::bit(128)::varbit)::simhash128 AS varbit_round_trip;
SELECT '0123456789abcdeffedcba9876543210'::simhash128::bit(64);
SELECT B'101'::simhash128;
SELECT '\x0123'::bytea::simhash128;
SELECT '\x0123456789abcdeffedcba987654321000'::bytea::simhash128;
CREATE TEMP TABLE no_assign (fp simhash128);
INSERT INTO no_assign VALUES ('\x0123456789abcdeffedcba9876543210'::bytea);
-- the halves, as 64-bit fingerprints
SELECT simhash128_high('0123456789abcdeffedcba9876543210'), simhash128_low('0123456789abcdeffedcba9876543210');

-- comparison is the unsigned order of the value, i.e. the order of the hex text
SELECT fp FROM (VALUES ('80000000000000000000000000000000'::simhash128), ('7fffffffffffffffffffffffffffffff'),
	('00000000000000000000000000000001'), ('00000000000000010000000000000000'), ('0000000000000000ffffffffffffffff'),
	('ffffffffffffffffffffffffffffffff')) v(fp) ORDER BY fp;
SELECT '80000000000000000000000000000000'::simhash128 > '7fffffffffffffffffffffffffffffff'::simhash128 AS unsigned_order,
       '0000000000000000ffffffffffffffff'::simhash128 < '00000000000000010000000000000000'::simhash128 AS high_half_first,
       '0123456789abcdef0123456789abcdef'::simhash128 = '0123456789ABCDEF0123456789ABCDEF'::simhash128 AS eq,
       '0123456789abcdef0123456789abcdef'::simhash128 <> '0123456789abcdef0123456789abcdee'::simhash128 AS ne,
       '00000000000000000000000000000001'::simhash128 <= '00000000000000000000000000000001'::simhash128 AS le,
       '00000000000000000000000000000002'::simhash128 >= '00000000000000000000000000000001'::simhash128 AS ge,
       '00000000000000000000000000000001'::simhash128 < '00000000000000000000000000000002'::simhash128 AS lt,
       '00000000000000000000000000000002'::simhash128 > '00000000000000000000000000000001'::simhash128 AS gt;
-- the order agrees with the text's, on values that differ in either half
CREATE TEMP TABLE fps AS
SELECT i, (lpad(to_hex((i * 7919) % 37), 16, '0') || lpad(to_hex(((i * 104729) % 41) * 1234567), 16, '0'))::simhash128 AS fp
FROM generate_series(1, 300) i;
SELECT bool_and(a.fp < b.fp) = bool_and(a.fp::text < b.fp::text COLLATE "C") AS order_is_text_order,
       count(*) FILTER (WHERE a.fp < b.fp) = count(*) FILTER (WHERE a.fp::text < b.fp::text COLLATE "C") AS same_count
FROM fps a, fps b WHERE a.i < b.i AND a.fp <> b.fp;

-- btree and hash opclasses: UNIQUE, DISTINCT, GROUP BY, merge and hash joins
SELECT count(DISTINCT fp) AS distinct_fps, (SELECT count(*) FROM (SELECT fp FROM fps GROUP BY fp) g) AS groups,
       count(DISTINCT fp::text) AS distinct_texts FROM fps;
CREATE TEMP TABLE uniq (fp simhash128 UNIQUE);
INSERT INTO uniq VALUES ('0123456789abcdef0123456789abcdef');
INSERT INTO uniq VALUES ('0123456789ABCDEF0123456789ABCDEF');
CREATE INDEX fps_btree ON fps (fp);
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT i FROM fps WHERE fp = '00000000000000070000000001b14621';
SELECT array_agg(i ORDER BY i) = (SELECT array_agg(i ORDER BY i) FROM fps WHERE fp::text = '00000000000000070000000001b14621') AS index_eq_text
FROM fps WHERE fp = '00000000000000070000000001b14621';
RESET enable_seqscan;
SET enable_hashjoin = off; SET enable_nestloop = off;
EXPLAIN (COSTS OFF) SELECT count(*) FROM fps a JOIN fps b ON a.fp = b.fp;
SELECT count(*) AS merge_join_rows FROM fps a JOIN fps b ON a.fp = b.fp;
RESET enable_hashjoin; SET enable_mergejoin = off;
EXPLAIN (COSTS OFF) SELECT count(*) FROM fps a JOIN fps b ON a.fp = b.fp;
SELECT count(*) AS hash_join_rows FROM fps a JOIN fps b ON a.fp = b.fp;
SELECT count(*) AS text_join_rows FROM fps a JOIN fps b ON a.fp::text = b.fp::text;
RESET enable_mergejoin; RESET enable_nestloop;
-- hash values are of the 16 big-endian bytes, the same on every platform
SELECT simhash128_hash('0123456789abcdeffedcba9876543210'),
       simhash128_hash_extended('0123456789abcdeffedcba9876543210', 0),
       simhash128_hash_extended('0123456789abcdeffedcba9876543210', 1);
-- the extended hash of seed 0 has the plain hash in its low 32 bits (as the hash opclass requires)
SELECT bool_and((simhash128_hash_extended(fp, 0) & 4294967295) = (simhash128_hash(fp)::bigint & 4294967295)) AS extended_seed0_low32_matches
FROM fps;
CREATE TEMP TABLE parts (fp simhash128) PARTITION BY HASH (fp);
CREATE TEMP TABLE parts0 PARTITION OF parts FOR VALUES WITH (MODULUS 2, REMAINDER 0);
CREATE TEMP TABLE parts1 PARTITION OF parts FOR VALUES WITH (MODULUS 2, REMAINDER 1);
INSERT INTO parts SELECT fp FROM fps;
SELECT count(*) = 300 AS all_routed, (SELECT count(*) FROM parts0) > 0 AND (SELECT count(*) FROM parts1) > 0 AS both_used FROM parts;

-- Hamming distance: 0..128, an integer in all but name
SELECT '00000000000000000000000000000000'::simhash128 <~> 'ffffffffffffffffffffffffffffffff'::simhash128 AS d128,
       '0123456789abcdef0123456789abcdef'::simhash128 <~> '0123456789abcdef0123456789abcdef'::simhash128 AS d0,
       '80000000000000000000000000000001'::simhash128 <~> '00000000000000000000000000000000'::simhash128 AS d2,
       simhash128_distance('00000000000000000000000000000007', 'f0000000000000000000000000000000') AS d7,
       pg_typeof('00000000000000000000000000000000'::simhash128 <~> '00000000000000000000000000000000'::simhash128) AS type;
-- it is the number of differing bits of the bit(128) forms, and the sum over the halves
SELECT bool_and((a.fp <~> b.fp) = length(replace((a.fp::bit(128) # b.fp::bit(128))::text, '0', ''))) AS popcount_of_xor,
       bool_and((a.fp <~> b.fp) = (simhash128_high(a.fp) <~> simhash128_high(b.fp)) + (simhash128_low(a.fp) <~> simhash128_low(b.fp))) AS sum_of_halves,
       bool_and((a.fp <~> b.fp) = (b.fp <~> a.fp)) AS symmetric
FROM fps a, fps b WHERE a.i <= 60 AND b.i <= 60;
SELECT ('0123456789abcdef0123456789abcdef'::simhash128 <~> 'fedcba9876543210fedcba9876543210') + 1 AS arithmetic,
       '0123456789abcdef0123456789abcdef'::simhash128 <~> 'fedcba9876543210fedcba9876543210' <= 70 AS comparison;

-- every object has a comment
SELECT p.oid::regprocedure AS uncommented FROM pg_proc p
WHERE p.proname LIKE 'simhash128%' AND obj_description(p.oid, 'pg_proc') IS NULL;
SELECT o.oid::regoperator AS uncommented FROM pg_operator o
WHERE (o.oprleft = 'simhash128'::regtype OR o.oprright = 'simhash128'::regtype) AND obj_description(o.oid, 'pg_operator') IS NULL;
