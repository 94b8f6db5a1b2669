-- thresholds: every threshold argument (of a function, a batch function, the
-- hamming index's max_distance option, a setting) takes 0..64 (0..128 for
-- simhash128) and rejects any other value with SQLSTATE 22023 and the range
-- in the message, never clamping it.  "fp <~> q <= k" is core's integer
-- comparison and takes any k: an index answers it as a sequential scan does.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS simhash;
RESET client_min_messages;
CREATE SCHEMA thresholds;
SET search_path = thresholds, public;

CREATE TABLE t (id int PRIMARY KEY, fp simhash, body text);
INSERT INTO t SELECT i, ('x' || substr(md5(i::text), 1, 16))::bit(64)::bigint::simhash, 'text ' || i
FROM generate_series(1, 400) i;
-- copies at 1 to 64 bits from the first fingerprints, and a NULL
INSERT INTO t SELECT 1000 * id + i, (fp::bigint::bit(64) # (repeat('1', i) || repeat('0', 64 - i))::bit(64))::bigint::simhash, body
FROM t, generate_series(1, 64) i WHERE id <= 3;
INSERT INTO t VALUES (9999, NULL, NULL);
CREATE INDEX t_fp ON t USING hamming (fp);

-- each statement, then its SQLSTATE (00000: accepted)
SELECT simhash_within('0123456789abcdef', '0123456789abcdef', 100);
\echo :SQLSTATE
SELECT simhash_within('0123456789abcdef', '0123456789abcdef', -1);
\echo :SQLSTATE
SELECT simhash_within('0123456789abcdef', '0123456789abcdef', 64);
\echo :SQLSTATE
SELECT simhash_at_distance('0123456789abcdef', '0123456789abcdef', 65);
\echo :SQLSTATE
SELECT simhash_ball('0123456789abcdef', 65);
\echo :SQLSTATE
SELECT simhash_ball('0123456789abcdef', -1);
\echo :SQLSTATE
SELECT simhash_ball('0123456789abcdef', 0);
\echo :SQLSTATE
SELECT simhash128_within(md5('a')::simhash128, md5('b')::simhash128, 129);
\echo :SQLSTATE
SELECT simhash128_ball(md5('a')::simhash128, 129);
\echo :SQLSTATE
SELECT * FROM simhash_pairs('SELECT id, fp FROM t', 65);
\echo :SQLSTATE
SELECT * FROM simhash_dedup('SELECT id, fp FROM t', -1);
\echo :SQLSTATE
SELECT * FROM simhash_clusters('SELECT id, fp, body FROM t', 65, 0.8);
\echo :SQLSTATE
SELECT * FROM simhash_pairs('SELECT id, fp, body FROM t', 3, 1.5);
\echo :SQLSTATE
-- the settings' range errors are PostgreSQL's own (the range in the message;
-- its wording varies between versions)
\set VERBOSITY sqlstate
SET simhash.max_distance = 65;
SET simhash.pairs_recall = 0.4;
\set VERBOSITY default
CREATE INDEX ON t USING hamming (fp) WITH (max_distance = 65);
\echo :SQLSTATE
CREATE INDEX ON t USING hamming (fp) WITH (max_distance = -1);
\echo :SQLSTATE
ALTER INDEX t_fp SET (max_distance = 65);
\echo :SQLSTATE
ALTER INDEX t_fp SET (max_distance = 64);
\echo :SQLSTATE
ALTER INDEX t_fp RESET (max_distance);

-- "d op k" through the index (forced) and by a sequential scan, for every
-- form, constant k in and out of range, and k as a parameter of a generic plan
CREATE FUNCTION answer(q simhash, cond text, k int, use_index bool, generic bool) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
  result text;
BEGIN
  PERFORM set_config('enable_seqscan', CASE WHEN use_index THEN 'off' ELSE 'on' END, true);
  PERFORM set_config('enable_indexscan', CASE WHEN use_index THEN 'on' ELSE 'off' END, true);
  PERFORM set_config('enable_bitmapscan', CASE WHEN use_index THEN 'on' ELSE 'off' END, true);
  IF generic THEN
    PERFORM set_config('plan_cache_mode', 'force_generic_plan', true);
    EXECUTE format('SELECT string_agg(id::text, %L ORDER BY id) FROM t WHERE %s',
                   ',', replace(replace(cond, 'Q', '$1'), 'K', '$2'))
      INTO result USING q, k;
  ELSE
    EXECUTE format('SELECT string_agg(id::text, %L ORDER BY id) FROM t WHERE %s', ',',
                   replace(replace(cond, 'Q', quote_literal(q) || '::simhash'),
                           'K', coalesce(k::text, 'NULL::int')))
      INTO result;
  END IF;
  RETURN coalesce(result, '');
END $$;
SELECT cond, count(*) AS cases,
       count(*) FILTER (WHERE answer(q, cond, k, true, false) <> answer(q, cond, k, false, false)) AS constant_mismatches,
       count(*) FILTER (WHERE answer(q, cond, k, true, true) <> answer(q, cond, k, false, false)) AS parameter_mismatches,
       count(*) FILTER (WHERE answer(q, cond, k, false, false) <> '') AS cases_with_rows
FROM (SELECT fp AS q FROM t WHERE id IN (1, 2)) c,
     (VALUES (NULL), (-5), (-1), (0), (1), (10), (32), (63), (64), (65), (1000)) ks(k),
     (VALUES ('fp <~> Q <= K'), ('fp <~> Q < K'), ('fp <~> Q = K'), ('K >= fp <~> Q'), ('K > fp <~> Q'),
             ('Q <~> fp <= K')) f(cond)
GROUP BY cond ORDER BY cond;
-- the whole space and nothing: every fingerprint, no row
SELECT count(*) FILTER (WHERE fp <~> '0123456789abcdef' <= 65) AS within_65,
       count(*) FILTER (WHERE fp <~> '0123456789abcdef' <= -1) AS within_minus_1,
       count(fp) AS fingerprints
FROM t;
-- out-of-range constants still use the index: the function on the clamped
-- radius answers through it, the integer comparison keeps the answer exact
SET enable_seqscan = off; SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM t WHERE fp <~> '0123456789abcdef' <= 65;
EXPLAIN (COSTS OFF) SELECT id FROM t WHERE fp <~> '0123456789abcdef' <= 9;
RESET enable_seqscan; RESET enable_bitmapscan;
-- a join whose radius is a column of the outer table
CREATE TABLE radii (q simhash, k int);
INSERT INTO radii SELECT fp, k FROM t, (VALUES (-3), (0), (7), (64), (70)) v(k) WHERE id IN (1, 1010, 9999);
SET enable_seqscan = off;
CREATE TEMP TABLE by_index AS SELECT r.k, t.id FROM radii r JOIN t ON t.fp <~> r.q <= r.k;
RESET enable_seqscan; SET enable_indexscan = off; SET enable_bitmapscan = off;
CREATE TEMP TABLE by_scan AS SELECT r.k, t.id FROM radii r JOIN t ON t.fp <~> r.q <= r.k;
RESET enable_indexscan; RESET enable_bitmapscan;
SELECT (SELECT count(*) FROM by_scan) AS rows,
       (SELECT count(*) FROM ((TABLE by_index EXCEPT ALL TABLE by_scan) UNION ALL
                              (TABLE by_scan EXCEPT ALL TABLE by_index)) x) AS mismatches;

DROP SCHEMA thresholds CASCADE;
