-- The main job: load real documents, fingerprint them, index them, and find
-- the near-duplicates.  Run by test/demo.sh on a throwaway cluster.
\set ON_ERROR_STOP on
-- 9 bits: the best threshold of the default features on the evaluation corpus
\set k 9
\pset footer off
SET client_min_messages = warning;
CREATE EXTENSION simhash;
CREATE TABLE docs (n int PRIMARY KEY, corpus_id text, lang text, role text, original text,
                   edit_rate text, source text, package text, body text);
\copy docs FROM 'test/data/sample.tsv'

\echo
\echo '== 1. Fingerprint every document and index the fingerprints'
ALTER TABLE docs ADD COLUMN fp simhash;
UPDATE docs SET fp = simhash(body);
CREATE INDEX docs_fp ON docs USING hamming (fp);
ANALYZE docs;
SELECT count(*) AS documents, count(*) FILTER (WHERE lang = 'en') AS english,
       count(*) FILTER (WHERE lang = 'zh') AS chinese FROM docs;

\echo
\echo '== 2. Is a new document a near-copy of one we already have?'
\echo '   (document 1 with one word changed, looked up through the index)'
SELECT replace(body, 'conspicuously', 'clearly') AS new_doc FROM docs WHERE n = 1 \gset
-- (a table this small is read faster whole; on a large one the planner picks the index by itself)
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT n FROM docs WHERE fp <~> simhash(:'new_doc'::text) <= :k;
SELECT n, fp <~> simhash(:'new_doc'::text) AS distance, left(regexp_replace(body, '\s+', ' ', 'g'), 70) AS text
FROM docs WHERE fp <~> simhash(:'new_doc'::text) <= :k ORDER BY distance;
RESET enable_seqscan;

\echo
\echo '== 3. All near-duplicate groups (documents connected by distances <=' :k 'bits)'
WITH groups AS (
  SELECT id AS n, cluster_id AS grp FROM simhash_clusters('SELECT n, fp FROM docs', :k)
), shown AS (   -- the first 6 groups of each language
  SELECT grp FROM (SELECT g.grp, d.lang, dense_rank() OVER (PARTITION BY d.lang ORDER BY g.grp) AS r
                   FROM groups g JOIN docs d USING (n)
                   WHERE g.grp IN (SELECT grp FROM groups GROUP BY grp HAVING count(*) > 1)) x
  WHERE r <= 6
)
SELECT dense_rank() OVER (ORDER BY d.lang, g.grp) AS "group", d.n, d.lang, d.role,
       coalesce(nullif(d.edit_rate, ''), '-') AS edited,
       d.fp <~> first_value(d.fp) OVER (PARTITION BY g.grp ORDER BY d.n) AS dist,
       left(regexp_replace(d.body, '\s+', ' ', 'g'), 50) AS text
FROM groups g JOIN docs d USING (n)
WHERE g.grp IN (SELECT grp FROM shown)
ORDER BY d.lang, g.grp, d.n;
SELECT count(*) AS groups_of_near_duplicates, sum(size) AS documents_in_them
FROM (SELECT cluster_id, count(*) AS size FROM simhash_clusters('SELECT n, fp FROM docs', :k)
      GROUP BY cluster_id) c
WHERE size > 1;

\echo
\echo '== 4. De-duplicate: keep the first of each group (simhash_dedup)'
SELECT count(*) FILTER (WHERE duplicate_of IS NULL) AS kept, count(duplicate_of) AS dropped
FROM simhash_dedup('SELECT n, fp FROM docs', :k);

\echo
\echo '== 5. How many edited copies were found (distance <=' :k 'to their original)?'
SELECT c.edit_rate AS copy_edit_rate, count(*) AS copies,
       count(*) FILTER (WHERE c.fp <~> o.fp <= :k) AS found_within_k,
       round(avg(c.fp <~> o.fp), 1) AS mean_distance
FROM docs c JOIN docs o ON o.corpus_id = c.original AND c.role = 'copy'
GROUP BY c.edit_rate ORDER BY c.edit_rate::numeric;
SELECT count(*) AS pairs_within_k,
       count(*) FILTER (WHERE a.original = b.original AND a.original <> '') AS same_family,
       count(*) FILTER (WHERE a.original IS DISTINCT FROM b.original OR a.original = '') AS unrelated
FROM docs a JOIN docs b ON a.n < b.n AND a.fp <~> b.fp <= :k;

\echo
\echo '== 6. Verified near-duplicates: candidates within 16 bits, checked by exact shingle similarity'
\echo '   (shingle_similarity: Jaccard of 3-word shingles; Chinese by characters)'
ALTER TABLE docs ADD COLUMN units text;
UPDATE docs SET units = CASE lang WHEN 'zh' THEN 'characters' ELSE 'words' END;
SET enable_seqscan = off;
-- the index finds the candidates, shingle_similarity checks only those
PREPARE lookup(text) AS
SELECT n, fp <~> simhash($1) AS distance, round(shingle_similarity(body, $1, 3, units)::numeric, 3) AS similarity,
       left(regexp_replace(body, '\s+', ' ', 'g'), 60) AS text
FROM docs WHERE fp <~> simhash($1) <= 16 AND shingle_similarity(body, $1, 3, units) >= 0.8
ORDER BY distance;
SET plan_cache_mode = force_generic_plan;
EXPLAIN (COSTS OFF) EXECUTE lookup(:'new_doc');
RESET plan_cache_mode;
EXECUTE lookup(:'new_doc');
RESET enable_seqscan;
SELECT count(*) AS groups_of_verified_near_duplicates, sum(size) AS documents_in_them
FROM (SELECT cluster_id, count(*) AS size
      FROM simhash_clusters($$SELECT n, fp, body FROM docs WHERE lang = 'en'$$, 16, 0.8, 3, 'words')
      GROUP BY cluster_id
      UNION ALL
      SELECT cluster_id, count(*) AS size
      FROM simhash_clusters($$SELECT n, fp, body FROM docs WHERE lang = 'zh'$$, 16, 0.8, 3, 'characters')
      GROUP BY cluster_id) c
WHERE size > 1;
SELECT count(*) FILTER (WHERE duplicate_of IS NULL) AS kept, count(duplicate_of) AS dropped
FROM (SELECT * FROM simhash_dedup($$SELECT n, fp, body FROM docs WHERE lang = 'en'$$, 16, 0.8, 3, 'words')
      UNION ALL
      SELECT * FROM simhash_dedup($$SELECT n, fp, body FROM docs WHERE lang = 'zh'$$, 16, 0.8, 3, 'characters')) d;

\echo
\echo '== 7. Edited copies found, by edit rate: SimHash alone (<=' :k 'bits) and verified (<= 16 bits and similarity >= 0.8)'
SELECT c.edit_rate AS copy_edit_rate, count(*) AS copies,
       count(*) FILTER (WHERE shingle_similarity(c.body, o.body, 3, c.units) >= 0.8) AS similar_ge_08,
       count(*) FILTER (WHERE c.fp <~> o.fp <= :k) AS found_alone,
       count(*) FILTER (WHERE c.fp <~> o.fp <= :k AND shingle_similarity(c.body, o.body, 3, c.units) < 0.8) AS alone_false,
       count(*) FILTER (WHERE c.fp <~> o.fp <= 16 AND shingle_similarity(c.body, o.body, 3, c.units) >= 0.8) AS found_verified
FROM docs c JOIN docs o ON o.corpus_id = c.original AND c.role = 'copy'
GROUP BY c.edit_rate ORDER BY c.edit_rate::numeric;
