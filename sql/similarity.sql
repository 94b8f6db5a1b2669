-- Verified near-duplicates: shingle_similarity(), shingle_set(), the
-- candidates-then-verify lookup through the index, and the verified
-- simhash_pairs / simhash_clusters / simhash_dedup against brute force.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS simhash;
RESET client_min_messages;

-- ---------------------------------------------------------------------------
-- pinned values; each was counted by hand and agrees with the evaluation
-- corpus's reference shingle.py (en rule for words, zh rule for characters)
-- ---------------------------------------------------------------------------
-- 7 shingles each, the 3 that hold "jumps"/"jumped" differ: 4 / 10
SELECT shingle_similarity('The quick brown fox jumps over the lazy dog',
                          'The quick brown fox jumped over the lazy dog');
-- NFKC (full-width letters, a decomposed accent) and lower case: the same one shingle
SELECT shingle_similarity('ＨＥＬＬＯ Wörld, foo!', E'hello wo\u0308rld foo');
-- '_' is a word character, as in regex \w+: 1 shingle against 3, none shared
SELECT shingle_similarity('pthread_spin_init is here', 'pthread spin init is here');
-- single words: {pthread_spin_init, is, here} and {pthread, spin, init, is, here}: 2 / 6
SELECT round(shingle_similarity('pthread_spin_init is here', 'pthread spin init is here', 1)::numeric, 6);
-- Chinese, a CJK character is a unit: 5 shingles each, 2 shared (天去北, 去北京): 2 / 8
SELECT shingle_similarity('我们今天去北京', '我们明天去北京');
-- punctuation separates, but shingles run across it
SELECT shingle_similarity('我们，今天去北京。', '我们今天去北京');
-- Japanese: sets, not bags (ももも repeats): the same 5 shingles
SELECT shingle_similarity('すもももももももものうち', 'すもももももものうち');
-- kana, kanji and the long vowel mark: 9 shingles each, the 3 that hold に/へ differ: 6 / 12
SELECT shingle_similarity('東京タワーに行きました', '東京タワーへ行きました');
-- hangul syllables are units too
SELECT shingle_similarity('안녕하세요 여러분', '안녕하세요, 여러분!');
-- mixed: hello, world, 你, 好, 世, 界 / 間: 4 shingles each, 3 shared: 3 / 5
SELECT shingle_similarity('Hello world 你好世界', 'Hello world 你好世間');
-- units => 'characters': letters and digits one by one, everything else dropped
SELECT shingle_similarity('pg_config 命令', 'pgconfig命令', units => 'characters'),
       shingle_similarity('pg_config 命令', 'pgconfig命令');
-- no units at all on both sides: 1; on one side: 0; fewer than n units: one shingle
SELECT shingle_similarity('', '') AS empty, shingle_similarity('...', '!!! ?') AS punctuation,
       shingle_similarity('', 'a') AS one_empty, shingle_similarity('a', 'a b') AS short,
       shingle_similarity('a b', 'A  B') AS short_equal;
-- symmetric, and 1 for a text with itself
SELECT shingle_similarity('one two three four five', 'two three four five six') AS ab,
       shingle_similarity('two three four five six', 'one two three four five') AS ba,
       shingle_similarity('one two three four five', 'one two three four five') AS self;
-- NULL in, NULL out
SELECT shingle_similarity(NULL, 'a') IS NULL AS strict;

-- errors
SELECT shingle_similarity('a', 'b', 0);
SELECT shingle_similarity('a', 'b', 17);
SELECT shingle_similarity('a', 'b', 3, 'bytes');
SELECT shingle_set('a', -1);

-- ---------------------------------------------------------------------------
-- shingle sets: distinct ascending hashes, same similarity as the texts
-- ---------------------------------------------------------------------------
SELECT cardinality(shingle_set('a b c d')) AS two, shingle_set('') AS empty,
       cardinality(shingle_set('すもももももももものうち')) AS five,
       (SELECT bool_and(x < y) FROM (SELECT x, lead(x) OVER (ORDER BY o) AS y
          FROM unnest(shingle_set('the quick brown fox jumps over the lazy dog')) WITH ORDINALITY AS u(x, o)) s
        WHERE y IS NOT NULL) AS ascending;
