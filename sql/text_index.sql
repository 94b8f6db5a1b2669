-- The hamming index on a text column: the ~= operator, simhash_similar()
-- and simhash_doc, each through the index equal to a sequential scan.
-- The texts: test/data/sample.tsv (English and Chinese families of an
-- original and its edited copies, and unrelated documents).
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS simhash;
RESET client_min_messages;
SET extra_float_digits = 0;
CREATE TABLE sample (n int, cid text, lang text, role text, orig text, rate text,
                     source text, package text, body text);
\copy sample FROM 'test/data/sample.tsv'
CREATE TABLE tdocs (id bigint PRIMARY KEY, body text);
INSERT INTO tdocs SELECT n, body FROM sample;
-- texts without shingles, a NULL, exact copies
INSERT INTO tdocs VALUES (1001, ''), (1002, '!!!'), (1003, NULL), (1004, ' ... '),
	(1005, (SELECT body FROM sample WHERE n = 1)), (1006, (SELECT body FROM sample WHERE n = 1));
CREATE INDEX tdocs_body ON tdocs USING hamming (body);
SELECT hamming_index_check('tdocs_body');

-- the rows near q: through the index (bitmap or plain scan) and by a sequential scan
CREATE FUNCTION ids_op_index(q text) RETURNS bigint[] LANGUAGE sql
	SET enable_seqscan = off SET enable_bitmapscan = on SET enable_indexscan = off
	AS $$ SELECT coalesce(array_agg(id ORDER BY id), '{}') FROM tdocs WHERE body ~= q $$;
CREATE FUNCTION ids_op_plain(q text) RETURNS bigint[] LANGUAGE sql
	SET enable_seqscan = off SET enable_bitmapscan = off SET enable_indexscan = on
	AS $$ SELECT coalesce(array_agg(id ORDER BY id), '{}') FROM tdocs WHERE body ~= q $$;
CREATE FUNCTION ids_op_seq(q text) RETURNS bigint[] LANGUAGE sql
	SET enable_seqscan = on SET enable_bitmapscan = off SET enable_indexscan = off
	AS $$ SELECT coalesce(array_agg(id ORDER BY id), '{}') FROM tdocs WHERE body ~= q $$;
CREATE FUNCTION ids_fn_index(q text, t float8) RETURNS bigint[] LANGUAGE sql
	SET enable_seqscan = off SET enable_bitmapscan = on SET enable_indexscan = on
	AS $$ SELECT coalesce(array_agg(id ORDER BY id), '{}') FROM tdocs WHERE simhash_similar(q, body, t) $$;
CREATE FUNCTION ids_fn_seq(q text, t float8) RETURNS bigint[] LANGUAGE sql
	SET enable_seqscan = on SET enable_bitmapscan = off SET enable_indexscan = off
	AS $$ SELECT coalesce(array_agg(id ORDER BY id), '{}') FROM tdocs WHERE simhash_similar(q, body, t) $$;
-- the plans
EXPLAIN (COSTS OFF) SELECT id FROM tdocs WHERE body ~= 'a query text';
EXPLAIN (COSTS OFF) SELECT id FROM tdocs WHERE simhash_similar(body, 'a query text', 0.9);
EXPLAIN (COSTS OFF) SELECT id FROM tdocs WHERE simhash_similar('a query text', body, 0.8);

-- the setting's threshold is written into the query when it is planned,
-- and a change of the setting plans a prepared statement again
SET simhash.similarity_threshold = 0.9;
EXPLAIN (COSTS OFF) SELECT id FROM tdocs WHERE body ~= 'a query text';
PREPARE near_of(bigint) AS SELECT count(*) FROM tdocs t, tdocs q WHERE q.id = $1 AND t.body ~= q.body;
SELECT count(*) AS near_at_09 FROM tdocs t, tdocs q WHERE q.id = 1 AND t.body ~= q.body;
EXECUTE near_of(1);
SET simhash.similarity_threshold = 0.5;
SELECT count(*) AS near_at_05 FROM tdocs t, tdocs q WHERE q.id = 1 AND t.body ~= q.body;
EXECUTE near_of(1);
DEALLOCATE near_of;
RESET simhash.similarity_threshold;

