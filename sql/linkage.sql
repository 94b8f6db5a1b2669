-- Linkage and the kept row: simhash_clusters / simhash_dedup with 'single'
-- and 'center' and a rank column, and simhash_lineage, checked against
-- brute-force references written in plain SQL and PL/pgSQL
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS simhash;
RESET client_min_messages;
SELECT setseed(0.125);

-- ---------------------------------------------------------------------------
-- a chain A - B - C: A and B 3 bits apart, B and C 3 bits apart, A and C 6
-- ---------------------------------------------------------------------------
CREATE TABLE chain (id bigint, fp simhash, rank integer, body text);
INSERT INTO chain VALUES
	(1, 0::bigint::simhash, 3, 'a b c d e f g h i j'),
	(2, 7::bigint::simhash, 1, 'a b c d e f g h i x'),
	(3, 63::bigint::simhash, 2, 'y b c d e f g h i x'),
	(4, (-1)::bigint::simhash, 0, 'nothing in common with the others');
SELECT a.id AS a, b.id AS b, a.fp <~> b.fp AS distance,
       round(shingle_similarity(a.body, b.body)::numeric, 3) AS similarity
FROM chain a JOIN chain b ON a.id < b.id WHERE a.fp <~> b.fp <= 6 ORDER BY 1, 2;
-- single: one cluster of A, B, C; center: A keeps B, C is a cluster of its own
SELECT l AS linkage, count(DISTINCT c.cluster_id) AS clusters,
       string_agg(c.id || '->' || c.cluster_id, ' ' ORDER BY c.id) AS members
FROM unnest(ARRAY['single', 'center']) l, simhash_clusters('SELECT id, fp FROM chain', 3, l) c
GROUP BY l ORDER BY l DESC;
-- without a linkage, simhash_clusters is 'single' and simhash_dedup 'center', as before
SELECT (SELECT array_agg(cluster_id ORDER BY id) FROM simhash_clusters('SELECT id, fp FROM chain', 3)) AS clusters,
       (SELECT array_agg(cluster_id ORDER BY id) FROM simhash_clusters('SELECT id, fp FROM chain', 3, 'single')) AS single,
       (SELECT array_agg(duplicate_of ORDER BY id) FROM simhash_dedup('SELECT id, fp FROM chain', 3)) AS dedup,
       (SELECT array_agg(duplicate_of ORDER BY id) FROM simhash_dedup('SELECT id, fp FROM chain', 3, 'center')) AS center;
-- the rank chooses the kept row: B (rank 1) keeps A and C with 'center', and
-- with 'single' the component keeps B as well; D stays alone
SELECT l AS linkage, string_agg(d.id || '->' || coalesce(d.duplicate_of::text, 'kept'), ' ' ORDER BY d.id) AS rows
FROM unnest(ARRAY['single', 'center']) l, simhash_dedup('SELECT id, fp, rank FROM chain', 3, l) d
GROUP BY l ORDER BY l DESC;
-- verified at 0.7, all within 6 bits: A ~ B and B ~ C (7 of 9 shingles), but
-- A and C share 6 of 10; the kept row by id (A) or by rank (B)
SELECT l AS linkage, r AS rank,
       string_agg(d.id || '->' || coalesce(d.duplicate_of::text, 'kept'), ' ' ORDER BY d.id) AS rows
FROM unnest(ARRAY['single', 'center']) l, unnest(ARRAY['', ', rank']) r,
     simhash_dedup('SELECT id, fp, body' || r || ' FROM chain', 6, 0.7, l) d
GROUP BY l, r ORDER BY l DESC, r;
-- the lineage says why: 'single' keeps C in A's cluster at similarity 0.6
SELECT * FROM simhash_lineage('SELECT id, fp, body FROM chain', 6, 0.7, 'single') ORDER BY id;
SELECT * FROM simhash_lineage('SELECT id, fp, body FROM chain', 6, 0.7) ORDER BY id;
SELECT * FROM simhash_lineage('SELECT id, fp, rank FROM chain', 3) ORDER BY id;