SELECT shingle_similarity(shingle_set('The quick brown fox jumps over the lazy dog'),
                          shingle_set('The quick brown fox jumped over the lazy dog')) AS sets,
       shingle_similarity('{}'::bigint[], '{}'::bigint[]) AS both_empty;
SELECT shingle_similarity('{2,1}'::bigint[], '{}');
SELECT shingle_similarity('{1}'::bigint[], '{1,1}');
SELECT shingle_similarity('{{1,2}}'::bigint[], '{}');
SELECT shingle_similarity('{1,NULL}'::bigint[], '{}');

-- ---------------------------------------------------------------------------
-- generated documents: families of a random original and edited copies
-- ---------------------------------------------------------------------------
SELECT setseed(0.5);
CREATE TABLE sim_words AS
	SELECT i, w FROM (SELECT i, 'w' || (1 + floor(random() * 300))::int AS w
					  FROM generate_series(1, 20000) i) s;
-- 30 originals of 60 words; each family also gets 3 copies with 1, 3 and 8
-- words replaced; 30 unrelated documents
CREATE TABLE sim_docs (id bigint PRIMARY KEY, family int, edits int, body text);
INSERT INTO sim_docs
SELECT f * 10 + e, f, e,
	   (SELECT string_agg(CASE WHEN random() < e / 60.0 THEN 'x' || (floor(random() * 1000))::int
							   ELSE w END, ' ' ORDER BY i)
		FROM sim_words WHERE i > f * 60 AND i <= f * 60 + 60 AND e >= 0)
FROM generate_series(1, 30) f, unnest(ARRAY[0, 1, 3, 8]) e;
INSERT INTO sim_docs
SELECT 1000 + f, NULL, NULL,
	   (SELECT string_agg(w, ' ' ORDER BY i) FROM sim_words WHERE i > 5000 + f * 50 AND i <= 5000 + f * 50 + 50)
FROM generate_series(1, 30) f;
ALTER TABLE sim_docs ADD COLUMN fp simhash;
UPDATE sim_docs SET fp = simhash(body);
SELECT count(*), count(DISTINCT body) FROM sim_docs;

-- the stored sets agree with the texts on every pair
SELECT count(*) AS pairs,
	   count(*) FILTER (WHERE shingle_similarity(a.body, b.body)
						<> shingle_similarity(shingle_set(a.body), shingle_set(b.body))) AS disagree
FROM sim_docs a JOIN sim_docs b ON a.id < b.id;

-- beyond work_mem the sets go through tuplesorts: same result.  29998 shingles
-- each; 600 replaced words, 50 apart, change 3 shingles each (the last one 1):
-- 28200 shared of 31796: 0.886904013...
CREATE TABLE sim_long AS
	SELECT string_agg('t' || i, ' ' ORDER BY i) AS a,
		   string_agg(CASE WHEN i % 50 = 0 THEN 'u' ELSE 't' END || i, ' ' ORDER BY i) AS b
	FROM generate_series(1, 30000) i;
SELECT shingle_similarity(a, b) AS in_memory FROM sim_long;
-- a large set is sorted and distinct too, and agrees with the texts
SELECT cardinality(shingle_set(a)) AS shingles,
	   (SELECT bool_and(x < y) FROM (SELECT x, lead(x) OVER (ORDER BY o) AS y
		  FROM unnest(shingle_set(a)) WITH ORDINALITY AS u(x, o)) s WHERE y IS NOT NULL) AS ascending,
	   shingle_similarity(shingle_set(a), shingle_set(b)) = shingle_similarity(a, b) AS same
FROM sim_long;
SET work_mem = 64;
SELECT shingle_similarity(a, b) AS spilled FROM sim_long;
RESET work_mem;

-- ---------------------------------------------------------------------------
-- one document: candidates from the index, verification on the candidates
-- ---------------------------------------------------------------------------
-- a hamming index: a GIN simhash_ops index declines 16 bits (k >= 11 with 5
-- blocks is modeled slower than a sequential scan)
CREATE INDEX sim_docs_fp ON sim_docs USING hamming (fp);
ANALYZE sim_docs;
SET enable_seqscan = off;
-- the Hamming distance is the index condition; shingle_similarity filters the
-- rows it returns, after the cheaper length() test (its COST puts it last)
EXPLAIN (COSTS OFF)
SELECT id FROM sim_docs
WHERE shingle_similarity(body, 'some new text') >= 0.8 AND length(body) > 10
  AND fp <~> simhash('some new text'::text) <= 16;
