-- simhash.pairs_recall below 1: simhash_pairs/clusters/dedup find their
-- candidates in bands of sampled bits.  Checked against a brute-force join:
-- every reported pair is a true pair with its exact distance, once; identical
-- fingerprints are always found, near ones nearly always, pairs at the
-- largest distance at about the asked recall; clusters and dedup are those of
-- the reported pairs; the answer does not depend on work_mem
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS simhash;
RESET client_min_messages;
SELECT setseed(0.61);

CREATE FUNCTION band_random() RETURNS simhash LANGUAGE sql VOLATILE AS $$
	SELECT ((floor(random() * 4294967296)::bigint << 32) |
			floor(random() * 4294967296)::bigint)::simhash
$$;
-- fp with exactly d distinct random bits flipped
CREATE FUNCTION band_flip(fp simhash, d integer) RETURNS simhash LANGUAGE plpgsql VOLATILE AS $$
DECLARE
	mask bigint := 0;
BEGIN
	WHILE bit_count(mask::bit(64)) < d LOOP
		mask := mask | (1::bigint << floor(random() * 64)::integer);
	END LOOP;
	RETURN (fp::bigint # mask)::simhash;
END
$$;
CREATE FUNCTION band_ref_pairs(q text, k integer) RETURNS TABLE (id_a bigint, id_b bigint, distance integer)
LANGUAGE plpgsql AS $$
BEGIN
	RETURN QUERY EXECUTE format(
		'SELECT a.id::bigint, b.id::bigint, (a.fp <~> b.fp)::integer '
		'FROM (%s) a(id, fp) JOIN (%s) b(id, fp) ON a.id < b.id WHERE a.fp <~> b.fp <= %s', q, q, k);
END $$;
-- connected components of the pairs in table edges(id_a, id_b) over the rows of q
CREATE FUNCTION band_ref_components(q text, edges text) RETURNS TABLE (id bigint, cluster_id bigint)
LANGUAGE plpgsql SET client_min_messages = warning AS $$
BEGIN
	DROP TABLE IF EXISTS band_label, band_edge;
	EXECUTE format('CREATE TEMP TABLE band_label AS SELECT id::bigint AS id, id::bigint AS c FROM (%s) s(id, fp) WHERE fp IS NOT NULL', q);
	EXECUTE format('CREATE TEMP TABLE band_edge AS SELECT id_a AS x, id_b AS y FROM %I UNION ALL SELECT id_b, id_a FROM %I', edges, edges);
	ANALYZE band_label, band_edge;
	LOOP
		UPDATE band_label l SET c = m.c
		FROM (SELECT e.x, min(o.c) AS c FROM band_edge e JOIN band_label o ON o.id = e.y GROUP BY e.x) m
		WHERE l.id = m.x AND m.c < l.c;
		EXIT WHEN NOT FOUND;
	END LOOP;
	RETURN QUERY SELECT l.id, l.c FROM band_label l;
END $$;
-- keep the first, over the pairs in table edges
CREATE FUNCTION band_ref_keep_first(q text, edges text) RETURNS TABLE (id bigint, duplicate_of bigint)
LANGUAGE plpgsql SET client_min_messages = warning AS $$
DECLARE
	r record;
BEGIN
	DROP TABLE IF EXISTS band_kept;
	CREATE TEMP TABLE band_kept (id bigint PRIMARY KEY);
	FOR r IN EXECUTE format('SELECT id::bigint AS id FROM (%s) s(id, fp) WHERE fp IS NOT NULL ORDER BY id', q) LOOP
		id := r.id;
		EXECUTE format('SELECT min(p.id_a) FROM %I p JOIN band_kept kp ON kp.id = p.id_a WHERE p.id_b = $1', edges)
			INTO duplicate_of USING r.id;
		IF duplicate_of IS NULL THEN
			INSERT INTO band_kept VALUES (r.id);
		END IF;
		RETURN NEXT;
	END LOOP;
END $$;
CREATE FUNCTION band_same_rows(a text, b text) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
	n bigint;
BEGIN
	EXECUTE format('SELECT count(*) FROM ((SELECT * FROM (%s) a EXCEPT ALL SELECT * FROM (%s) b) '
				   'UNION ALL (SELECT * FROM (%s) b EXCEPT ALL SELECT * FROM (%s) a)) d', a, b, b, a) INTO n;
	RETURN n = 0;
END $$;

-- 1500 random rows; 1200 near copies of 400 of them at 0..20 bits (400 at
-- each distance class 0..4, 5..12, 13..16 and 17..20); 200 rows of one
-- fingerprint and 100 rows within 2 bits of another (skew); 10 NULLs
CREATE TABLE bt (id bigint, fp simhash);
INSERT INTO bt SELECT g, band_random() FROM generate_series(1, 1500) g;
INSERT INTO bt
	SELECT 10000 + g, band_flip(b.fp, CASE g % 3 WHEN 0 THEN g % 5 WHEN 1 THEN 5 + g % 8 ELSE 13 + g % 4 END)
	FROM generate_series(1, 1200) g JOIN bt b ON b.id = g % 400 + 1;
INSERT INTO bt SELECT 20000 + g, band_flip(b.fp, 17 + g % 4)
	FROM generate_series(1, 400) g JOIN bt b ON b.id = 400 + g;
INSERT INTO bt SELECT 30000 + g, b.fp FROM generate_series(1, 200) g JOIN bt b ON b.id = 1000;
INSERT INTO bt SELECT 40000 + g, band_flip(b.fp, g % 3) FROM generate_series(1, 100) g JOIN bt b ON b.id = 1001;
INSERT INTO bt SELECT 50000 + g, NULL FROM generate_series(1, 10) g;
ANALYZE bt;
CREATE TABLE bt_ref AS SELECT * FROM band_ref_pairs('SELECT id, fp FROM bt', 16);

-- exact (the default): every pair
SHOW simhash.pairs_recall;
SELECT count(*) AS pairs, band_same_rows('SELECT * FROM simhash_pairs(''SELECT id, fp FROM bt'', 16)',
									'SELECT * FROM bt_ref') AS exact_ok
FROM bt_ref;

-- banded, at three recalls
CREATE TABLE bt_band (recall float8, id_a bigint, id_b bigint, distance integer);
SET simhash.pairs_recall = 0.6;
INSERT INTO bt_band SELECT 0.6, * FROM simhash_pairs('SELECT id, fp FROM bt', 16);
SET simhash.pairs_recall = 0.9;
INSERT INTO bt_band SELECT 0.9, * FROM simhash_pairs('SELECT id, fp FROM bt', 16);
SET simhash.pairs_recall = 0.99;
INSERT INTO bt_band SELECT 0.99, * FROM simhash_pairs('SELECT id, fp FROM bt', 16);
-- each pair once, a true pair, with its distance
SELECT recall, count(*) AS pairs,
	   count(*) = count(DISTINCT (id_a, id_b)) AS once,
	   bool_and(id_a < id_b) AS ordered,
	   count(*) FILTER (WHERE r.id_a IS NULL OR r.distance <> b.distance) AS wrong
FROM bt_band b LEFT JOIN bt_ref r USING (id_a, id_b)
GROUP BY recall ORDER BY recall;
-- the share found by distance: identical fingerprints always, at most 8
-- bits every pair here, at 16 bits about the asked recall
SELECT s.recall,
	   round(avg((b.id_a IS NOT NULL)::integer) FILTER (WHERE r.distance = 0), 3) AS d0,
	   round(avg((b.id_a IS NOT NULL)::integer) FILTER (WHERE r.distance BETWEEN 1 AND 8), 3) AS d1_8,
	   avg((b.id_a IS NOT NULL)::integer) FILTER (WHERE r.distance = 16) BETWEEN s.recall - 0.1 AND 1 AS d16_as_asked,
	   count(*) FILTER (WHERE r.distance = 16) AS at_16
FROM (SELECT DISTINCT recall FROM bt_band) s CROSS JOIN bt_ref r
LEFT JOIN bt_band b ON b.recall = s.recall AND b.id_a = r.id_a AND b.id_b = r.id_b
GROUP BY s.recall ORDER BY s.recall;
-- a higher recall finds more
SELECT (SELECT count(*) FROM bt_band WHERE recall = 0.6) < (SELECT count(*) FROM bt_band WHERE recall = 0.9)
	   AND (SELECT count(*) FROM bt_band WHERE recall = 0.9) < (SELECT count(*) FROM bt_band WHERE recall = 0.99)
	   AS more_with_recall;

-- clusters and dedup are those of the banded pairs; the same under a
-- work_mem that spills (64kB holds 2048 rows; the per-id tables get 512kB)
SET simhash.pairs_recall = 0.9;
CREATE TABLE bt_edges AS SELECT id_a, id_b FROM bt_band WHERE recall = 0.9;
CREATE INDEX ON bt_edges (id_b);
ANALYZE bt_edges;
SELECT band_same_rows('SELECT * FROM simhash_clusters(''SELECT id, fp FROM bt'', 16)',
				 $$SELECT * FROM band_ref_components('SELECT id, fp FROM bt', 'bt_edges')$$) AS clusters_ok,
	   band_same_rows('SELECT * FROM simhash_dedup(''SELECT id, fp FROM bt'', 16)',
				 $$SELECT * FROM band_ref_keep_first('SELECT id, fp FROM bt', 'bt_edges')$$) AS dedup_ok;
SET work_mem = '64kB';
SET hash_mem_multiplier = 8;
SELECT band_same_rows('SELECT * FROM simhash_pairs(''SELECT id, fp FROM bt'', 16)',
				 'SELECT id_a, id_b, distance FROM bt_band WHERE recall = 0.9') AS spilled_pairs_ok,
	   band_same_rows('SELECT * FROM simhash_clusters(''SELECT id, fp FROM bt'', 16)',
				 $$SELECT * FROM band_ref_components('SELECT id, fp FROM bt', 'bt_edges')$$) AS spilled_clusters_ok,
	   band_same_rows('SELECT * FROM simhash_dedup(''SELECT id, fp FROM bt'', 16)',
				 $$SELECT * FROM band_ref_keep_first('SELECT id, fp FROM bt', 'bt_edges')$$) AS spilled_dedup_ok;
RESET work_mem;
RESET hash_mem_multiplier;

-- the extremes: k = 0 finds every identical pair, k = 64 every pair
SELECT band_same_rows('SELECT * FROM simhash_pairs(''SELECT id, fp FROM bt'', 0)',
				 $$SELECT * FROM band_ref_pairs('SELECT id, fp FROM bt', 0)$$) AS k0_ok,
	   (SELECT count(*) FROM simhash_pairs('SELECT id, fp FROM bt WHERE id <= 300', 64)) AS k64_pairs;

-- the setting's range
SET simhash.pairs_recall = 0.4;
SET simhash.pairs_recall = 1.5;
RESET simhash.pairs_recall;

-- ---------------------------------------------------------------------------
-- simhash128: the exact tables and the bands, against a brute-force join
-- ---------------------------------------------------------------------------
SELECT setseed(0.29);
CREATE FUNCTION band_random128() RETURNS simhash128 LANGUAGE sql VOLATILE AS $$
	SELECT (SELECT string_agg(lpad(to_hex(floor(random() * 65536)::integer), 4, '0'), '')
			FROM generate_series(1, 8))::simhash128
$$;
-- fp with exactly d distinct random bits flipped
CREATE FUNCTION band_flip128(fp simhash128, d integer) RETURNS simhash128 LANGUAGE plpgsql VOLATILE AS $$
DECLARE
	b bit(128) := fp::bit(128);
	flipped integer := 0;
	i integer;
BEGIN
	WHILE flipped < d LOOP
		i := floor(random() * 128)::integer;
		IF get_bit(b, i) = get_bit(fp::bit(128), i) THEN
			b := set_bit(b, i, 1 - get_bit(b, i));
			flipped := flipped + 1;
		END IF;
	END LOOP;
	RETURN b::simhash128;
END
$$;
-- 1500 random rows; 1200 near copies of 400 of them at 0..36 bits; 200 rows
-- of one fingerprint and 100 rows within 3 bits of another; 10 NULLs
CREATE TABLE bw (id bigint, fp simhash128);
INSERT INTO bw SELECT g, band_random128() FROM generate_series(1, 1500) g;
INSERT INTO bw
	SELECT 10000 + g, band_flip128(b.fp, CASE g % 3 WHEN 0 THEN g % 9 WHEN 1 THEN 9 + g % 16 ELSE 25 + g % 12 END)
	FROM generate_series(1, 1200) g JOIN bw b ON b.id = g % 400 + 1;
INSERT INTO bw SELECT 30000 + g, b.fp FROM generate_series(1, 200) g JOIN bw b ON b.id = 1000;
INSERT INTO bw SELECT 40000 + g, band_flip128(b.fp, g % 4) FROM generate_series(1, 100) g JOIN bw b ON b.id = 1001;
INSERT INTO bw SELECT 50000 + g, NULL FROM generate_series(1, 10) g;
ANALYZE bw;
CREATE TABLE bw_ref AS SELECT * FROM band_ref_pairs('SELECT id, fp FROM bw', 28);
-- exact: every pair, at 28 bits and at 0
RESET simhash.pairs_recall;
SELECT count(*) AS pairs,
	   band_same_rows('SELECT * FROM simhash_pairs(''SELECT id, fp FROM bw'', 28)', 'SELECT * FROM bw_ref') AS exact_ok,
	   band_same_rows('SELECT * FROM simhash_pairs(''SELECT id, fp FROM bw'', 0)',
					  'SELECT * FROM bw_ref WHERE distance = 0') AS exact_0_ok
FROM bw_ref;
-- banded at 0.9: each pair once, a true one; identical ones always, near
-- ones nearly always, pairs at 25..28 bits at about the recall
SET simhash.pairs_recall = 0.9;
CREATE TABLE bw_band AS SELECT * FROM simhash_pairs('SELECT id, fp FROM bw', 28);
SELECT count(*) AS pairs, count(*) = count(DISTINCT (id_a, id_b)) AS once,
	   count(*) FILTER (WHERE r.id_a IS NULL OR r.distance <> b.distance) AS wrong
FROM bw_band b LEFT JOIN bw_ref r USING (id_a, id_b);
SELECT round(avg((b.id_a IS NOT NULL)::integer) FILTER (WHERE r.distance = 0), 3) AS d0,
	   round(avg((b.id_a IS NOT NULL)::integer) FILTER (WHERE r.distance BETWEEN 1 AND 12), 3) AS d1_12,
	   avg((b.id_a IS NOT NULL)::integer) FILTER (WHERE r.distance BETWEEN 25 AND 28) >= 0.8 AS d25_28_as_asked,
	   count(*) FILTER (WHERE r.distance BETWEEN 25 AND 28) AS at_25_28
FROM bw_ref r LEFT JOIN bw_band b USING (id_a, id_b);
-- clusters and dedup of the banded pairs, in memory and spilled
CREATE TABLE bw_edges AS SELECT id_a, id_b FROM bw_band;
CREATE INDEX ON bw_edges (id_b);
ANALYZE bw_edges;
SELECT band_same_rows('SELECT * FROM simhash_clusters(''SELECT id, fp FROM bw'', 28)',
					  $$SELECT * FROM band_ref_components('SELECT id, fp FROM bw', 'bw_edges')$$) AS clusters_ok,
	   band_same_rows('SELECT * FROM simhash_dedup(''SELECT id, fp FROM bw'', 28)',
					  $$SELECT * FROM band_ref_keep_first('SELECT id, fp FROM bw', 'bw_edges')$$) AS dedup_ok;
SET work_mem = '64kB';
SET hash_mem_multiplier = 8;
SELECT band_same_rows('SELECT * FROM simhash_pairs(''SELECT id, fp FROM bw'', 28)', 'SELECT * FROM bw_band') AS spilled_pairs_ok,
	   band_same_rows('SELECT * FROM simhash_clusters(''SELECT id, fp FROM bw'', 28)',
					  $$SELECT * FROM band_ref_components('SELECT id, fp FROM bw', 'bw_edges')$$) AS spilled_clusters_ok,
	   band_same_rows('SELECT * FROM simhash_dedup(''SELECT id, fp FROM bw'', 28)',
					  $$SELECT * FROM band_ref_keep_first('SELECT id, fp FROM bw', 'bw_edges')$$) AS spilled_dedup_ok;
RESET simhash.pairs_recall;
-- exact and spilled, clusters against the brute force's components
CREATE TABLE bw_exact_edges AS SELECT id_a, id_b FROM bw_ref;
SELECT band_same_rows('SELECT * FROM simhash_pairs(''SELECT id, fp FROM bw'', 28)', 'SELECT * FROM bw_ref') AS spilled_exact_ok,
	   band_same_rows('SELECT * FROM simhash_clusters(''SELECT id, fp FROM bw'', 28)',
					  $$SELECT * FROM band_ref_components('SELECT id, fp FROM bw', 'bw_exact_edges')$$) AS spilled_exact_clusters_ok;
RESET work_mem;
RESET hash_mem_multiplier;
-- 5000 copies of one fingerprint: one row goes through the bands
SET simhash.pairs_recall = 0.9;
SELECT count(*) AS rows, count(DISTINCT cluster_id) AS clusters, min(cluster_id)
FROM simhash_clusters($$SELECT g, '0123456789abcdef0123456789abcdef'::simhash128 FROM generate_series(5000, 1, -1) g$$, 28);
RESET simhash.pairs_recall;
-- distances up to 128 for simhash128, up to 64 for simhash
SELECT count(*) FROM simhash_pairs('SELECT id, fp FROM bw WHERE id <= 100', 128);
SELECT count(*) FROM simhash_pairs('SELECT id, fp FROM bw WHERE id <= 100', 65);
SELECT count(*) FROM simhash_pairs('SELECT id, fp FROM bw', 129);
SELECT count(*) FROM simhash_pairs('SELECT id, fp FROM bt', 65);

-- the verified forms read a simhash128 column too
CREATE TABLE bw_docs AS SELECT id, fp, 'near duplicate text number ' || (id % 7) || ' of the table' AS body FROM bw;
SELECT band_same_rows(
	$$SELECT id_a, id_b FROM simhash_pairs('SELECT id, fp, body FROM bw_docs', 28, 0.8)$$,
	$$SELECT r.id_a, r.id_b FROM bw_ref r JOIN bw_docs a ON a.id = r.id_a JOIN bw_docs b ON b.id = r.id_b
	  WHERE shingle_similarity(a.body, b.body) >= 0.8$$) AS verified_ok,
	   (SELECT count(*) FROM simhash_clusters('SELECT id, fp, body FROM bw_docs', 28, 0.8)) AS clustered_rows;
\set VERBOSITY terse
SELECT count(*) FROM simhash_pairs('SELECT id, fp, body FROM bw_docs', 129, 0.8);
SELECT count(*) FROM simhash_pairs('SELECT id, fp::bit(128)::bit(64)::bigint::simhash, body FROM bw_docs', 65, 0.8);
\set VERBOSITY default