-- ---------------------------------------------------------------------------
-- errors
-- ---------------------------------------------------------------------------
\set SHOW_CONTEXT never
SELECT * FROM simhash_clusters('SELECT id, fp FROM chain', 3, 'complete');
SELECT * FROM simhash_lineage('SELECT id, fp, body FROM chain', 3, 0.5, 'Center');
\set VERBOSITY terse
SELECT * FROM simhash_dedup('SELECT id, fp, rank, body FROM chain', 3, 'center');
SELECT * FROM simhash_dedup('SELECT id::text, fp, rank FROM chain', 3, 'center');
SELECT * FROM simhash_dedup('SELECT id % 2, fp, rank FROM chain', 3, 'center');
SELECT * FROM simhash_dedup('SELECT NULLIF(id, 4), fp, rank FROM chain', 3, 'center');
SELECT * FROM simhash_dedup('SELECT id, body, rank FROM chain', 3, 'center');
SELECT * FROM simhash_dedup('SELECT id, fp, body, rank, 1 FROM chain', 3, 0.5, 'center');
\set VERBOSITY default
\set SHOW_CONTEXT errors
-- the SQLSTATE of a bad linkage
DO $$
BEGIN
	PERFORM simhash_dedup('SELECT id, fp FROM chain', 3, 'average');
EXCEPTION WHEN invalid_parameter_value THEN
	RAISE NOTICE 'invalid_parameter_value (%): %', SQLSTATE, SQLERRM;
END
$$;
-- a NULL linkage is a NULL argument: no rows
SELECT count(*) FROM simhash_clusters('SELECT id, fp FROM chain', 3, NULL);

-- ---------------------------------------------------------------------------
-- brute force on a small table: 60 random documents of 30 words and random
-- fingerprints; 180 copies of earlier rows (copies of copies: chains) with
-- 1 to 6 words replaced and 0 to 3 bits flipped; 5 NULL fingerprints, 3
-- NULL bodies; ranks with ties and NULLs
-- ---------------------------------------------------------------------------
CREATE FUNCTION lk_random() RETURNS simhash LANGUAGE sql VOLATILE AS $$
	SELECT ((floor(random() * 4294967296)::bigint << 32) |
			floor(random() * 4294967296)::bigint)::simhash
$$;
CREATE FUNCTION lk_flip(fp simhash, d integer) RETURNS simhash LANGUAGE plpgsql VOLATILE AS $$
DECLARE
	mask bigint := 0;