-- every sixth text of the sample as a query, and two without shingles: the
-- operator (at the setting) and the function (at the same threshold)
-- through the index equal a sequential scan and the definition computed
-- apart (fingerprints within the radius, shingle similarity at least t)
CREATE FUNCTION compare_all(label text) RETURNS TABLE (label text, queries bigint, found bigint, differences bigint)
LANGUAGE sql AS $$
	WITH th AS (SELECT current_setting('simhash.similarity_threshold')::float8 AS t),
	q AS MATERIALIZED (SELECT body, shingle_simhash256(body, 3, 'auto') AS f,
	                          cardinality(shingle_set(body, 3, 'auto')) > 0 AS has
	                   FROM (SELECT body FROM sample WHERE n % 6 = 0 UNION ALL VALUES (''), ('!!!')) s),
	d AS MATERIALIZED (SELECT id, body, shingle_simhash256(body, 3, 'auto') AS f,
	                          cardinality(shingle_set(body, 3, 'auto')) > 0 AS has
	                   FROM tdocs WHERE body IS NOT NULL),
	r AS (SELECT ids_op_seq(q.body) AS seq, ids_op_index(q.body) AS bitmap, ids_op_plain(q.body) AS plain,
	             ids_fn_seq(q.body, th.t) AS fn_seq, ids_fn_index(q.body, th.t) AS fn_index,
	             (SELECT coalesce(array_agg(d.id ORDER BY d.id), '{}') FROM d
	              WHERE q.has AND d.has AND (d.f[1] <~> q.f[1]) + (d.f[2] <~> q.f[2]) <= simhash_similarity_radius(th.t)
	                AND shingle_similarity(d.body, q.body, 3, 'auto') >= th.t) AS def
	      FROM q, th)
	SELECT label, count(*), sum(cardinality(seq)),
	       count(*) FILTER (WHERE seq <> bitmap OR seq <> plain OR seq <> def OR fn_seq <> def OR fn_index <> def) FROM r
$$;
SELECT * FROM compare_all('0.8, as built');
-- the setting moves the operator's threshold, in the index and in the scan alike
SET simhash.similarity_threshold = 0.5;
SELECT * FROM compare_all('0.5');
SET simhash.similarity_threshold = 0.7;
SELECT * FROM compare_all('0.7');
SET simhash.similarity_threshold = 0.95;
SELECT * FROM compare_all('0.95');
SET simhash.similarity_threshold = 1;
SELECT * FROM compare_all('1');
RESET simhash.similarity_threshold;

-- the rows the index finds before the recheck: exactly those with an entry
-- (a quarter of their fingerprint) within r_j bits of the query's quarter
-- j for some j, where the four r_j + 1 add up to the radius + 1 (49: 11,
-- 11, 12, 12), so that no row within the radius is missed: every third
-- text of the sample as a query at three thresholds, a plain index scan's rows
-- and rows removed by its recheck against the count computed apart
CREATE FUNCTION quarters(f simhash128[]) RETURNS simhash[] LANGUAGE sql IMMUTABLE
	AS $$ SELECT ARRAY[simhash128_high(f[1]), simhash128_low(f[1]), simhash128_high(f[2]), simhash128_low(f[2])] $$;
CREATE FUNCTION quarter_radius(radius int, j int) RETURNS int LANGUAGE sql IMMUTABLE
	AS $$ SELECT (radius + 1) / 4 - 1 + (j > 4 - (radius + 1) % 4)::int $$;
SELECT count(*) AS thresholds, count(*) FILTER (WHERE (SELECT sum(quarter_radius(simhash_similarity_radius(t), j) + 1)
                                                       FROM generate_series(1, 4) j) <> simhash_similarity_radius(t) + 1) AS wrong_sums
FROM generate_series(0.5, 1, 0.05) t;
CREATE FUNCTION index_candidates(q text, t float8) RETURNS float8 LANGUAGE plpgsql
	SET enable_seqscan = off SET enable_bitmapscan = off SET enable_indexscan = on AS $$
DECLARE p json;
BEGIN
	EXECUTE 'EXPLAIN (ANALYZE, FORMAT JSON) SELECT id FROM tdocs WHERE body ~= simhash_doc($1, $2)' INTO p USING q, t;
	p := p -> 0 -> 'Plan';
	IF p ->> 'Node Type' <> 'Index Scan' THEN
		RAISE EXCEPTION 'not an index scan: %', p;
	END IF;
	RETURN (p ->> 'Actual Rows')::float8 + coalesce((p ->> 'Rows Removed by Index Recheck')::float8, 0);
END $$;
WITH d AS MATERIALIZED (SELECT quarters(shingle_simhash256(body, 3, 'auto')) AS qs FROM tdocs
                        WHERE cardinality(shingle_set(body, 3, 'auto')) > 0),
q AS MATERIALIZED (SELECT body, quarters(shingle_simhash256(body, 3, 'auto')) AS qs FROM sample WHERE n % 3 = 0),
c AS (SELECT t, index_candidates(q.body, t) AS found,
             (SELECT count(*) FROM d
              WHERE EXISTS (SELECT FROM generate_series(1, 4) j, generate_series(1, 4) i
                            WHERE d.qs[i] <~> q.qs[j] <= quarter_radius(simhash_similarity_radius(t), j))) AS expected
      FROM q, unnest(ARRAY[0.5, 0.8, 0.95]) t)
