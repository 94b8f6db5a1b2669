-- test/bench/bench_knn.sql: nearest-first latency with the GiST opclass, run by
-- test/bench/bench_knn.sh.  1M uniformly random fingerprints, 100 queries with 10
-- planted neighbours each (1..3 bits away); ORDER BY fp <~> q LIMIT 10 through
-- the simhash_gist_ops index, against the same query without an index,
-- against simhash_nearest() (widening radius searches through the GIN index)
-- and against "within 3 bits, nearest first" through the GIN index.  Checks that
-- every answer's distances equal the sequential scan's.
\set ON_ERROR_STOP on
\pset footer off
SET max_parallel_workers_per_gather = 0;
SET jit = off;
SELECT setseed(0.77);
CREATE TABLE knn (id bigint, fp simhash);
INSERT INTO knn SELECT i, (((random() * 4294967296)::bigint << 32) | (random() * 4294967296)::bigint)::simhash
FROM generate_series(1, 1000000) i;
CREATE TABLE knn_q AS SELECT j, (((random() * 4294967296)::bigint << 32) | (random() * 4294967296)::bigint)::simhash AS q
FROM generate_series(1, 100) j;
INSERT INTO knn SELECT 2000000 + j * 10 + n,
  (q::bigint # (SELECT bit_or(1::bigint << b) FROM (SELECT b FROM generate_series(0, 63) b ORDER BY random() LIMIT 1 + n % 3) s))::simhash
FROM knn_q, generate_series(0, 9) n;
\timing on
CREATE INDEX knn_gist ON knn USING gist (fp);
CREATE INDEX knn_gin ON knn USING gin (fp);
\timing off
VACUUM ANALYZE knn;
SELECT pg_size_pretty(pg_relation_size('knn_gist')) AS gist_size;

CREATE FUNCTION time_knn(method text) RETURNS TABLE (method_ text, median_ms numeric, p95_ms numeric, mismatches bigint)
LANGUAGE plpgsql AS $$
DECLARE
  r record; t0 timestamptz; ms float8[] := '{}'; got int[]; want int[]; bad bigint := 0;
BEGIN
  FOR r IN SELECT j, q FROM knn_q ORDER BY j LOOP
    IF method = 'seqscan' THEN
      SET LOCAL enable_indexscan = off; SET LOCAL enable_bitmapscan = off;
    ELSE
      SET LOCAL enable_indexscan = on; SET LOCAL enable_bitmapscan = on;
    END IF;
    t0 := clock_timestamp();
    IF method = 'simhash_nearest' THEN
      SELECT array_agg(distance ORDER BY distance) INTO got FROM simhash_nearest('SELECT id, fp FROM knn', r.q, 10);
    ELSIF method = 'gin within 3' THEN
      SELECT array_agg(d ORDER BY d) INTO got FROM (SELECT fp <~> r.q AS d FROM knn WHERE fp <~> r.q <= 3 ORDER BY fp <~> r.q LIMIT 10) s;
    ELSE
      SELECT array_agg(d ORDER BY d) INTO got FROM (SELECT fp <~> r.q AS d FROM knn ORDER BY fp <~> r.q LIMIT 10) s;
    END IF;
    ms := ms || extract(epoch FROM clock_timestamp() - t0) * 1000;
    SELECT array_agg(d ORDER BY d) INTO want FROM (SELECT bit_count((fp::bigint # r.q::bigint)::bit(64))::int AS d FROM knn ORDER BY 1 LIMIT 10) s;
    IF got IS DISTINCT FROM want THEN bad := bad + 1; END IF;
  END LOOP;
  RETURN QUERY SELECT method, round(percentile_cont(0.5) WITHIN GROUP (ORDER BY x)::numeric, 3),
    round(percentile_cont(0.95) WITHIN GROUP (ORDER BY x)::numeric, 3), bad FROM unnest(ms) x;
END $$;

EXPLAIN (COSTS OFF) SELECT id FROM knn ORDER BY fp <~> '0123456789abcdef' LIMIT 10;
SELECT * FROM time_knn('gist');    -- warm-up
SELECT * FROM time_knn('gist')
UNION ALL SELECT * FROM time_knn('simhash_nearest')
UNION ALL SELECT * FROM time_knn('gin within 3')
UNION ALL SELECT * FROM time_knn('seqscan');