CREATE TEMP TABLE sim_lookup_index AS
SELECT q.id AS query, d.id
FROM sim_docs q, LATERAL (SELECT d.id FROM sim_docs d
						  WHERE d.fp <~> simhash(q.body) <= 16 AND shingle_similarity(d.body, q.body) >= 0.8) d;
RESET enable_seqscan;
SET enable_indexscan = off;
SET enable_bitmapscan = off;
-- without an index, the distance still comes first
EXPLAIN (COSTS OFF)
SELECT id FROM sim_docs
WHERE shingle_similarity(body, 'some new text') >= 0.8 AND fp <~> simhash('some new text'::text) <= 16;
CREATE TEMP TABLE sim_lookup_seq AS
SELECT q.id AS query, d.id
FROM sim_docs q, LATERAL (SELECT d.id FROM sim_docs d
						  WHERE d.fp <~> simhash(q.body) <= 16 AND shingle_similarity(d.body, q.body) >= 0.8) d;
RESET enable_indexscan;
RESET enable_bitmapscan;
SELECT (SELECT count(*) FROM sim_lookup_index) AS found,
	   (SELECT count(*) FROM sim_lookup_index WHERE query <> id) AS found_other,
	   (SELECT count(*) FROM (SELECT * FROM sim_lookup_index EXCEPT SELECT * FROM sim_lookup_seq) x) AS only_index,
	   (SELECT count(*) FROM (SELECT * FROM sim_lookup_seq EXCEPT SELECT * FROM sim_lookup_index) x) AS only_seq;

-- ---------------------------------------------------------------------------
-- whole table, verified: against brute force over all pairs
-- ---------------------------------------------------------------------------
CREATE TEMP TABLE sim_ref AS
SELECT a.id AS id_a, b.id AS id_b, (a.fp <~> b.fp)::integer AS distance,
	   shingle_similarity(a.body, b.body) AS similarity
FROM sim_docs a JOIN sim_docs b ON a.id < b.id
WHERE a.fp <~> b.fp <= 16 AND shingle_similarity(a.body, b.body) >= 0.6;
CREATE TEMP TABLE sim_pairs AS
SELECT * FROM simhash_pairs('SELECT id, fp, body FROM sim_docs', 16, 0.6);
SELECT (SELECT count(*) FROM sim_ref) AS pairs,
	   (SELECT count(*) FROM (SELECT * FROM sim_ref EXCEPT SELECT * FROM sim_pairs) x) AS missed,
	   (SELECT count(*) FROM (SELECT * FROM sim_pairs EXCEPT SELECT * FROM sim_ref) x) AS extra;
-- the same from stored shingle sets, and from a varchar body
CREATE TEMP TABLE sim_pairs_sets AS
SELECT * FROM simhash_pairs('SELECT id, fp, shingle_set(body) FROM sim_docs', 16, 0.6);
CREATE TEMP TABLE sim_pairs_varchar AS
SELECT * FROM simhash_pairs('SELECT id, fp, body::varchar FROM sim_docs', 16, 0.6);
SELECT (SELECT count(*) FROM (SELECT * FROM sim_ref EXCEPT SELECT * FROM sim_pairs_sets) x) +
	   (SELECT count(*) FROM (SELECT * FROM sim_pairs_sets EXCEPT SELECT * FROM sim_ref) x) AS sets_differ,
	   (SELECT count(*) FROM (SELECT * FROM sim_ref EXCEPT SELECT * FROM sim_pairs_varchar) x) +
	   (SELECT count(*) FROM (SELECT * FROM sim_pairs_varchar EXCEPT SELECT * FROM sim_ref) x) AS varchar_differ;
-- what verification removes: candidates within 16 bits that are not similar
SELECT count(*) AS candidates, count(*) FILTER (WHERE p.id_a IS NULL) AS rejected
FROM simhash_pairs('SELECT id, fp FROM sim_docs', 16) c
LEFT JOIN sim_pairs p USING (id_a, id_b);

