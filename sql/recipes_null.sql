-- the recipes on a fingerprint column adapted to a table keyed by uuid whose
-- texts can be NULL, empty or without content: each terminates and answers
-- as documented
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS simhash;
RESET client_min_messages;
CREATE SCHEMA recipes_null;
SET search_path = recipes_null, public;
SET statement_timeout = '30s';   -- a recipe that loops fails here instead of hanging

CREATE TABLE art (uid uuid PRIMARY KEY, body text, created_at timestamptz NOT NULL);
INSERT INTO art
SELECT md5(i::text)::uuid, t, timestamptz '2024-01-01' + i * interval '1 day'
FROM (VALUES
  (1, 'PostgreSQL is a powerful, open source object-relational database system with over 35 years of active development that has earned it a strong reputation for reliability, feature robustness, and performance.'),
  (2, 'PostgreSQL is a powerful, open source object-relational database system with over 36 years of active development that has earned it a strong reputation for reliability, feature robustness and performance!'),
  (3, 'SQLite is a C-language library that implements a small, fast, self-contained, high-reliability, full-featured, SQL database engine. SQLite is the most used database engine in the world.'),
  (4, '中文新闻去重是一个老问题：同一篇报道经常被多家网站转载，标题和正文只有细微差别，有时只是多了一行广告或者改了几个字。'),
  (5, '中文新闻去重是一个老问题：同一篇报道常常被多家网站转载，标题和正文只有细微差别，有时只是多了一行广告或者改了几个字。'),
  (6, NULL), (7, NULL), (8, ''), (9, '   '), (10, '!!!'), (11, '。。。')) v(i, t);
-- 2,000 more rows, one in ten without a text
INSERT INTO art
SELECT md5(i::text)::uuid, CASE WHEN i % 10 = 0 THEN NULL ELSE 'article ' || i || ' about fingerprints and near-duplicate text' END,
       timestamptz '2024-01-01' + i * interval '1 hour'
FROM generate_series(100, 2099) i;

-- the policy for texts without content: no shingles, the fingerprint 0 (a
-- frozen value), similarity 1 between any two of them, NULL for NULL
SELECT quote_literal(t) AS body, simhash(t) AS fp, shingle_set(t) AS shingles,
       shingle_simhash128(t, 3, 'auto') = '00000000000000000000000000000000' AS wide_zero,
       shingle_similarity(t, '!!!') AS similarity_to_punctuation
FROM (VALUES (''), ('   '), ('!!!'), ('。。。'), (E'\t\n'), (NULL)) v(t);

-- Add fingerprints without a long lock: the loop over the keys ends although
-- rows without a text keep a NULL fingerprint
ALTER TABLE art ADD COLUMN fp simhash;
CREATE FUNCTION art_fp() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN NEW.fp := simhash(NEW.body); RETURN NEW; END $$;
CREATE TRIGGER art_fp BEFORE INSERT OR UPDATE OF body ON art FOR EACH ROW EXECUTE FUNCTION art_fp();
-- the loop that picks the rows still without a fingerprint never ends: the
-- rows without a text are picked again and again (stopped by the timeout)
SET statement_timeout = '1s';
\set VERBOSITY terse
DO $$
DECLARE n bigint;
BEGIN
  LOOP
    UPDATE art SET fp = simhash(body) WHERE uid IN (SELECT uid FROM art WHERE fp IS NULL LIMIT 100);
    GET DIAGNOSTICS n = ROW_COUNT;
    EXIT WHEN n = 0;
  END LOOP;
END $$;
\set VERBOSITY default
SET statement_timeout = '30s';
-- the README's loop, keyed by uuid (a procedure, so that it can commit)
CREATE PROCEDURE fill_art() LANGUAGE plpgsql AS $$
DECLARE
  done uuid := '00000000-0000-0000-0000-000000000000';
  upto uuid;
  batches int := 0;
BEGIN
  LOOP
    SELECT uid INTO upto FROM (SELECT uid FROM art WHERE uid > done ORDER BY uid LIMIT 100) batch
    ORDER BY uid DESC LIMIT 1;
    EXIT WHEN upto IS NULL;
    UPDATE art SET fp = simhash(body) WHERE uid > done AND uid <= upto AND fp IS NULL;
    done := upto;
    batches := batches + 1;
    COMMIT;
  END LOOP;
  RAISE NOTICE 'batches: %', batches;
END $$;
SET client_min_messages = notice;
CALL fill_art();
SELECT count(*) FILTER (WHERE fp IS NULL AND body IS NOT NULL) AS missing,
       count(*) FILTER (WHERE body IS NULL) AS without_text,
       count(*) FILTER (WHERE fp = '0000000000000000') AS contentless
FROM art;
CREATE INDEX art_fp_idx ON art USING hamming (fp);

-- Near-copies of a new document: a NULL text is never a candidate
SELECT a.created_at::date, round(shingle_similarity(body, q, 3, 'auto')::numeric, 2) AS similarity
FROM art a, (VALUES ('PostgreSQL is a powerful, open source object-relational database system with over 37 years of active development that has earned it a strong reputation for reliability, feature robustness, and performance.')) v(q)
WHERE fp <~> simhash(q) <= 16 AND shingle_similarity(body, q, 3, 'auto') >= 0.8
ORDER BY 1;

