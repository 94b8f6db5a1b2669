-- Whole-table functions with ids of any type: the first argument is a NULL
-- of the ids' type (simhash_pairs_keyed(NULL::uuid, query, k) ...), and the rows
-- come out in a stable order.  Checked against brute force on text, uuid,
-- integer and numeric keys; the call shapes of the bigint forms still
-- resolve to them; the errors.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS simhash;
RESET client_min_messages;
SET extra_float_digits = 0;
SELECT setseed(0.25);
CREATE TABLE ki (n integer, t text, u uuid, num numeric, fp simhash, body text, rank integer);
-- 120 random rows, 180 near copies of earlier rows (1 to 4 bits, 1 to 5 words)
INSERT INTO ki (n, fp, body)
	SELECT g, ((floor(random() * 4294967296)::bigint << 32) | floor(random() * 4294967296)::bigint)::simhash,
		   (SELECT string_agg('w' || floor(random() * 200)::integer, ' ') FROM generate_series(1, 25) WHERE g > 0)
	FROM generate_series(1, 120) g;
DO $$
DECLARE
	mask bigint;
	w text[];
BEGIN
	FOR g IN 121..300 LOOP
		mask := 0;
		WHILE bit_count(mask::bit(64)) < 1 + g % 4 LOOP
			mask := mask | (1::bigint << floor(random() * 64)::integer);
		END LOOP;
		SELECT string_to_array(b.body, ' ') INTO w FROM ki b WHERE b.n = 1 + (g * 7919) % (g - 1);
		FOR i IN 1..(1 + g % 5) LOOP
			w[1 + floor(random() * 25)::integer] := 'x' || floor(random() * 1000)::integer;
		END LOOP;
		INSERT INTO ki (n, fp, body)
			SELECT g, (b.fp::bigint # mask)::simhash, array_to_string(w, ' ')
			FROM ki b WHERE b.n = 1 + (g * 7919) % (g - 1);
	END LOOP;
END
$$;
-- keys whose order differs from n's: text of a hash, uuid of an md5, numeric
UPDATE ki SET t = 'k' || md5(n::text), u = md5('u' || n)::uuid, num = (n * 37 % 301) + n / 1000.0,
			  rank = CASE WHEN n % 9 = 0 THEN NULL ELSE n * 31 % 7 END;
INSERT INTO ki (n, t, u, num, fp, body, rank) VALUES (301, 'knull', md5('u301')::uuid, 1000.5, NULL, 'no fingerprint', 1);
SELECT count(*) AS rows, count(DISTINCT t) AS texts, count(DISTINCT u) AS uuids, count(DISTINCT num) AS numerics FROM ki;

-- brute force: every pair within k bits, oriented by each key
CREATE TABLE ki_pairs AS
	SELECT a.n AS a, b.n AS b, a.fp <~> b.fp AS distance, shingle_similarity(a.body, b.body) AS similarity
	FROM ki a JOIN ki b ON a.n <> b.n WHERE a.fp <~> b.fp <= 6;
SELECT count(*) / 2 AS pairs_within_6, count(*) FILTER (WHERE distance <= 3) / 2 AS within_3,
	   count(*) FILTER (WHERE distance <= 6 AND similarity >= 0.6) / 2 AS verified FROM ki_pairs;

-- the keyed pairs equal the brute force, in order (id_a < id_b by the key)
SELECT
	(SELECT string_agg(p.id_a || '-' || p.id_b || ':' || p.distance, ' ') FROM simhash_pairs_keyed(NULL::text, 'SELECT t, fp FROM ki', 6) p) =
	(SELECT string_agg(a.t || '-' || b.t || ':' || r.distance, ' ' ORDER BY a.t, b.t)
	 FROM ki_pairs r JOIN ki a ON a.n = r.a JOIN ki b ON b.n = r.b WHERE a.t < b.t) AS text_pairs,
	(SELECT string_agg(p.id_a || '-' || p.id_b || ':' || p.distance, ' ') FROM simhash_pairs_keyed(NULL::uuid, 'SELECT u, fp FROM ki', 3) p) =
	(SELECT string_agg(a.u || '-' || b.u || ':' || r.distance, ' ' ORDER BY a.u, b.u)
	 FROM ki_pairs r JOIN ki a ON a.n = r.a JOIN ki b ON b.n = r.b WHERE a.u < b.u AND r.distance <= 3) AS uuid_pairs,
	(SELECT string_agg(p.id_a || '-' || p.id_b || ':' || p.distance, ' ') FROM simhash_pairs_keyed(NULL::numeric, 'SELECT num, fp FROM ki', 6) p) =
	(SELECT string_agg(a.num || '-' || b.num || ':' || r.distance, ' ' ORDER BY a.num, b.num)
	 FROM ki_pairs r JOIN ki a ON a.n = r.a JOIN ki b ON b.n = r.b WHERE a.num < b.num) AS numeric_pairs,
	(SELECT string_agg(p.id_a || '-' || p.id_b || ':' || p.distance || ':' || round(p.similarity::numeric, 6), ' ')
	 FROM simhash_pairs_keyed(NULL::text, 'SELECT t, fp, body FROM ki', 6, 0.6) p) =
	(SELECT string_agg(a.t || '-' || b.t || ':' || r.distance || ':' || round(r.similarity::numeric, 6), ' ' ORDER BY a.t, b.t)
	 FROM ki_pairs r JOIN ki a ON a.n = r.a JOIN ki b ON b.n = r.b WHERE a.t < b.t AND r.similarity >= 0.6) AS verified_text_pairs,
	(SELECT string_agg(p.id_a || '-' || p.id_b || ':' || p.distance, ' ') FROM simhash_pairs_keyed(NULL::integer, 'SELECT n, fp FROM ki', 6) p) =
	(SELECT string_agg(r.a || '-' || r.b || ':' || r.distance, ' ' ORDER BY r.a, r.b) FROM ki_pairs r WHERE r.a < r.b) AS integer_pairs,
	(SELECT string_agg(p.id_a || '-' || p.id_b || ':' || p.distance, ' ') FROM simhash_pairs_keyed(NULL::bigint, 'SELECT n, fp FROM ki', 6) p) =
	(SELECT string_agg(r.a || '-' || r.b || ':' || r.distance, ' ' ORDER BY r.a, r.b) FROM ki_pairs r WHERE r.a < r.b) AS bigint_pairs;

-- clusters by brute force: 'single' keeps the first row (by rank, then key)
-- of each connected component; 'center' is the greedy pass in that order
CREATE TABLE ki_ord AS
	SELECT n, t, row_number() OVER (ORDER BY t) AS by_key, row_number() OVER (ORDER BY rank, t) AS by_rank
	FROM ki WHERE fp IS NOT NULL;
CREATE FUNCTION ki_expected(linkage text, k integer, sim float8, ranked boolean)
	RETURNS TABLE (id text, kept text) LANGUAGE plpgsql AS $$
DECLARE
	r record;
	centers integer[] := '{}';
	kept_n integer;
BEGIN
	IF linkage = 'single' THEN
		RETURN QUERY
			WITH RECURSIVE reach(src, dst) AS (
				SELECT o.n, o.n FROM ki_ord o
				UNION
				SELECT re.src, p.b FROM reach re JOIN ki_pairs p ON p.a = re.dst
				WHERE p.distance <= k AND (sim IS NULL OR p.similarity >= sim))
			SELECT DISTINCT ON (re.src) a.t, b.t FROM reach re JOIN ki_ord o ON o.n = re.dst
			JOIN ki a ON a.n = re.src JOIN ki b ON b.n = re.dst
			ORDER BY re.src, CASE WHEN ranked THEN o.by_rank ELSE o.by_key END;
		RETURN;
	END IF;
	FOR r IN SELECT o.n, o.t FROM ki_ord o ORDER BY CASE WHEN ranked THEN o.by_rank ELSE o.by_key END LOOP
		kept_n := coalesce((SELECT u.c FROM unnest(centers) WITH ORDINALITY AS u(c, i)
							JOIN ki_pairs p ON p.a = u.c AND p.b = r.n
							WHERE p.distance <= k AND (sim IS NULL OR p.similarity >= sim)
							ORDER BY u.i LIMIT 1), r.n);
		IF kept_n = r.n THEN
			centers := centers || r.n;
		END IF;
		id := r.t;
		kept := (SELECT t FROM ki WHERE n = kept_n);
		RETURN NEXT;
	END LOOP;
END
$$;
CREATE TABLE ki_cases AS
	SELECT l AS linkage, k, sim, ranked
	FROM unnest(ARRAY['single', 'center']) l, unnest(ARRAY[3, 6]) k,
		 unnest(ARRAY[NULL, 0.6]::float8[]) sim, unnest(ARRAY[false, true]) ranked;
CREATE TABLE ki_found AS
	SELECT c.*, x.id, x.cluster_id AS kept, 'clusters' AS fn
	FROM ki_cases c, simhash_clusters_keyed(NULL::text, 'SELECT t, fp' || CASE WHEN c.ranked THEN ', rank' ELSE '' END || ' FROM ki', c.k, c.linkage) x
	WHERE c.sim IS NULL
	UNION ALL
	SELECT c.*, x.id, x.cluster_id, 'clusters'
	FROM ki_cases c, simhash_clusters_keyed(NULL::text, 'SELECT t, fp, body' || CASE WHEN c.ranked THEN ', rank' ELSE '' END || ' FROM ki', c.k, c.sim, c.linkage) x
	WHERE c.sim IS NOT NULL
	UNION ALL
	SELECT c.*, x.id, coalesce(x.duplicate_of, x.id), 'dedup'
	FROM ki_cases c, simhash_dedup_keyed(NULL::text, 'SELECT t, fp' || CASE WHEN c.ranked THEN ', rank' ELSE '' END || ' FROM ki', c.k, c.linkage) x
	WHERE c.sim IS NULL
	UNION ALL
	SELECT c.*, x.id, coalesce(x.duplicate_of, x.id), 'dedup'
	FROM ki_cases c, simhash_dedup_keyed(NULL::text, 'SELECT t, fp, body' || CASE WHEN c.ranked THEN ', rank' ELSE '' END || ' FROM ki', c.k, c.sim, c.linkage) x
	WHERE c.sim IS NOT NULL
	UNION ALL
	SELECT c.*, x.id, x.kept_id, 'lineage'
	FROM ki_cases c, simhash_lineage_keyed(NULL::text, 'SELECT t, fp' || CASE WHEN c.ranked THEN ', rank' ELSE '' END || ' FROM ki', c.k, c.linkage) x
	WHERE c.sim IS NULL
	UNION ALL
	SELECT c.*, x.id, x.kept_id, 'lineage'
	FROM ki_cases c, simhash_lineage_keyed(NULL::text, 'SELECT t, fp, body' || CASE WHEN c.ranked THEN ', rank' ELSE '' END || ' FROM ki', c.k, c.sim, c.linkage) x
	WHERE c.sim IS NOT NULL;
CREATE TABLE ki_expect AS
	SELECT c.*, e.id, e.kept, fn FROM ki_cases c, ki_expected(c.linkage, c.k, c.sim, c.ranked) e,
		unnest(ARRAY['clusters', 'dedup', 'lineage']) fn;
SELECT c.linkage, c.k, c.sim, c.ranked,
	   (SELECT count(DISTINCT e.kept) FROM ki_expect e
		WHERE (e.linkage, e.k, e.sim, e.ranked) IS NOT DISTINCT FROM (c.linkage, c.k, c.sim, c.ranked)) AS clusters
FROM ki_cases c ORDER BY c.sim NULLS FIRST, c.k, c.ranked, c.linkage DESC;
SELECT (SELECT count(*) FROM ki_found) AS rows,
	   NOT EXISTS (SELECT * FROM ki_expect EXCEPT ALL SELECT * FROM ki_found) AND
	   NOT EXISTS (SELECT * FROM ki_found EXCEPT ALL SELECT * FROM ki_expect) AS clusters_ok;
-- the lineage's distances and similarities, and the sizes, by brute force
SELECT bool_and(x.distance = a.fp <~> b.fp AND
				x.similarity IS NOT DISTINCT FROM CASE WHEN x.id <> x.kept_id THEN shingle_similarity(a.body, b.body) END AND
				x.cluster_size = (SELECT count(*) FROM simhash_lineage_keyed(NULL::text, 'SELECT t, fp, body, rank FROM ki', 6, 0.6, 'center') y
								  WHERE y.kept_id = x.kept_id)) AS lineage_values_ok
FROM simhash_lineage_keyed(NULL::text, 'SELECT t, fp, body, rank FROM ki', 6, 0.6, 'center') x
JOIN ki a ON a.t = x.id JOIN ki b ON b.t = x.kept_id;
-- integer ids with a rank, through the bigint forms, equal the keyed form
SELECT NOT EXISTS (SELECT id::bigint, cluster_id::bigint FROM simhash_clusters_keyed(NULL::integer, 'SELECT n, fp, rank FROM ki', 6, 'center')
				   EXCEPT ALL SELECT * FROM simhash_clusters('SELECT n, fp, rank FROM ki', 6, 'center')) AS integer_ranked_same;

-- the order is stable: the same text under other settings
CREATE TABLE ki_run1 AS SELECT string_agg(x.id || '>' || x.kept_id, ' ') AS s
	FROM simhash_lineage_keyed(NULL::uuid, 'SELECT u, fp, body, rank FROM ki', 6, 0.6, 'single') x;
SET work_mem = '64kB';
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
CREATE TABLE ki_run2 AS SELECT string_agg(x.id || '>' || x.kept_id, ' ') AS s
	FROM simhash_lineage_keyed(NULL::uuid, 'SELECT u, fp, body, rank FROM ki', 6, 0.6, 'single') x;
RESET ALL;
SET extra_float_digits = 0;
SELECT (SELECT s FROM ki_run1) = (SELECT s FROM ki_run2) AS same_order,
	   (SELECT s FROM ki_run1) = (SELECT string_agg(x.id || '>' || x.kept_id, ' ' ORDER BY ok.rk, oi.rk)
								  FROM simhash_lineage_keyed(NULL::uuid, 'SELECT u, fp, body, rank FROM ki', 6, 0.6, 'single') x
								  JOIN (SELECT u, row_number() OVER (ORDER BY rank, u) rk FROM ki) oi ON oi.u = x.id
								  JOIN (SELECT u, row_number() OVER (ORDER BY rank, u) rk FROM ki) ok ON ok.u = x.kept_id) AS kept_then_row;

-- the call shapes of the bigint forms still resolve to them, literals and NULLs included
SELECT (SELECT count(*) FROM simhash_pairs('SELECT n, fp FROM ki', 6)) AS pairs,
	   (SELECT count(*) FROM simhash_pairs('SELECT n, fp FROM ki')) AS pairs_default,
	   (SELECT count(*) FROM simhash_pairs('SELECT n, fp FROM ki', NULL)) AS pairs_null,
	   (SELECT count(*) FROM simhash_pairs('SELECT n, fp, body FROM ki', 6, 0.6)) AS verified,
	   (SELECT count(*) FROM simhash_pairs('SELECT n, fp, body FROM ki', 6, NULL)) AS verified_null,
	   (SELECT count(*) FROM simhash_clusters('SELECT n, fp FROM ki', 6, 'center')) AS clusters_center,
	   (SELECT count(*) FROM simhash_clusters('SELECT n, fp, body FROM ki', 6, 0.6, 'center')) AS clusters_verified,
	   (SELECT count(*) FROM simhash_dedup('SELECT n, fp FROM ki', 6)) AS dedup,
	   (SELECT count(*) FROM simhash_lineage('SELECT n, fp FROM ki', 6)) AS lineage;
-- numeric literals for min_similarity, with and without a linkage: every row with a fingerprint once
SELECT (SELECT count(*) FROM simhash_clusters('SELECT n, fp, body FROM ki', 6, 0.8)) AS clusters_verified,
	   (SELECT count(*) FROM simhash_dedup('SELECT n, fp, body FROM ki', 6, 0.8)) AS dedup_verified,
	   (SELECT count(*) FROM simhash_dedup('SELECT n, fp, body FROM ki', 6, 0.8, 'single')) AS dedup_single,
	   (SELECT count(*) FROM simhash_lineage('SELECT n, fp, body FROM ki', 6, 0.8)) AS lineage_verified,
	   (SELECT count(*) FROM simhash_lineage('SELECT n, fp, body FROM ki', 6, 1)) AS lineage_one;

-- errors
\set VERBOSITY default
SELECT * FROM simhash_pairs_keyed(NULL::uuid, 'SELECT t, fp FROM ki', 3);
SELECT * FROM simhash_clusters_keyed(NULL::text, 'SELECT CASE WHEN n = 7 THEN NULL ELSE t END, fp FROM ki', 3);
SELECT * FROM simhash_dedup_keyed(NULL::text, 'SELECT left(t, 2), fp FROM ki', 3);
SELECT * FROM simhash_pairs_keyed(NULL::text, 'SELECT CASE WHEN n = 301 THEN NULL ELSE t END, fp FROM ki', 3);
SELECT * FROM simhash_dedup_keyed(NULL::text, 'SELECT left(t, 2), fp, rank FROM ki', 3);
SELECT * FROM simhash_clusters('SELECT CASE WHEN n = 7 THEN NULL ELSE n END, fp, rank FROM ki', 3, 'center');
SELECT * FROM simhash_pairs_keyed(NULL::text, 'SELECT t, fp FROM ki WHERE n <> (SELECT n FROM ki)', 3);
SELECT * FROM simhash_pairs_keyed(NULL::point, 'SELECT point(n, n), fp FROM ki', 3);
SELECT * FROM simhash_pairs('SELECT t, fp FROM ki', 3);
SELECT * FROM simhash_clusters('SELECT t, fp, rank FROM ki', 3, 'center');
SELECT * FROM simhash_pairs_keyed(NULL::text, 'SELECT t, fp, rank FROM ki', 3);
SELECT * FROM simhash_pairs_keyed(NULL, 'SELECT t, fp FROM ki', 3);
SELECT * FROM simhash_dedup_keyed(NULL::text, 'SELECT t, fp FROM ki', 3, 'none');
-- errors of the engines and of the query through these forms: message, detail
-- and hint as the other forms give them, the statements built inside not shown
SELECT * FROM simhash_dedup('SELECT n, fp, body FROM ki', 3, 0.5, 'center', 0);
SELECT * FROM simhash_lineage_keyed(NULL::text, 'SELECT t, fp, body FROM ki', 3, 1.5);
SELECT * FROM simhash_clusters('SELECT n, body FROM ki', 3, 'center');
SELECT * FROM simhash_pairs_keyed(NULL::uuid, 'SELECT u, fp FROM ki WHERE n / (n - 300) < 1', 3);
\set VERBOSITY terse
-- a NULL argument other than the key: no rows
SELECT (SELECT count(*) FROM simhash_pairs_keyed(NULL::text, NULL, 3)) AS null_query,
	   (SELECT count(*) FROM simhash_clusters_keyed(NULL::text, 'SELECT t, fp FROM ki', NULL)) AS null_distance,
	   (SELECT count(*) FROM simhash_dedup_keyed(NULL::text, 'SELECT t, fp, body FROM ki', 3, NULL::float8)) AS null_similarity,
	   (SELECT count(*) FROM simhash_lineage_keyed(NULL::text, 'SELECT t, fp FROM ki', 3, NULL)) AS null_linkage;

DROP TABLE ki, ki_pairs, ki_ord, ki_cases, ki_found, ki_expect, ki_run1, ki_run2;
DROP FUNCTION ki_expected(text, integer, float8, boolean);