-- clusters: the connected components of the verified pairs (reference: a
-- recursive closure), every id once
WITH RECURSIVE e AS (
	SELECT id_a AS a, id_b AS b FROM sim_ref UNION ALL SELECT id_b, id_a FROM sim_ref
), reach(id, other) AS (
	SELECT id, id FROM sim_docs
	UNION
	SELECT r.id, e.b FROM reach r JOIN e ON e.a = r.other
), ref AS (SELECT id, min(other) AS cluster_id FROM reach GROUP BY id),
got AS (SELECT * FROM simhash_clusters('SELECT id, fp, body FROM sim_docs', 16, 0.6))
SELECT (SELECT count(*) FROM got) AS ids,
	   (SELECT count(DISTINCT cluster_id) FROM got) AS clusters,
	   (SELECT count(*) FROM (SELECT * FROM ref EXCEPT SELECT * FROM got) x) AS differ;

-- keep-the-first with verification (reference: one pass in id order)
CREATE FUNCTION sim_dedup_ref() RETURNS TABLE (id bigint, duplicate_of bigint) LANGUAGE plpgsql AS $$
DECLARE
	r record;
BEGIN
	CREATE TEMP TABLE kept (id bigint);
	FOR r IN SELECT d.id FROM sim_docs d ORDER BY d.id LOOP
		id := r.id;
		SELECT min(k.id) INTO duplicate_of FROM kept k JOIN sim_ref p ON p.id_a = k.id AND p.id_b = r.id;
		IF duplicate_of IS NULL THEN
			INSERT INTO kept VALUES (r.id);
		END IF;
		RETURN NEXT;
	END LOOP;
	DROP TABLE kept;
END
$$;
WITH got AS (SELECT * FROM simhash_dedup('SELECT id, fp, body FROM sim_docs', 16, 0.6))
SELECT (SELECT count(*) FROM got) AS ids, (SELECT count(duplicate_of) FROM got) AS dropped,
	   (SELECT count(*) FROM (SELECT * FROM sim_dedup_ref() EXCEPT SELECT * FROM got) x) AS differ;
-- a chain: 1 ~ 2 ~ 3 but not 1 ~ 3, so 3 is kept (its only earlier partner was dropped)
CREATE TABLE sim_chain (id int, fp simhash, body text);
INSERT INTO sim_chain VALUES
	(1, '0000000000000000', 'a b c d e f g h i j'),
	(2, '0000000000000000', 'a b c d e f g h i j k l m n'),
	(3, '0000000000000000', 'a b c d e f g h i j k l m n o p q r'),
	(4, '0000000000000000', 'nothing in common'),
	(5, NULL, 'a b c d e f g h i j');
SELECT * FROM simhash_pairs('SELECT id, fp, body FROM sim_chain', 0, 0.6) ORDER BY 1, 2;
SELECT * FROM simhash_dedup('SELECT id, fp, body FROM sim_chain', 0, 0.6) ORDER BY 1;
SELECT * FROM simhash_clusters('SELECT id, fp, body FROM sim_chain', 0, 0.6) ORDER BY 1;
-- a query may end with semicolons, white space and comments, as typed at
-- psql; a semicolon or "--" inside a literal is no end (the same answers as
-- the plain query, for every function that takes a query)
CREATE TEMP TABLE sim_endings (q text);
INSERT INTO sim_endings VALUES
	('SELECT id, fp, body FROM sim_chain;'),
	(E'SELECT id, fp, body FROM sim_chain ; \n ;; \t'),
	('SELECT id, fp, body FROM sim_chain -- every row'),
	('SELECT id, fp, body FROM sim_chain; -- every row'),
	(E'SELECT id, fp, body FROM sim_chain;\n-- every row\n/* and a comment */ ;'),
	(E'SELECT id, fp, body FROM sim_chain WHERE body <> \'x; -- y\' -- ) AS s (\n;'),
	($q$SELECT id, fp, body FROM sim_chain WHERE body <> 'x;' ;$q$);
SELECT q,
	   (SELECT array_agg(p ORDER BY p) FROM simhash_pairs(q, 0, 0.6) p) =
	   (SELECT array_agg(p ORDER BY p) FROM simhash_pairs('SELECT id, fp, body FROM sim_chain', 0, 0.6) p) AS pairs,
	   (SELECT array_agg(c ORDER BY c) FROM simhash_clusters(q, 0, 0.6) c) =
	   (SELECT array_agg(c ORDER BY c) FROM simhash_clusters('SELECT id, fp, body FROM sim_chain', 0, 0.6) c) AS clusters,
	   (SELECT array_agg(d ORDER BY d) FROM simhash_dedup(q, 0, 0.6) d) =
	   (SELECT array_agg(d ORDER BY d) FROM simhash_dedup('SELECT id, fp, body FROM sim_chain', 0, 0.6) d) AS dedup,
	   (SELECT array_agg(v ORDER BY v) FROM shingle_verify_pairs(
			'SELECT 1::bigint, 2::bigint, 0; -- the pair',
			replace(q, 'id, fp, body', 'id::bigint, body'), 0.6) v) =
	   (SELECT array_agg(p ORDER BY p) FROM simhash_pairs('SELECT id, fp, body FROM sim_chain', 0, 0.6) p
		WHERE (id_a, id_b) = (1, 2)) AS verify
