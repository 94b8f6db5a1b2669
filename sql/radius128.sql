-- Radius searches over simhash128: simhash128_ball, <@ and @>,
-- simhash128_within() and simhash128_at_distance(), and the planner support
-- that rewrites "a <~> b <= k" (and <, =, the commuted forms) into them.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS simhash;
RESET client_min_messages;

-- the ball: (center,radius), radius -1 (empty) to 128
SELECT '(0123456789abcdef0123456789ABCDEF,28)'::simhash128_ball AS ball,
       ' ( 0123456789abcdef0123456789abcdef , -1 ) '::simhash128_ball AS empty_ball,
       '(0123456789abcdef0123456789abcdef,+128)'::simhash128_ball AS whole_space;
SELECT simhash128_ball('0123456789abcdef0123456789abcdef', 128) AS whole_space,
       simhash128_ball('0123456789abcdef0123456789abcdef', 0) AS point,
       simhash128_ball_center('(0123456789abcdef0123456789abcdef,3)'),
       simhash128_ball_radius('(0123456789abcdef0123456789abcdef,3)');
-- a radius outside 0..128 is an error, as every threshold is (not clamped)
SELECT simhash128_ball('0123456789abcdef0123456789abcdef', 129);
SELECT simhash128_ball('0123456789abcdef0123456789abcdef', -1);
SELECT simhash128_within(md5('1')::simhash128, md5('2')::simhash128, 129);
SELECT simhash128_at_distance(md5('1')::simhash128, md5('2')::simhash128, -1);
\set VERBOSITY default
SELECT '(0123456789abcdef,3)'::simhash128_ball;
SELECT '0123456789abcdef0123456789abcdef,3'::simhash128_ball;
SELECT '(0123456789abcdef0123456789abcdef;3)'::simhash128_ball;
SELECT '(0123456789abcdef0123456789abcdef,x)'::simhash128_ball;
SELECT '(0123456789abcdef0123456789abcdef,3'::simhash128_ball;
SELECT '(0123456789abcdef0123456789abcdef,3) x'::simhash128_ball;
SELECT '(0123456789abcdef0123456789abcdef,129)'::simhash128_ball;
SELECT '(0123456789abcdef0123456789abcdef,-2)'::simhash128_ball;
SELECT '(0123456789abcdef0123456789abcdef,99999999999)'::simhash128_ball;
-- the 64-bit ball reads as before
SELECT '(0123456789abcdef,65)'::simhash_ball;
SELECT '(0123456789abcdef0,3)'::simhash_ball;
\set VERBOSITY terse
-- binary form: 16-byte center, 4-byte radius, big-endian; COPY BINARY round trip
SELECT simhash128_ball_send('(0123456789abcdeffedcba9876543210,28)');
CREATE TEMP TABLE balls (b simhash128_ball);
INSERT INTO balls VALUES ('(0123456789abcdeffedcba9876543210,28)'), ('(ffffffffffffffffffffffffffffffff,-1)'), (NULL);
COPY balls TO '/tmp/simhash128_balls.bin' WITH (FORMAT binary);
CREATE TEMP TABLE balls2 (b simhash128_ball);
COPY balls2 FROM '/tmp/simhash128_balls.bin' WITH (FORMAT binary);
SELECT b FROM balls2;

-- the predicates agree with the distance
-- (five centers, each with copies at 0 to 40 bits from it)
CREATE TEMP TABLE fp128 AS
SELECT i, (md5((i % 5)::text)::simhash128::bit(128)
           # (repeat('1', i % 41) || repeat('0', 128 - i % 41))::bit(128))::simhash128 AS fp
FROM generate_series(1, 400) i;
INSERT INTO fp128 VALUES (401, NULL);
SELECT md5('0')::simhash128 AS q \gset
SELECT bool_and((fp <@ simhash128_ball(:'q', k)) = ((fp <~> :'q') <= k)) AS in_ball,
       bool_and((simhash128_ball(:'q', k) @> fp) = ((fp <~> :'q') <= k)) AS contains,
       bool_and(simhash128_within(fp, :'q', k) = ((fp <~> :'q') <= k)) AS within,
       bool_and(simhash128_at_distance(fp, :'q', k) = ((fp <~> :'q') = k)) AS at_distance,
       count(*) FILTER (WHERE fp <@ ('(' || :'q' || ',-1)')::simhash128_ball) AS in_empty_ball
FROM fp128, generate_series(0, 128) k WHERE fp IS NOT NULL;

-- the planner's rewrite: "a <~> b <= k" becomes simhash128_within(a, b, k)
EXPLAIN (COSTS OFF) SELECT i FROM fp128 WHERE fp <~> '0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f' <= 28;
EXPLAIN (COSTS OFF) SELECT i FROM fp128 WHERE fp <~> '0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f' < 28;
EXPLAIN (COSTS OFF) SELECT i FROM fp128 WHERE 28 >= fp <~> '0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f';
EXPLAIN (COSTS OFF) SELECT i FROM fp128 WHERE fp <~> '0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f' = 60;
EXPLAIN (COSTS OFF) SELECT a.i, b.i FROM fp128 a JOIN fp128 b ON a.fp <~> b.fp <= 40 AND a.i < b.i;
-- the rewritten forms give the answers of the plain integer comparison, for every k
SELECT bool_and((SELECT count(*) FROM fp128 WHERE fp <~> :'q' <= k) = (SELECT count(*) FROM fp128 WHERE (fp <~> :'q')::int <= k)) AS le,
       bool_and((SELECT count(*) FROM fp128 WHERE fp <~> :'q' < k) = (SELECT count(*) FROM fp128 WHERE (fp <~> :'q')::int < k)) AS lt,
       bool_and((SELECT count(*) FROM fp128 WHERE k >= fp <~> :'q') = (SELECT count(*) FROM fp128 WHERE (fp <~> :'q')::int <= k)) AS ge,
       bool_and((SELECT count(*) FROM fp128 WHERE fp <~> :'q' = k) = (SELECT count(*) FROM fp128 WHERE (fp <~> :'q')::int = k)) AS eq,
       sum((SELECT count(*) FROM fp128 WHERE fp <~> :'q' = k)) AS all_rows_once
FROM generate_series(-1, 129) k;
-- estimates: the share of random 128-bit values within k bits (few at 28, half at 64)
CREATE FUNCTION pg_temp.estimate(q text) RETURNS int LANGUAGE plpgsql AS $$
DECLARE line text;
BEGIN
	FOR line IN EXECUTE 'EXPLAIN ' || q LOOP
		RETURN (regexp_match(line, 'rows=(\d+)'))[1]::int;
	END LOOP;
END $$;
ANALYZE fp128;
SELECT pg_temp.estimate($$SELECT i FROM fp128 WHERE fp <~> '0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f' <= 28$$) AS est_28,
       pg_temp.estimate($$SELECT i FROM fp128 WHERE fp <~> '0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f' <= 64$$) AS est_64,
       pg_temp.estimate($$SELECT i FROM fp128 WHERE fp <@ '(0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f,70)'$$) AS est_ball_70,
       pg_temp.estimate($$SELECT i FROM fp128 WHERE fp <~> '0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f' = 64$$) AS est_eq_64;
