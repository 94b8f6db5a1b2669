-- simhash_pairs/clusters/dedup on skewed inputs: many rows with one
-- fingerprint, against brute-force references of the documented semantics,
-- in memory and spilled; the limits of work_mem; simhash_nearest's wrapper
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS simhash;
RESET client_min_messages;

-- references, straight from the definitions
CREATE FUNCTION ref_pairs(q text, k integer) RETURNS TABLE (id_a bigint, id_b bigint, distance integer)
LANGUAGE plpgsql AS $$
BEGIN
	RETURN QUERY EXECUTE format(
		'SELECT a.id::bigint, b.id::bigint, bit_count((a.fp::bigint # b.fp::bigint)::bit(64))::integer '
		'FROM (%s) a(id, fp) JOIN (%s) b(id, fp) ON a.id < b.id '
		'WHERE bit_count((a.fp::bigint # b.fp::bigint)::bit(64)) <= %s', q, q, k);
END $$;
-- connected components: every id starts with its own label, and takes the
-- smallest label of its neighbours until nothing changes
CREATE FUNCTION ref_clusters(q text, k integer) RETURNS TABLE (id bigint, cluster_id bigint)
LANGUAGE plpgsql SET client_min_messages = warning AS $$
BEGIN
	DROP TABLE IF EXISTS ref_label, ref_edge;
	EXECUTE format('CREATE TEMP TABLE ref_label AS SELECT id::bigint AS id, id::bigint AS c FROM (%s) s(id, fp) WHERE fp IS NOT NULL', q);
	CREATE TEMP TABLE ref_edge AS SELECT p.id_a AS x, p.id_b AS y FROM ref_pairs(q, k) p
		UNION ALL SELECT p.id_b, p.id_a FROM ref_pairs(q, k) p;
	ANALYZE ref_label, ref_edge;
	LOOP
		UPDATE ref_label l SET c = m.c
		FROM (SELECT e.x, min(o.c) AS c FROM ref_edge e JOIN ref_label o ON o.id = e.y GROUP BY e.x) m
		WHERE l.id = m.x AND m.c < l.c;
		EXIT WHEN NOT FOUND;
	END LOOP;
	RETURN QUERY SELECT l.id, l.c FROM ref_label l;
END $$;
-- keep the first: ids in ascending order, each dropped when one of its
-- pairs with a smaller id is kept (duplicate_of = the smallest such)
CREATE FUNCTION ref_dedup(q text, k integer) RETURNS TABLE (id bigint, duplicate_of bigint)
LANGUAGE plpgsql SET client_min_messages = warning AS $$
DECLARE
	r record;
BEGIN
	DROP TABLE IF EXISTS ref_kept, ref_pair;
	CREATE TEMP TABLE ref_kept (id bigint PRIMARY KEY);
	CREATE TEMP TABLE ref_pair AS SELECT * FROM ref_pairs(q, k);
	CREATE INDEX ON ref_pair (id_b);
	ANALYZE ref_pair;
	FOR r IN EXECUTE format('SELECT id::bigint AS id FROM (%s) s(id, fp) WHERE fp IS NOT NULL ORDER BY id', q) LOOP
		id := r.id;
		SELECT min(p.id_a) INTO duplicate_of FROM ref_pair p JOIN ref_kept kp ON kp.id = p.id_a WHERE p.id_b = r.id;
		IF duplicate_of IS NULL THEN
			INSERT INTO ref_kept VALUES (r.id);
		END IF;
		RETURN NEXT;
	END LOOP;
END $$;
-- "same": both sides hold the same rows (as multisets)
CREATE FUNCTION same_rows(a text, b text) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
	n bigint;
BEGIN
	EXECUTE format('SELECT count(*) FROM ((SELECT * FROM (%s) a EXCEPT ALL SELECT * FROM (%s) b) '
				   'UNION ALL (SELECT * FROM (%s) b EXCEPT ALL SELECT * FROM (%s) a)) d', a, b, b, a) INTO n;
	RETURN n = 0;
END $$;

-- 800 rows (in memory), ids not ascending, fingerprints from a pool of 120
-- (60 random, 60 near copies of them, 1 or 2 bits away) drawn with a heavy
-- skew: the first 150 rows share one fingerprint, and a few groups hold
-- a hundred or more
SELECT setseed(0.42);
CREATE TABLE sk_pool AS
	SELECT g AS p, (((random() * 4294967296)::bigint << 32) | (random() * 4294967296)::bigint)::simhash AS fp
	FROM generate_series(1, 60) g;
