-- The whole-table functions with the tables (or bands) shared among parallel
-- workers (simhash.band_workers, forced here whatever the number of rows):
-- the answers of a serial run for 64, 128 and 256 bits, exact tables and
-- bands, verified or not, every form and linkage; the keyed forms row for
-- row in the same order, the integer forms (whose order is the engine's) as
-- the same rows.  simhash_mark_duplicates marks the rows of a serial run,
-- with and without a rank.  An error in a worker reaches the caller with its
-- SQLSTATE, and an error or a cancel leaves no worker and no temporary file
-- behind.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS simhash;
DROP SCHEMA IF EXISTS pairs_parallel CASCADE;
RESET client_min_messages;
CREATE SCHEMA pairs_parallel;
SET search_path = pairs_parallel, public;

-- 500 texts of 40 words out of 300, near copies (one word replaced, words
-- appended), exact copies, a NULL and a text without shingles
CREATE TABLE pp (id bigint PRIMARY KEY, body text, fp simhash, h0 simhash128, h1 simhash128);
INSERT INTO pp (id, body)
SELECT i, (SELECT string_agg('w' || (abs(hashint4(i * 37 + j)) % 300), ' ' ORDER BY j) FROM generate_series(1, 40) j)
FROM generate_series(1, 500) i;
INSERT INTO pp (id, body) SELECT id + 1000, regexp_replace(body, '\mw' || (id % 300) || '\M', 'x', 'g') FROM pp WHERE id <= 200;
INSERT INTO pp (id, body) SELECT id + 2000, body || ' and a few more words' FROM pp WHERE id <= 100;
INSERT INTO pp (id, body) SELECT id + 3000, body FROM pp WHERE id <= 50;
INSERT INTO pp (id, body) VALUES (5000, NULL), (5001, '!!!');
UPDATE pp SET fp = simhash(body), h0 = shingle_simhash128(body, 3, 'auto', 0), h1 = shingle_simhash128(body, 3, 'auto', 1);
ANALYZE pp;

-- every form, as text rows with their place in the answer; keyed forms
-- promise their order
CREATE TABLE forms (form text, call text, ordered boolean);
INSERT INTO forms
SELECT w.bits || ' ' || f.name, format(f.call, w.q || CASE WHEN f.verified THEN ', body' ELSE '' END || ' FROM pairs_parallel.pp', w.k),
       f.name LIKE '%keyed%'
FROM (VALUES (64, 'SELECT id, fp', 24),
             (128, 'SELECT id, h0', 40),
             (256, 'SELECT id, h0, h1', 80)) w(bits, q, k),
     (VALUES ('pairs', 'simhash_pairs(%L, %s)', false),
             ('clusters', 'simhash_clusters(%L, %s)', false),
             ('dedup', 'simhash_dedup(%L, %s)', false),
             ('clusters single', 'simhash_clusters(%L, %s, ''single'')', false),
             ('clusters center', 'simhash_clusters(%L, %s, ''center'')', false),
             ('dedup single', 'simhash_dedup(%L, %s, ''single'')', false),
             ('dedup center', 'simhash_dedup(%L, %s, ''center'')', false),
             ('lineage single', 'simhash_lineage(%L, %s, ''single'')', false),
             ('lineage center', 'simhash_lineage(%L, %s, ''center'')', false),
             ('pairs keyed', 'simhash_pairs_keyed(NULL::bigint, %L, %s)', false),
             ('clusters keyed', 'simhash_clusters_keyed(NULL::bigint, %L, %s, ''center'')', false),
             ('verified pairs', 'simhash_pairs(%L, %s, 0.5, 3, ''auto'')', true),
             ('verified clusters', 'simhash_clusters(%L, %s, 0.5, 3, ''auto'')', true),
             ('verified dedup', 'simhash_dedup(%L, %s, 0.5, 3, ''auto'')', true),
             ('verified clusters single', 'simhash_clusters(%L, %s, 0.5, ''single'', 3, ''auto'')', true),
             ('verified clusters center', 'simhash_clusters(%L, %s, 0.5, ''center'', 3, ''auto'')', true),
             ('verified dedup single', 'simhash_dedup(%L, %s, 0.5, ''single'', 3, ''auto'')', true),
             ('verified dedup center', 'simhash_dedup(%L, %s, 0.5, ''center'', 3, ''auto'')', true),
             ('verified lineage single', 'simhash_lineage(%L, %s, 0.5, ''single'', 3, ''auto'')', true),
             ('verified lineage center', 'simhash_lineage(%L, %s, 0.5, ''center'', 3, ''auto'')', true),
             ('verified pairs keyed', 'simhash_pairs_keyed(NULL::bigint, %L, %s, 0.5, 3, ''auto'')', true),
             ('verified dedup keyed', 'simhash_dedup_keyed(NULL::bigint, %L, %s, 0.5, ''center'', 3, ''auto'')', true)) f(name, call, verified);
CREATE TABLE answers (label text, form text, ord bigint, answer text);
CREATE FUNCTION record_answers(label text) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  f record;
BEGIN
  FOR f IN SELECT * FROM pairs_parallel.forms ORDER BY form LOOP
    EXECUTE format('INSERT INTO pairs_parallel.answers SELECT %L, %L, t.ordinality, (to_jsonb(t) - ''ordinality'')::text '
                   'FROM %s WITH ORDINALITY AS t', label, f.form, f.call);
  END LOOP;
END $$;
-- each run against the serial one: rows that one has and the other not,
-- and for the keyed forms rows at another place
CREATE FUNCTION compare(label text, OUT rows bigint, OUT unmatched bigint, OUT misplaced bigint) LANGUAGE sql AS $$
  SELECT (SELECT count(*) FROM pairs_parallel.answers a WHERE a.label = compare.label),
         (SELECT count(*) FROM (
            (SELECT form, answer FROM pairs_parallel.answers a WHERE a.label = compare.label
             EXCEPT ALL SELECT form, answer FROM pairs_parallel.answers WHERE label = 'serial')
            UNION ALL
            (SELECT form, answer FROM pairs_parallel.answers WHERE label = 'serial'
             EXCEPT ALL SELECT form, answer FROM pairs_parallel.answers a WHERE a.label = compare.label)) x),
         (SELECT count(*) FROM pairs_parallel.answers a
            JOIN pairs_parallel.forms f ON f.form = a.form AND f.ordered
            LEFT JOIN pairs_parallel.answers s ON s.label = 'serial' AND (s.form, s.ord) = (a.form, a.ord)
           WHERE a.label = compare.label AND s.answer IS DISTINCT FROM a.answer) $$;
-- what an error or a cancel may have left: parallel workers of this
-- backend, temporary files
CREATE FUNCTION leftovers(OUT workers bigint, OUT temporary_files bigint) LANGUAGE sql AS $$
  SELECT (SELECT count(*) FROM pg_stat_activity WHERE leader_pid = pg_backend_pid()),
         (SELECT count(*) FROM pg_ls_dir('base/pgsql_tmp', true, false)) $$;

-- serial, the exact tables
SET simhash.band_workers = 0;
SELECT record_answers('serial');
SELECT count(DISTINCT form) AS forms, count(*) AS rows, count(*) FILTER (WHERE form LIKE '% pairs') AS pairs
FROM answers WHERE label = 'serial';
-- two workers take every table (the leader only collects); they say so
SET simhash.band_workers = 2;
SET parallel_leader_participation = off;
SET client_min_messages = debug1;
SELECT count(*) FROM simhash_pairs('SELECT id, h0, h1 FROM pairs_parallel.pp', 80);
RESET client_min_messages;
SELECT record_answers('workers');
-- the leader takes tables too
SET parallel_leader_participation = on;
SELECT record_answers('workers and leader');
SELECT label, (compare(label)).* FROM (VALUES ('workers'), ('workers and leader')) l(label);

-- the bands (simhash.pairs_recall below 1): the same, against their own
-- serial run
DELETE FROM answers;
SET simhash.pairs_recall = 0.9;
SET simhash.band_workers = 0;
SELECT record_answers('serial');
SET simhash.band_workers = 2;
SET parallel_leader_participation = off;
SET client_min_messages = debug1;
SELECT count(*) FROM simhash_pairs('SELECT id, h0, h1 FROM pairs_parallel.pp', 80);
RESET client_min_messages;
SELECT record_answers('band workers');
SELECT label, (compare(label)).* FROM (VALUES ('band workers')) l(label);
RESET simhash.pairs_recall;
RESET parallel_leader_participation;

-- rows spilled to a temporary file are enumerated by the leader alone
SET work_mem = '64kB';
SET client_min_messages = debug1;
SELECT count(*) FROM simhash_pairs('SELECT p.id * 10 + g, p.fp FROM pairs_parallel.pp p, generate_series(0, 9) g', 3);
RESET client_min_messages;
RESET work_mem;

-- simhash_mark_duplicates, without and with a rank: the marks of a serial run
CREATE TABLE marks (id bigint PRIMARY KEY, body text, dup bigint);
INSERT INTO marks SELECT id, body FROM pp;
SET simhash.band_workers = 0;
SELECT simhash_mark_duplicates('marks', 'body', 'dup', 0.7) AS serial_marked;
CREATE TABLE serial_marks AS SELECT id, dup FROM marks;
SELECT simhash_mark_duplicates('marks', 'body', 'dup', 0.7, '-length(body)') AS serial_ranked;
CREATE TABLE serial_ranked AS SELECT id, dup FROM marks;
SET simhash.band_workers = 2;
SET parallel_leader_participation = off;
SELECT simhash_mark_duplicates('marks', 'body', 'dup', 0.7) AS parallel_marked;
SELECT count(*) AS rows, count(*) FILTER (WHERE s.dup IS DISTINCT FROM m.dup) AS mismatches
FROM marks m JOIN serial_marks s USING (id);
SELECT simhash_mark_duplicates('marks', 'body', 'dup', 0.7, '-length(body)') AS parallel_ranked;
SELECT count(*) AS rows, count(*) FILTER (WHERE s.dup IS DISTINCT FROM m.dup) AS mismatches
FROM marks m JOIN serial_ranked s USING (id);
-- the rank changes the kept rows
SELECT count(*) FILTER (WHERE r.dup IS DISTINCT FROM s.dup) > 0 AS rank_changes_marks
FROM serial_marks s JOIN serial_ranked r USING (id);

-- an error in a worker reaches the caller with its SQLSTATE, and leaves
-- nothing behind
SET simhash.band_test_error = 2;
\set VERBOSITY sqlstate
SELECT count(*) FROM simhash_pairs('SELECT id, h0, h1 FROM pairs_parallel.pp', 80);
SELECT count(*) FROM simhash_dedup('SELECT id, h0, h1, body FROM pairs_parallel.pp', 80, 0.5, 3, 'auto');
\set VERBOSITY default
RESET simhash.band_test_error;
SELECT * FROM leftovers();

-- a statement timeout cancels the workers in the middle of their tables:
-- 20,000 random 256-bit fingerprints within 100 bits make 101 tables of
-- 3-bit keys, each a comparison of an eighth of all pairs (seconds in all)
CREATE TABLE rnd AS SELECT i AS id, md5(i::text)::simhash128 AS h0, md5((-i)::text)::simhash128 AS h1
FROM generate_series(1, 20000) i;
SET statement_timeout = '1s';
\set VERBOSITY sqlstate
SELECT count(*) FROM simhash_pairs('SELECT id, h0, h1 FROM pairs_parallel.rnd', 100);
\set VERBOSITY default
RESET statement_timeout;
SELECT * FROM leftovers();
RESET parallel_leader_participation;
RESET simhash.band_workers;

SET client_min_messages = warning;
DROP SCHEMA pairs_parallel CASCADE;
RESET client_min_messages;