SELECT t, quarter_radius(simhash_similarity_radius(t), 1) AS r1, quarter_radius(simhash_similarity_radius(t), 4) AS r4,
       count(*) AS queries, sum(found) AS candidates, count(*) FILTER (WHERE found <> expected) AS differences
FROM c GROUP BY t ORDER BY t;

-- a parallel build of the index: the same entries, and (from here on, in
-- place of the serial one) the same answers
SET max_parallel_maintenance_workers = 2;
SET min_parallel_table_scan_size = 0;
SET parallel_setup_cost = 0;
ALTER TABLE tdocs SET (parallel_workers = 2);
CREATE INDEX tdocs_body_parallel ON tdocs USING hamming (body);
RESET max_parallel_maintenance_workers; RESET min_parallel_table_scan_size; RESET parallel_setup_cost;
ALTER TABLE tdocs RESET (parallel_workers);
SELECT hamming_index_check('tdocs_body_parallel');
SELECT s.table_entries = p.table_entries AND s.table_entries > 0 AS same_entries
FROM hamming_index_info('tdocs_body') s, hamming_index_info('tdocs_body_parallel') p;
DROP INDEX tdocs_body;
ALTER INDEX tdocs_body_parallel RENAME TO tdocs_body;
SELECT * FROM compare_all('0.8, built in parallel');

-- changes: copies inserted, texts updated, rows deleted, VACUUM (which merges)
INSERT INTO tdocs SELECT 2000 + n, replace(body, ' the ', ' a ') FROM sample WHERE n % 4 = 1;
INSERT INTO tdocs SELECT 3000 + n, body || ' 广告：请访问我们的网站了解更多优惠信息' FROM sample WHERE lang = 'zh' AND n % 4 = 2;
UPDATE tdocs SET body = body || ' updated' WHERE id % 9 = 0;
DELETE FROM tdocs WHERE id % 11 = 0;
SELECT * FROM compare_all('after inserts, updates, deletes');
SELECT hamming_index_check('tdocs_body');
VACUUM tdocs;
SELECT hamming_merge_tail('tdocs_body');
SELECT * FROM compare_all('after VACUUM and a merge');
SELECT hamming_index_check('tdocs_body');
SELECT probe_tables, table_entries > 4 * 300 AS four_entries_a_row FROM hamming_index_info('tdocs_body');

-- texts without shingles are near-duplicates of no text, not even of themselves
SELECT '' ~= '' AS empty, '!!!' ~= '!!!' AS punctuation, '!!!' ~= '' AS two,
       'a b c d' ~= 'a b c d' AS words, NULL::text ~= 'a' AS null_text,
       simhash_similar('', '', 0.8) AS fn_empty, simhash_similar('甲乙丙丁', '甲乙丙丁', 0.8) AS cjk,
       simhash_similar('0000000000000000', '000000000000000f') AS two_literals_are_fingerprints;
SELECT id FROM tdocs WHERE body ~= '' OR body ~= '!!!' OR body ~= ' ... ';

-- Chinese copies with an advertising line appended: found exactly when their
-- shingle similarity is at least 0.8 (most are)
SELECT count(*) AS copies, count(*) FILTER (WHERE d.body ~= s.body) AS found,
       count(*) FILTER (WHERE shingle_similarity(d.body, s.body, 3, 'auto') >= 0.8) AS similar
FROM sample s JOIN tdocs d ON d.id = 3000 + s.n;

-- simhash_doc: a text with its threshold
SELECT simhash_doc('the text', 0.85) AS doc, simhash_doc('the text', 0.85)::text::simhash_doc::text AS read_back,
       simhash_doc('a: colon', 1)::text::simhash_doc::text AS with_colon;
SELECT simhash_doc_body(simhash_doc('某一段 text', 0.8)), simhash_doc_threshold('0.9:some text');
SELECT (SELECT body FROM sample WHERE n = 1) ~= simhash_doc((SELECT body FROM tdocs WHERE id = 1005), 0.99) AS same_text;

-- the radius of each threshold: one table, nonincreasing
SELECT t, simhash_similarity_radius(t) FROM unnest(ARRAY[0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 0.97, 1]) t;

-- thresholds out of range: one error (22023), the range in the message
\set VERBOSITY default
SET simhash.similarity_threshold = 0.3;
SET simhash.similarity_threshold = 1.5;
SELECT simhash_similar('a b c', 'a b c', 0.49);
SELECT simhash_similar('a b c', 'a b c', 'NaN');
SELECT simhash_doc('a b c', 1.01);
SELECT simhash_similarity_radius(0.2);
SELECT 'x:some text'::simhash_doc;
SELECT 'some text'::simhash_doc;
