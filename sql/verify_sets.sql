-- simhash_verify_sets, the verification on each Citus worker (doc/citus.md):
-- the pairs of a worker's shingle sets compared with the sets in memory,
-- or, when maintenance_work_mem cannot hold the sets, by a join of the
-- pairs with their two sets: the same verified pairs, exact similarities
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS simhash;
RESET client_min_messages;
-- 1,200 texts of 80 words, in groups of three that differ in one word
CREATE TABLE vs_sets AS
SELECT i AS k, i % 7 AS r, shingle_set(body, 3, 'auto') AS s
FROM (SELECT i, string_agg(md5(CASE WHEN j = 20 THEN i::text ELSE (i / 3 * 100 + j)::text END), ' ' ORDER BY j) AS body
      FROM generate_series(0, 1199) i, generate_series(1, 80) j GROUP BY i) t;
-- the pairs: the members of each group, and each row with the next group's first
CREATE TABLE vs_pairs AS
SELECT a.ctid AS tid_a, b.ctid AS tid_b, 7 AS d FROM vs_sets a JOIN vs_sets b
  ON a.k < b.k AND (a.k / 3 = b.k / 3 OR b.k = (a.k / 3 + 1) * 3);
SELECT pg_size_pretty(sum(pg_column_size(s))) AS sets_size, count(*) AS sets FROM vs_sets;
SET maintenance_work_mem = '64MB';
CREATE TEMP TABLE in_memory AS
SELECT * FROM simhash_verify_sets('SELECT ctid, k, r, s FROM vs_sets', 'SELECT tid_a, tid_b, d FROM vs_pairs', 0.8, NULL::int, NULL::int);
SET maintenance_work_mem = '1MB';
SET client_min_messages = debug1;
CREATE TEMP TABLE by_join AS
SELECT * FROM simhash_verify_sets('SELECT ctid, k, r, s FROM vs_sets', 'SELECT tid_a, tid_b, d FROM vs_pairs', 0.8, NULL::int, NULL::int);
RESET client_min_messages;
RESET maintenance_work_mem;
-- each verified pair of a group, none of two groups, the same both ways,
-- and the similarity of the sets as shingle_similarity computes it
SELECT (SELECT count(*) FROM vs_pairs) AS candidates, count(*) AS verified,
       count(*) FILTER (WHERE ka / 3 = kb / 3) AS in_groups,
       (SELECT count(*) FROM ((TABLE in_memory EXCEPT ALL TABLE by_join) UNION ALL (TABLE by_join EXCEPT ALL TABLE in_memory)) x) AS differ,
       count(*) FILTER (WHERE similarity IS DISTINCT FROM
           (SELECT shingle_similarity(a.s, b.s) FROM vs_sets a, vs_sets b WHERE a.k = m.ka AND b.k = m.kb)
           OR ra <> ka % 7 OR rb <> kb % 7 OR d <> 7) AS wrong
FROM in_memory m;
DROP TABLE vs_sets, vs_pairs;