INSERT INTO sk_pool
	SELECT p + 60, (fp::bigint # (1::bigint << (p % 64))
					# CASE WHEN p % 3 = 0 THEN 1::bigint << ((p * 7 + 1) % 64) ELSE 0 END)::simhash
	FROM sk_pool;
CREATE TABLE sk AS
	SELECT (g * 7919) % 100003 AS id, CASE WHEN g % 97 = 0 THEN NULL ELSE sk_pool.fp END AS fp
	FROM (SELECT g, CASE WHEN g <= 150 THEN 1 ELSE 1 + floor(120 * random() ^ 3)::integer END AS p
		  FROM generate_series(1, 800) g) r
	JOIN sk_pool USING (p);
ANALYZE sk;
SELECT count(*) AS rows, count(DISTINCT fp) AS fingerprints,
	   (SELECT max(c) FROM (SELECT count(*) AS c FROM sk GROUP BY fp) s) AS largest_group
FROM sk;

-- every pair, clusters and dedup as the references say, for k = 0 and 3
SELECT k,
	   (SELECT count(*) FROM simhash_pairs('SELECT id, fp FROM sk', k)) AS pairs,
	   same_rows(format('SELECT * FROM simhash_pairs(%L, %s)', 'SELECT id, fp FROM sk', k),
				 format('SELECT * FROM ref_pairs(%L, %s)', 'SELECT id, fp FROM sk', k)) AS pairs_ok,
	   same_rows(format('SELECT * FROM simhash_clusters(%L, %s)', 'SELECT id, fp FROM sk', k),
				 format('SELECT * FROM ref_clusters(%L, %s)', 'SELECT id, fp FROM sk', k)) AS clusters_ok,
	   same_rows(format('SELECT * FROM simhash_dedup(%L, %s)', 'SELECT id, fp FROM sk', k),
				 format('SELECT * FROM ref_dedup(%L, %s)', 'SELECT id, fp FROM sk', k)) AS dedup_ok
FROM unnest(ARRAY[0, 3]) k;
-- n identical rows are n * (n - 1) / 2 pairs at distance 0
SELECT count(*) AS pairs, (SELECT count(*) * (count(*) - 1) / 2 FROM sk WHERE fp = (SELECT fp FROM sk_pool WHERE p = 1)) AS expected
FROM simhash_pairs('SELECT id, fp FROM sk WHERE fp = (SELECT fp FROM sk_pool WHERE p = 1)', 0);
-- the groups instead: one row per fingerprint into simhash_pairs, the others
-- joined back by fingerprint (the README's recipe) give the same pairs
SELECT same_rows(
	$$SELECT least(a.id, b.id), greatest(a.id, b.id), p.distance
	  FROM simhash_pairs('SELECT min(id), fp FROM sk WHERE fp IS NOT NULL GROUP BY fp', 3) p
	  JOIN sk ra ON ra.id = p.id_a JOIN sk rb ON rb.id = p.id_b
	  JOIN sk a ON a.fp = ra.fp JOIN sk b ON b.fp = rb.fp
	  UNION ALL
	  SELECT a.id, b.id, 0 FROM sk a JOIN sk b ON a.fp = b.fp AND a.id < b.id$$,
	$$SELECT * FROM simhash_pairs('SELECT id, fp FROM sk', 3)$$) AS groups_recipe_ok;

-- spilled: 3200 rows under work_mem = 64kB (which holds 2048 rows in memory,
-- 1024 in a partition): 2400 distinct random fingerprints, 200 near copies of
-- them, and 600 more rows in 10 groups of identical ones, ids descending in
-- part; the 2600 distinct fingerprints spill too
SELECT setseed(0.17);
CREATE TABLE skb AS
	SELECT g AS id, (((random() * 4294967296)::bigint << 32) | (random() * 4294967296)::bigint)::simhash AS fp
	FROM generate_series(1, 2400) g;
INSERT INTO skb SELECT 2400 + g, (fp::bigint # (1::bigint << (g % 64)))::simhash FROM skb
	JOIN generate_series(1, 200) g ON skb.id = g * 7;
INSERT INTO skb SELECT 10000 - g, fp FROM skb JOIN generate_series(1, 600) g ON skb.id = 1 + (g % 10) * 101;
ANALYZE skb;
SET work_mem = '64kB';
CREATE TABLE skb_clusters AS SELECT * FROM simhash_clusters('SELECT id, fp FROM skb', 3);
CREATE TABLE skb_dedup AS SELECT * FROM simhash_dedup('SELECT id, fp FROM skb', 3);
RESET work_mem;
SELECT (SELECT count(DISTINCT cluster_id) FROM skb_clusters) AS clusters,
	   (SELECT count(*) FILTER (WHERE duplicate_of IS NULL) FROM skb_dedup) AS kept,
	   same_rows('SELECT * FROM skb_clusters', $$SELECT * FROM ref_clusters('SELECT id, fp FROM skb', 3)$$) AS clusters_ok,
	   same_rows('SELECT * FROM skb_dedup', $$SELECT * FROM ref_dedup('SELECT id, fp FROM skb', 3)$$) AS dedup_ok,
	   same_rows('SELECT * FROM skb_clusters', $$SELECT * FROM simhash_clusters('SELECT id, fp FROM skb', 3)$$) AS clusters_in_memory_ok,
	   same_rows('SELECT * FROM skb_dedup', $$SELECT * FROM simhash_dedup('SELECT id, fp FROM skb', 3)$$) AS dedup_in_memory_ok;
SET work_mem = '64kB';

-- 5000 copies of one fingerprint under 64kB: one row goes through the tables
SELECT count(*) AS rows, count(DISTINCT cluster_id) AS clusters, min(cluster_id), max(id)
FROM simhash_clusters($$SELECT g, '0123456789abcdef'::simhash FROM generate_series(5000, 1, -1) g$$, 3);
SELECT count(*) AS rows, count(*) FILTER (WHERE duplicate_of IS NULL) AS kept,
	   count(*) FILTER (WHERE duplicate_of = 1) AS duplicates_of_1
FROM simhash_dedup($$SELECT g, '0123456789abcdef'::simhash FROM generate_series(5000, 1, -1) g$$, 3);

-- limits: 3000 distinct fingerprints that differ only in their low 12 bits
-- agree on every block of some table: more than 64kB must hold at once
\set VERBOSITY default
SELECT count(*) FROM simhash_clusters($$SELECT g, ('0123456789abc000'::simhash::bigint + g * 5)::simhash
										FROM generate_series(1, 3000) g$$, 3);
RESET work_mem;
SELECT count(*) AS rows, count(DISTINCT cluster_id) AS clusters
FROM simhash_clusters($$SELECT g, ('0123456789abc000'::simhash::bigint + g * 5)::simhash
						FROM generate_series(1, 3000) g$$, 3);
-- the per-id table of clusters and dedup stays within work_mem *
-- hash_mem_multiplier: 1500 fingerprints and their 1500 one-bit copies
SELECT setseed(0.7);
CREATE TABLE skm AS
	SELECT g AS id, (((random() * 4294967296)::bigint << 32) | (random() * 4294967296)::bigint)::simhash AS fp
	FROM generate_series(1, 1500) g;
INSERT INTO skm SELECT id + 1500, (fp::bigint # (1::bigint << (id % 64)))::simhash FROM skm;
SET work_mem = '64kB';
SET hash_mem_multiplier = 1;
SELECT count(*) FROM simhash_clusters('SELECT id, fp FROM skm', 3);
SET hash_mem_multiplier = 64;
SELECT count(DISTINCT cluster_id) AS clusters, count(*) FILTER (WHERE cluster_id = id - 1500) AS copies
FROM simhash_clusters('SELECT id, fp FROM skm', 3);
RESET hash_mem_multiplier;
-- a repeated id: 21000 (cardinality_violation), named, in memory and spilled
SELECT count(*) FROM simhash_dedup($$SELECT 5, fp FROM skb$$, 3);
RESET work_mem;
SELECT count(*) FROM simhash_clusters($$VALUES (3, '0123456789abcdef'::simhash), (4, '0123456789abcdef'), (3, '0123456789abcdee')$$, 3);
DO $$
BEGIN
	PERFORM simhash_clusters($q$VALUES (3, '0123456789abcdef'::simhash), (3, '0123456789abcdef')$q$, 3);
EXCEPTION WHEN cardinality_violation THEN
	RAISE NOTICE 'cardinality_violation (%)', SQLSTATE;
END $$;
\set VERBOSITY terse

-- simhash_nearest accepts a query that ends with a semicolon, white space or
-- a comment, with the same answer
CREATE TABLE sk_near AS SELECT id, fp FROM skb WHERE id <= 3000;
SELECT q, (SELECT array_agg(id ORDER BY distance, id)::integer[]
		   FROM simhash_nearest(q, '0123456789abcdef', 5)) =
		  (SELECT array_agg(id ORDER BY fp <~> '0123456789abcdef', id)
		   FROM (SELECT id, fp FROM sk_near ORDER BY fp <~> '0123456789abcdef', id LIMIT 5) s) AS same
FROM unnest(ARRAY['SELECT id, fp FROM sk_near;',
				  E'SELECT id, fp FROM sk_near ; \n ;; \t',
				  'SELECT id, fp FROM sk_near -- every row',
				  E'SELECT id, fp FROM sk_near\n-- every row\n',
				  E'SELECT id, fp FROM sk_near WHERE id > 0 -- ) AS s (\n;',
				  'SELECT id, fp FROM sk_near; -- every row',
				  E'SELECT id, fp FROM sk_near;\n/* every row */']) q;
-- wrong shapes are still reported as such
SELECT * FROM simhash_nearest('SELECT id FROM sk_near;', '0123456789abcdef', 3);

DROP TABLE sk_pool, sk, skb, skb_clusters, skb_dedup, skm, sk_near, ref_label, ref_edge, ref_kept, ref_pair;
DROP FUNCTION ref_pairs, ref_clusters, ref_dedup, same_rows;