FROM sim_endings;
-- what the wrappers embed
SELECT q, simhash_subquery(q) FROM sim_endings;
SELECT simhash_subquery(''), simhash_subquery('-- only a comment'), simhash_subquery(';'),
	   simhash_subquery('SELECT 1; SELECT 2;');
-- errors
\set VERBOSITY terse
SELECT * FROM simhash_pairs('SELECT id, fp, body FROM sim_chain WHERE body <> ''x', 3, 0.8);
SELECT * FROM simhash_pairs('SELECT id, fp FROM sim_chain; -- two columns', 3, 0.8);
SELECT * FROM simhash_pairs('SELECT id, fp FROM sim_chain', 3, 0.8);
SELECT * FROM simhash_pairs('SELECT id, fp, 1 FROM sim_chain', 3, 0.8);
SELECT * FROM simhash_pairs($$SELECT id, fp, '{2,1}'::bigint[] FROM sim_chain$$, 3, 0.8);
SELECT * FROM simhash_pairs('SELECT id, fp, body FROM sim_chain', 3, 1.5);
SELECT * FROM simhash_pairs('SELECT id, fp, body FROM sim_chain', 65, 0.8);
SELECT * FROM simhash_pairs('SELECT id, fp, body FROM sim_chain', 3, 0.8, 0);
SELECT * FROM simhash_dedup('SELECT 1, fp, body FROM sim_chain', 3, 0.8);
SELECT * FROM simhash_clusters('SELECT id, fp, body FROM sim_chain', 3, 0.8, 3, 'letters');
-- one SQLSTATE per kind of mistake, with or without verification: a query
-- of the wrong shape 42804, a distance out of range 22003, a repeated id 21000
\set VERBOSITY sqlstate
SELECT * FROM simhash_pairs('SELECT id, fp FROM sim_chain', 3, 0.8);
SELECT * FROM simhash_clusters('SELECT id FROM sim_chain', 3);
SELECT * FROM simhash_dedup('CREATE TABLE nothing (a integer)', 3, 0.8);
SELECT * FROM simhash_dedup('CREATE TABLE nothing (a integer)', 3);
SELECT * FROM simhash_nearest('SELECT id FROM sim_chain', '0000000000000000');
SELECT * FROM simhash_pairs('SELECT id, fp, body FROM sim_chain', 65, 0.8);
SELECT * FROM simhash_pairs('SELECT id, fp FROM sim_chain', 65);
SELECT * FROM simhash_clusters('SELECT 1, fp, body FROM sim_chain', 3, 0.8);
SELECT * FROM simhash_clusters('SELECT 1, fp FROM sim_chain', 3);
\set VERBOSITY terse
-- the verification step on its own: queries of the wrong shape
SELECT * FROM shingle_verify_pairs('SELECT 1, 2', 'SELECT 1::bigint, ''a''::text', 0.5);
SELECT * FROM shingle_verify_pairs('SELECT 1::bigint, 2::bigint, 3', 'SELECT 1, ''a''::text', 0.5);
-- pairs whose ids have no row, or a NULL body, are not verified
SELECT * FROM shingle_verify_pairs('SELECT 1::bigint, 2::bigint, 3 UNION ALL SELECT 1, 3, 4 UNION ALL SELECT 1, 4, 5',
								   'SELECT 1::bigint, ''a b c''::text UNION ALL SELECT 2, ''A B, C!'' UNION ALL SELECT 4, NULL', 0.5);
\set VERBOSITY default

SELECT hamming_index_check('sim_docs_fp');
DROP TABLE sim_words, sim_docs, sim_long, sim_chain, sim_endings;
DROP FUNCTION sim_dedup_ref();