-- Which rows are near-copies, and which to keep (the Quick start's form with
-- uuid keys, the oldest kept): NULL texts are skipped; texts without content
-- group together, unless the query leaves them out
SET simhash.pairs_recall = 0.99;
CREATE TABLE lineage AS
SELECT * FROM simhash_lineage_keyed(NULL::uuid,
  'SELECT uid, shingle_simhash128(body, 3, ''auto'', 0), shingle_simhash128(body, 3, ''auto'', 1), body, created_at FROM art',
  49, 0.8, 'center', 3, 'auto');
SELECT count(*) AS rows, count(*) FILTER (WHERE id <> kept_id) AS removed,
       count(*) FILTER (WHERE id <> kept_id AND k.body IS NOT NULL AND cardinality(shingle_set(k.body)) = 0) AS contentless_removed
FROM lineage l JOIN art k ON k.uid = l.kept_id;
SELECT a.created_at::date AS removed, k.created_at::date AS kept, round(l.similarity::numeric, 2) AS similarity
FROM lineage l JOIN art a ON a.uid = l.id JOIN art k ON k.uid = l.kept_id
WHERE l.id <> l.kept_id AND cardinality(shingle_set(a.body)) > 0
ORDER BY 1;
SELECT count(*) AS removed_with_content_filter
FROM simhash_dedup_keyed(NULL::uuid,
  'SELECT uid, shingle_simhash128(body, 3, ''auto'', 0), shingle_simhash128(body, 3, ''auto'', 1), body, created_at FROM art WHERE cardinality(shingle_set(body)) > 0',
  49, 0.8, 'center', 3, 'auto')
WHERE duplicate_of IS NOT NULL;

-- Move duplicates to an archive table, keyed by uuid (names on both sides)
BEGIN;
CREATE TABLE art_removed (uid uuid PRIMARY KEY, body text, fp simhash, duplicate_of uuid NOT NULL);
WITH d AS (
  SELECT uid, duplicate_of
  FROM simhash_dedup_keyed(NULL::uuid,
    'SELECT uid, shingle_simhash128(body, 3, ''auto'', 0), shingle_simhash128(body, 3, ''auto'', 1), body, created_at FROM art WHERE cardinality(shingle_set(body)) > 0',
    49, 0.8, 'center', 3, 'auto') AS d(uid, duplicate_of)
  WHERE duplicate_of IS NOT NULL
), moved AS (
  DELETE FROM art USING d WHERE art.uid = d.uid RETURNING art.uid, art.body, art.fp, d.duplicate_of
)
INSERT INTO art_removed (uid, body, fp, duplicate_of) SELECT * FROM moved;
SELECT count(*) AS moved,
       count(*) FILTER (WHERE NOT EXISTS (SELECT 1 FROM art k WHERE k.uid = r.duplicate_of)) AS without_original
FROM art_removed r;
ROLLBACK;

-- Mark duplicates instead, keyed by uuid
ALTER TABLE art ADD COLUMN duplicate_of uuid;
UPDATE art SET duplicate_of = d.duplicate_of
FROM simhash_dedup_keyed(NULL::uuid,
  'SELECT uid, shingle_simhash128(body, 3, ''auto'', 0), shingle_simhash128(body, 3, ''auto'', 1), body, created_at FROM art WHERE cardinality(shingle_set(body)) > 0',
  49, 0.8, 'center', 3, 'auto') AS d(uid, duplicate_of)
WHERE art.uid = d.uid AND d.duplicate_of IS NOT NULL;
SELECT count(*) FILTER (WHERE duplicate_of IS NOT NULL) AS marked, count(*) AS rows FROM art;
RESET simhash.pairs_recall;

-- Reject near-duplicates at insert: a NULL text never conflicts; texts
-- without content conflict with each other (the fingerprint 0), so a CHECK
-- keeps them out
CREATE TABLE gate (uid uuid PRIMARY KEY DEFAULT gen_random_uuid(), body text,
                   fp simhash GENERATED ALWAYS AS (simhash(body)) STORED,
                   EXCLUDE USING hamming (fp WITH %) WITH (max_distance = 3));
INSERT INTO gate (body) VALUES (NULL), (NULL), ('');
INSERT INTO gate (body) VALUES ('!!!') ON CONFLICT DO NOTHING;
SELECT count(*) AS rows, count(body) AS with_text FROM gate;
ALTER TABLE gate ADD CHECK (body IS NULL OR cardinality(shingle_set(body)) > 0) NOT VALID;
DELETE FROM gate WHERE cardinality(shingle_set(body)) = 0;
ALTER TABLE gate VALIDATE CONSTRAINT gate_body_check;
\set VERBOSITY terse
INSERT INTO gate (body) VALUES ('!!!');
\set VERBOSITY default
INSERT INTO gate (body) VALUES ('The quick brown fox jumps over the lazy dog near the river bank today.');
SELECT count(*) AS rows, count(body) AS with_text FROM gate;
SELECT count(*) AS hamming_indexes FROM pg_indexes
WHERE schemaname = 'recipes_null' AND tablename = 'gate' AND indexdef LIKE '%USING hamming%';

RESET statement_timeout;
DROP SCHEMA recipes_null CASCADE;