BEGIN
	WHILE bit_count(mask::bit(64)) < d LOOP
		mask := mask | (1::bigint << floor(random() * 64)::integer);
	END LOOP;
	RETURN (fp::bigint # mask)::simhash;
END
$$;
CREATE FUNCTION lk_edit(body text, n integer) RETURNS text LANGUAGE plpgsql VOLATILE AS $$
DECLARE
	w text[] := string_to_array(body, ' ');
BEGIN
	FOR i IN 1..n LOOP
		w[1 + floor(random() * array_length(w, 1))::integer] := 'x' || floor(random() * 1000)::integer;
	END LOOP;
	RETURN array_to_string(w, ' ');
END
$$;
CREATE TABLE lk (id bigint, body text, fp simhash, rank integer);
INSERT INTO lk (id, body, fp)
	-- (g in the subquery makes it run once per row)
	SELECT g * 7, (SELECT string_agg('w' || floor(random() * 300)::integer, ' ') FROM generate_series(1, 30) WHERE g > 0),
		   lk_random()
	FROM generate_series(1, 60) g;
DO $$
BEGIN
	FOR g IN 1..180 LOOP
		INSERT INTO lk (id, body, fp)
			SELECT 1000 + g, lk_edit(b.body, 1 + g % 6), lk_flip(b.fp, g % 4)
			FROM lk b WHERE b.id < 1000 + g ORDER BY random() LIMIT 1;
	END LOOP;
END
$$;
UPDATE lk SET rank = CASE WHEN id % 11 = 0 THEN NULL ELSE (id * 7919) % 13 END;
INSERT INTO lk (id, fp, rank) SELECT 3000 + g, NULL, g FROM generate_series(1, 5) g;
UPDATE lk SET body = NULL WHERE id IN (1003, 1010, 1105);
SELECT count(*) AS rows, count(fp) AS fingerprints, count(body) AS bodies, count(DISTINCT rank) AS ranks FROM lk;

-- the order: rank (NULL last), then id
CREATE TABLE lk_ord AS
	SELECT row_number() OVER (ORDER BY rank, id) AS pos, id, fp, body, rank FROM lk WHERE fp IS NOT NULL;
-- every pair within 6 bits, both ways, with its similarity
CREATE TABLE lk_pairs AS
	SELECT a.id AS a, b.id AS b, a.fp <~> b.fp AS distance,
		   shingle_similarity(a.body, b.body) AS similarity
	FROM lk_ord a JOIN lk_ord b ON a.id <> b.id WHERE a.fp <~> b.fp <= 6;
CREATE INDEX ON lk_pairs (b, a);
SELECT count(*) / 2 AS pairs_within_6, count(*) FILTER (WHERE distance <= 3) / 2 AS within_3,
	   count(*) FILTER (WHERE similarity >= 0.6) / 2 AS verified_at_06 FROM lk_pairs;

-- center, by hand: in order, a row near no earlier kept row is kept, else it
-- joins the first kept row (in order) it is near
CREATE FUNCTION lk_center(k integer, t float8, ranked boolean)
	RETURNS TABLE (id bigint, kept_id bigint) LANGUAGE plpgsql AS $$
DECLARE
	r record;
	centers bigint[] := '{}';
BEGIN
	FOR r IN SELECT o.id FROM lk_ord o ORDER BY CASE WHEN ranked THEN o.pos ELSE o.id END LOOP
		id := r.id;
		kept_id := coalesce((SELECT u.c FROM unnest(centers) WITH ORDINALITY AS u(c, n)
							 JOIN lk_pairs p ON p.a = u.c AND p.b = r.id
							 WHERE p.distance <= k AND (t IS NULL OR p.similarity >= t)
							 ORDER BY u.n LIMIT 1), r.id);
		IF kept_id = r.id THEN
			centers := centers || r.id;
		END IF;
		RETURN NEXT;
	END LOOP;
END
$$;
-- single, by hand: everything reachable through pairs; the first in order is kept
CREATE FUNCTION lk_single(k integer, t float8, ranked boolean)
	RETURNS TABLE (id bigint, kept_id bigint) LANGUAGE sql AS $$
	WITH RECURSIVE reach(src, dst) AS (
		SELECT o.id, o.id FROM lk_ord o
		UNION
		SELECT r.src, p.b FROM reach r JOIN lk_pairs p ON p.a = r.dst
		WHERE p.distance <= k AND (t IS NULL OR p.similarity >= t))
	SELECT DISTINCT ON (r.src) r.src, r.dst FROM reach r JOIN lk_ord o ON o.id = r.dst
	ORDER BY r.src, CASE WHEN ranked THEN o.pos ELSE o.id END
$$;
CREATE FUNCTION lk_expected(linkage text, k integer, t float8, ranked boolean)
	RETURNS TABLE (id bigint, kept_id bigint, distance integer, similarity float8, cluster_size bigint)
	LANGUAGE sql AS $$
	SELECT e.id, e.kept_id, a.fp <~> b.fp,
		   CASE WHEN t IS NOT NULL AND e.id <> e.kept_id THEN shingle_similarity(a.body, b.body) END,
		   count(*) OVER (PARTITION BY e.kept_id)
	FROM (SELECT * FROM lk_center(k, t, ranked) WHERE linkage = 'center'
		  UNION ALL SELECT * FROM lk_single(k, t, ranked) WHERE linkage = 'single') e
	JOIN lk a ON a.id = e.id JOIN lk b ON b.id = e.kept_id
$$;
CREATE FUNCTION lk_found(linkage text, k integer, t float8, ranked boolean)
	RETURNS TABLE (id bigint, kept_id bigint, distance integer, similarity float8, cluster_size bigint)
	LANGUAGE sql AS $$
	SELECT * FROM simhash_lineage('SELECT id, fp' || CASE WHEN ranked THEN ', rank' ELSE '' END || ' FROM lk', k, linkage)
	WHERE t IS NULL
	UNION ALL
	SELECT * FROM simhash_lineage('SELECT id, fp, body' || CASE WHEN ranked THEN ', rank' ELSE '' END || ' FROM lk', k, t, linkage)
	WHERE t IS NOT NULL
$$;

-- the lineage equals the brute force, row for row; clusters and dedup agree with it
CREATE TABLE lk_cases AS
	SELECT l AS linkage, k, t, ranked
	FROM unnest(ARRAY['single', 'center']) l, unnest(ARRAY[3, 6]) k,
		 unnest(ARRAY[NULL, 0.6]::float8[]) t, unnest(ARRAY[false, true]) ranked;
CREATE TABLE lk_expect AS
	SELECT c.*, e.* FROM lk_cases c, lk_expected(c.linkage, c.k, c.t, c.ranked) e;
CREATE TABLE lk_lineage AS
	SELECT c.*, f.* FROM lk_cases c, lk_found(c.linkage, c.k, c.t, c.ranked) f;
CREATE TABLE lk_kept AS
	SELECT c.*, s.id, s.cluster_id AS kept_id, 'clusters' AS fn
	FROM lk_cases c, simhash_clusters('SELECT id, fp' || CASE WHEN c.ranked THEN ', rank' ELSE '' END || ' FROM lk', c.k, c.linkage) s
	WHERE c.t IS NULL
	UNION ALL
	SELECT c.*, s.id, s.cluster_id, 'clusters'
	FROM lk_cases c, simhash_clusters('SELECT id, fp, body' || CASE WHEN c.ranked THEN ', rank' ELSE '' END || ' FROM lk', c.k, c.t, c.linkage) s
	WHERE c.t IS NOT NULL
	UNION ALL
	SELECT c.*, d.id, coalesce(d.duplicate_of, d.id), 'dedup'
	FROM lk_cases c, simhash_dedup('SELECT id, fp' || CASE WHEN c.ranked THEN ', rank' ELSE '' END || ' FROM lk', c.k, c.linkage) d
	WHERE c.t IS NULL
	UNION ALL
	SELECT c.*, d.id, coalesce(d.duplicate_of, d.id), 'dedup'
	FROM lk_cases c, simhash_dedup('SELECT id, fp, body' || CASE WHEN c.ranked THEN ', rank' ELSE '' END || ' FROM lk', c.k, c.t, c.linkage) d
	WHERE c.t IS NOT NULL;
SELECT c.linkage, c.k, c.t, c.ranked,
	   (SELECT count(*) FROM lk_expect e WHERE (e.linkage, e.k, e.t, e.ranked) IS NOT DISTINCT FROM (c.linkage, c.k, c.t, c.ranked)
		AND e.id <> e.kept_id) AS removed,
	   (SELECT count(DISTINCT e.kept_id) FROM lk_expect e WHERE (e.linkage, e.k, e.t, e.ranked) IS NOT DISTINCT FROM (c.linkage, c.k, c.t, c.ranked)) AS clusters,
	   (SELECT max(e.distance) FROM lk_expect e WHERE (e.linkage, e.k, e.t, e.ranked) IS NOT DISTINCT FROM (c.linkage, c.k, c.t, c.ranked)) AS max_distance,
	   (SELECT round(min(e.similarity)::numeric, 3) FROM lk_expect e WHERE (e.linkage, e.k, e.t, e.ranked) IS NOT DISTINCT FROM (c.linkage, c.k, c.t, c.ranked)) AS min_similarity,
	   (SELECT max(e.cluster_size) FROM lk_expect e WHERE (e.linkage, e.k, e.t, e.ranked) IS NOT DISTINCT FROM (c.linkage, c.k, c.t, c.ranked)) AS largest
FROM lk_cases c ORDER BY c.t NULLS FIRST, c.k, c.ranked, c.linkage DESC;
-- every case: the lineage equals the brute force row for row, and
-- simhash_clusters and simhash_dedup give its kept rows
SELECT (SELECT count(*) FROM lk_lineage) AS rows,
	   NOT EXISTS (SELECT * FROM lk_expect EXCEPT ALL SELECT * FROM lk_lineage) AND
	   NOT EXISTS (SELECT * FROM lk_lineage EXCEPT ALL SELECT * FROM lk_expect) AS lineage_ok,
	   NOT EXISTS (SELECT linkage, k, t, ranked, id, kept_id, fn FROM lk_lineage, unnest(ARRAY['clusters', 'dedup']) fn
				   EXCEPT ALL SELECT * FROM lk_kept) AND
	   NOT EXISTS (SELECT * FROM lk_kept EXCEPT ALL
				   SELECT linkage, k, t, ranked, id, kept_id, fn FROM lk_lineage, unnest(ARRAY['clusters', 'dedup']) fn) AS kept_ok;
-- without a rank, the answers of the forms without a linkage
SELECT NOT EXISTS (SELECT * FROM simhash_clusters('SELECT id, fp FROM lk', 6)
				   EXCEPT ALL SELECT * FROM simhash_clusters('SELECT id, fp FROM lk', 6, 'single')) AS clusters_single,
	   NOT EXISTS (SELECT * FROM simhash_dedup('SELECT id, fp, body FROM lk', 6, 0.6)
				   EXCEPT ALL SELECT * FROM simhash_dedup('SELECT id, fp, body FROM lk', 6, 0.6, 'center')) AS dedup_center;
-- a stored shingle set gives the same lineage as the text
SELECT NOT EXISTS (SELECT * FROM simhash_lineage('SELECT id, fp, body, rank FROM lk', 6, 0.6)
				   EXCEPT ALL
				   SELECT * FROM simhash_lineage('SELECT id, fp, shingle_set(body), rank FROM lk', 6, 0.6)) AS shingle_set_same;

-- the 128-bit forms: each fingerprint doubled into a simhash128 (high half
-- fp, low half fp rotated by 17 bits), so that every distance doubles and
-- radius 2k of 128 bits finds what k of 64 bits finds: the lineage equals
-- the brute force above with its distances doubled, row for row, and
-- simhash_clusters and simhash_dedup keep the same rows
CREATE TABLE lk128 AS
	SELECT id, body, rank,
		   (int8send(fp::bigint) || int8send((fp::bigint << 17) | ((fp::bigint >> 47) & 131071)))::simhash128 AS fp
	FROM lk;
SELECT count(*) FILTER (WHERE a.fp <~> b.fp = 2 * (c.fp <~> d.fp)) = count(*) AS distances_double
FROM lk128 a JOIN lk128 b ON a.id < b.id JOIN lk c ON c.id = a.id JOIN lk d ON d.id = b.id
WHERE a.fp IS NOT NULL AND b.fp IS NOT NULL;
CREATE TABLE lk_lineage128 AS
	SELECT c.*, f.* FROM lk_cases c,
		simhash_lineage('SELECT id, fp' || CASE WHEN c.t IS NOT NULL THEN ', body' ELSE '' END ||
						CASE WHEN c.ranked THEN ', rank' ELSE '' END || ' FROM lk128', 2 * c.k, c.t, c.linkage) f
	WHERE c.t IS NOT NULL
	UNION ALL
	SELECT c.*, f.* FROM lk_cases c,
		simhash_lineage('SELECT id, fp' || CASE WHEN c.ranked THEN ', rank' ELSE '' END || ' FROM lk128', 2 * c.k, c.linkage) f
	WHERE c.t IS NULL;
CREATE TABLE lk_kept128 AS
	SELECT c.*, s.id, s.cluster_id AS kept_id, 'clusters' AS fn
	FROM lk_cases c, simhash_clusters('SELECT id, fp' || CASE WHEN c.ranked THEN ', rank' ELSE '' END || ' FROM lk128', 2 * c.k, c.linkage) s
	WHERE c.t IS NULL
	UNION ALL
	SELECT c.*, d.id, coalesce(d.duplicate_of, d.id), 'dedup'
	FROM lk_cases c, simhash_dedup('SELECT id, fp, body' || CASE WHEN c.ranked THEN ', rank' ELSE '' END || ' FROM lk128', 2 * c.k, c.t, c.linkage) d
	WHERE c.t IS NOT NULL;
SELECT (SELECT count(*) FROM lk_lineage128) AS rows,
	   NOT EXISTS (SELECT linkage, k, t, ranked, id, kept_id, 2 * distance, similarity, cluster_size FROM lk_expect
				   EXCEPT ALL SELECT * FROM lk_lineage128) AND
	   NOT EXISTS (SELECT * FROM lk_lineage128 EXCEPT ALL
				   SELECT linkage, k, t, ranked, id, kept_id, 2 * distance, similarity, cluster_size FROM lk_expect) AS lineage128_ok,
	   NOT EXISTS (SELECT * FROM lk_kept128 EXCEPT ALL SELECT * FROM lk_kept) AND
	   (SELECT count(*) FROM lk_kept128) = (SELECT count(*) FROM lk_kept) / 2 AS kept128_ok;

-- ---------------------------------------------------------------------------
-- the same output twice, and under parallel query
-- ---------------------------------------------------------------------------
CREATE TABLE lk_run1 AS SELECT * FROM simhash_lineage('SELECT id, fp, body, rank FROM lk', 6, 0.6, 'single');
CREATE TABLE lk_run2 AS SELECT * FROM simhash_lineage('SELECT id, fp, body, rank FROM lk', 6, 0.6, 'single');
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SELECT set_config(CASE WHEN current_setting('server_version_num')::int >= 160000 THEN 'debug_parallel_query' ELSE 'force_parallel_mode' END, 'on', false) AS parallel_forced \gset
CREATE TABLE lk_run3 AS SELECT * FROM simhash_lineage('SELECT id, fp, body, rank FROM lk', 6, 0.6, 'single');
CREATE TABLE lk_run4 AS SELECT * FROM simhash_lineage('SELECT id, fp, rank FROM lk', 6, 'center');
RESET ALL;
CREATE TABLE lk_run5 AS SELECT * FROM simhash_lineage('SELECT id, fp, rank FROM lk', 6, 'center');
SELECT (SELECT count(*) FROM lk_run1) AS rows,
	   NOT EXISTS (SELECT * FROM lk_run1 EXCEPT ALL SELECT * FROM lk_run2) AND
	   NOT EXISTS (SELECT * FROM lk_run2 EXCEPT ALL SELECT * FROM lk_run1) AS twice_same,
	   NOT EXISTS (SELECT * FROM lk_run1 EXCEPT ALL SELECT * FROM lk_run3) AND
	   NOT EXISTS (SELECT * FROM lk_run3 EXCEPT ALL SELECT * FROM lk_run1) AS parallel_same,
	   NOT EXISTS (SELECT * FROM lk_run4 EXCEPT ALL SELECT * FROM lk_run5) AND
	   NOT EXISTS (SELECT * FROM lk_run5 EXCEPT ALL SELECT * FROM lk_run4) AS parallel_same_center;

-- simhash_link, what the forms with a rank run on a Citus distributed table:
-- the rows and the verified pairs of simhash_pairs, linked, are the clusters
-- of simhash_clusters ('single') and the kept rows of simhash_dedup ('center')
CREATE TABLE lk_link AS SELECT * FROM simhash_pairs('SELECT id, fp, body FROM lk', 6, 0.7);
SELECT l AS linkage, (SELECT count(*) FROM lk_link) AS pairs,
	   (SELECT count(*) FROM simhash_link('SELECT id, id, NULL::integer, NULL::float8 FROM lk WHERE fp IS NOT NULL UNION ALL '
										  'SELECT id_a, id_b, distance, similarity FROM lk_link', l) WHERE kept <> id) AS linked,
	   NOT EXISTS (SELECT * FROM simhash_link('SELECT id, id, NULL::integer, NULL::float8 FROM lk WHERE fp IS NOT NULL UNION ALL '
											  'SELECT id_a, id_b, distance, similarity FROM lk_link', l)
				   EXCEPT ALL SELECT * FROM (SELECT * FROM simhash_clusters('SELECT id, fp, body FROM lk', 6, 0.7) WHERE l = 'single'
											 UNION ALL SELECT * FROM simhash_dedup('SELECT id, fp, body FROM lk', 6, 0.7) WHERE l = 'center') e) AND
	   (SELECT count(*) FROM simhash_link('SELECT id, id, NULL::integer, NULL::float8 FROM lk WHERE fp IS NOT NULL UNION ALL '
										  'SELECT id_a, id_b, distance, similarity FROM lk_link', l)) = (SELECT count(fp) FROM lk) AS same
FROM unnest(ARRAY['single', 'center']) l ORDER BY l DESC;
SELECT * FROM simhash_link('SELECT 1::bigint, 1::bigint, NULL::integer, NULL::float8', 'average');
SELECT * FROM simhash_link('SELECT 1, 1, NULL::integer, NULL::float8', 'single');
SELECT * FROM simhash_link('SELECT NULL::bigint, NULL::bigint, NULL::integer, NULL::float8', 'single');
SELECT * FROM simhash_link('SELECT 1::bigint, 1::bigint, NULL::integer, NULL::float8 UNION ALL SELECT 2, 2, NULL, NULL UNION ALL SELECT 2, 1, 3, 0.9', 'center');
-- without Citus, no query runs on workers
SELECT simhash_query_on_workers('SELECT id, fp FROM lk') AS on_workers;
DROP TABLE lk_link;

DROP TABLE chain, lk, lk128, lk_lineage128, lk_kept128, lk_ord, lk_pairs, lk_cases, lk_expect, lk_lineage, lk_kept, lk_run1, lk_run2, lk_run3, lk_run4, lk_run5;
DROP FUNCTION lk_random(), lk_flip(simhash, integer), lk_edit(text, integer), lk_center(integer, float8, boolean),
	lk_single(integer, float8, boolean), lk_expected(text, integer, float8, boolean),
	lk_found(text, integer, float8, boolean);
