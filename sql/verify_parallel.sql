-- The verified whole-table functions with parallel workers: the workers that
-- tokenize the candidate texts (simhash.verify_workers, forced here whatever
-- the number of texts) give the answers of a serial run, row for row in the
-- same order, for 64, 128 and 256 bits, every form and linkage, with the sets
-- in memory or in a temporary file; simhash_mark_duplicates computes its
-- fingerprints with parallel query when the planner chooses workers.  The
-- candidates' tables (or bands) shared among workers (simhash.band_workers,
-- forced too) give the candidates of a serial run, verified or not, exact
-- tables and bands, every form and linkage; the keyed forms row for row, the
-- integer forms (whose order is the engine's) as the same rows; and
-- simhash_mark_duplicates marks the rows of a serial run, with and without a
-- rank.  An error in a worker reaches the caller with its SQLSTATE, and an
-- error or a cancel leaves no worker and no temporary file behind.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS simhash;
DROP SCHEMA IF EXISTS verify_parallel CASCADE;
RESET client_min_messages;
CREATE SCHEMA verify_parallel;
SET search_path = verify_parallel, public;

-- 600 texts of 40 words out of 300, near copies (one word replaced, words
-- appended), exact copies, a NULL and a text without shingles
CREATE TABLE vp (id bigint PRIMARY KEY, body text, fp simhash, h0 simhash128, h1 simhash128);
INSERT INTO vp (id, body)
SELECT i, (SELECT string_agg('w' || (abs(hashint4(i * 41 + j)) % 300), ' ' ORDER BY j) FROM generate_series(1, 40) j)
FROM generate_series(1, 600) i;
INSERT INTO vp (id, body) SELECT id + 1000, regexp_replace(body, '\mw' || (id % 300) || '\M', 'x', 'g') FROM vp WHERE id <= 200;
INSERT INTO vp (id, body) SELECT id + 2000, body || ' and a few more words' FROM vp WHERE id <= 100;
INSERT INTO vp (id, body) SELECT id + 3000, body FROM vp WHERE id <= 50;
INSERT INTO vp (id, body) VALUES (5000, NULL), (5001, '!!!');
UPDATE vp SET fp = simhash(body), h0 = shingle_simhash128(body, 3, 'auto', 0), h1 = shingle_simhash128(body, 3, 'auto', 1);
ANALYZE vp;

-- every verified form, as text rows with their place in the answer
CREATE TABLE forms (form text, call text);
INSERT INTO forms
SELECT w.bits || ' ' || f.name, format(f.call, w.q, w.k)
FROM (VALUES (64, 'SELECT id, fp, body FROM verify_parallel.vp', 24),
             (128, 'SELECT id, h0, body FROM verify_parallel.vp', 40),
             (256, 'SELECT id, h0, h1, body FROM verify_parallel.vp', 80)) w(bits, q, k),
     (VALUES ('pairs', 'simhash_pairs(%L, %s, 0.5, 3, ''auto'')'),
             ('clusters', 'simhash_clusters(%L, %s, 0.5, 3, ''auto'')'),
             ('dedup', 'simhash_dedup(%L, %s, 0.5, 3, ''auto'')'),
             ('clusters single', 'simhash_clusters(%L, %s, 0.5, ''single'', 3, ''auto'')'),
             ('clusters center', 'simhash_clusters(%L, %s, 0.5, ''center'', 3, ''auto'')'),
             ('dedup single', 'simhash_dedup(%L, %s, 0.5, ''single'', 3, ''auto'')'),
             ('dedup center', 'simhash_dedup(%L, %s, 0.5, ''center'', 3, ''auto'')'),
             ('lineage single', 'simhash_lineage(%L, %s, 0.5, ''single'', 3, ''auto'')'),
             ('lineage center', 'simhash_lineage(%L, %s, 0.5, ''center'', 3, ''auto'')'),
             ('dedup keyed', 'simhash_dedup_keyed(NULL::bigint, %L, %s, 0.5, ''center'', 3, ''auto'')')) f(name, call);
CREATE TABLE answers (label text, form text, ord bigint, answer text);
-- compare() joins runs by (form, ord): an index keeps that fast whether or
-- not the table was analyzed yet
CREATE INDEX ON answers (label, form, ord);
CREATE FUNCTION record_answers(label text, pattern text DEFAULT '%') RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  f record;
BEGIN
  FOR f IN SELECT * FROM verify_parallel.forms WHERE form LIKE pattern ORDER BY form LOOP
    EXECUTE format('INSERT INTO verify_parallel.answers SELECT %L, %L, t.ordinality, (to_jsonb(t) - ''ordinality'')::text '
                   'FROM %s WITH ORDINALITY AS t', label, f.form, f.call);
  END LOOP;
END $$;
-- what an error or a cancel may have left: parallel workers of this
-- backend, temporary files
CREATE FUNCTION leftovers(OUT workers bigint, OUT temporary_files bigint) LANGUAGE sql AS $$
  SELECT (SELECT count(*) FROM pg_stat_activity WHERE leader_pid = pg_backend_pid()),
         (SELECT count(*) FROM pg_ls_dir('base/pgsql_tmp', true, false)) $$;

-- serial
SET work_mem = '4MB';
SET simhash.verify_workers = 0;
SELECT record_answers('serial');
-- two workers that tokenize every text (the leader only reads); they say so
SET simhash.verify_workers = 2;
SET parallel_leader_participation = off;
SET client_min_messages = debug1;
SELECT count(*) FROM simhash_pairs('SELECT id, h0, h1, body FROM verify_parallel.vp', 80, 0.5, 3, 'auto');
RESET client_min_messages;
SELECT record_answers('workers');
-- the leader tokenizes too when the workers' queues are full (the 256-bit
-- forms)
SET parallel_leader_participation = on;
SELECT record_answers('workers and leader', '256 %');
-- the sets in a temporary file (work_mem of 64 kB): the same rows; the
-- pairs engine's order depends on work_mem, so compared as sets
SET work_mem = '64kB';
SELECT record_answers('spilled', '256 %');
RESET work_mem;

SELECT count(DISTINCT form) AS forms, count(*) AS rows FROM answers WHERE label = 'serial';
-- row for row, in the same order
SELECT a.label, count(*) AS rows,
       count(*) FILTER (WHERE s.answer IS DISTINCT FROM a.answer) AS mismatches
FROM answers a LEFT JOIN answers s ON s.label = 'serial' AND (s.form, s.ord) = (a.form, a.ord)
WHERE a.label IN ('workers', 'workers and leader') GROUP BY 1 ORDER BY 1;
SELECT count(*) AS unmatched FROM (
  (SELECT form, answer FROM answers WHERE label = 'spilled' EXCEPT ALL SELECT form, answer FROM answers WHERE label = 'serial')
  UNION ALL
  (SELECT form, answer FROM answers WHERE label = 'serial' AND form LIKE '256 %'
   EXCEPT ALL SELECT form, answer FROM answers WHERE label = 'spilled')) x;
-- the verified pairs are the candidates whose shingle_similarity is at least 0.5
SELECT (SELECT count(*) FROM answers WHERE label = 'workers' AND form = '256 pairs') AS verified,
       (SELECT count(*) FROM simhash_pairs('SELECT id, h0, h1 FROM verify_parallel.vp', 80) p
          JOIN vp a ON a.id = p.id_a JOIN vp b ON b.id = p.id_b
         WHERE shingle_similarity(a.body, b.body, 3, 'auto') >= 0.5) AS brute;

-- a query that calls a PARALLEL UNSAFE function is read without workers
-- (in parallel mode it could fail)
CREATE FUNCTION unsafe_body(t text) RETURNS text LANGUAGE sql VOLATILE PARALLEL UNSAFE AS 'SELECT t';
SET client_min_messages = debug1;
SELECT count(*) FROM simhash_pairs('SELECT id, h0, h1, verify_parallel.unsafe_body(body) FROM verify_parallel.vp', 80, 0.5, 3, 'auto');
RESET client_min_messages;

-- simhash_mark_duplicates: the fingerprints with parallel query, the texts
-- with workers; the marks of a serial run
CREATE TABLE marks (id bigint PRIMARY KEY, body text, dup bigint);
INSERT INTO marks SELECT id, body FROM vp;
SET max_parallel_workers_per_gather = 0;
SET simhash.verify_workers = 0;
SELECT simhash_mark_duplicates('marks', 'body', 'dup') AS serial_marked;
CREATE TABLE serial_marks AS SELECT id, dup FROM marks;
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET simhash.verify_workers = 2;
SELECT simhash_mark_duplicates('marks', 'body', 'dup', 0.5) IS NOT NULL AS other_marks;
SELECT simhash_mark_duplicates('marks', 'body', 'dup') AS parallel_marked;
SELECT count(*) AS rows, count(*) FILTER (WHERE s.dup IS DISTINCT FROM m.dup) AS mismatches
FROM marks m JOIN serial_marks s USING (id);

-- an error in a worker reaches the caller with its SQLSTATE: the rank,
-- computed with the fingerprints, divides by zero in any process but this
-- one (the workers scan alone)
CREATE FUNCTION leader_only(id bigint) RETURNS bigint LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$ BEGIN RETURN id / (pg_backend_pid() = current_setting('verify_parallel.leader')::int)::int; END $$;
SELECT set_config('verify_parallel.leader', pg_backend_pid()::text, false) IS NOT NULL AS leader_set;
SET parallel_leader_participation = off;
\set VERBOSITY sqlstate
SELECT simhash_mark_duplicates('marks', 'body', 'dup', 0.8, 'verify_parallel.leader_only(id)');
\set VERBOSITY default
SELECT * FROM leftovers();
-- and a worker of the verification: a text whose shingle set outgrows
-- maintenance_work_mem, in a candidate pair (an exact copy)
CREATE TABLE big (id bigint PRIMARY KEY, body text, h0 simhash128, h1 simhash128);
INSERT INTO big (id, body) SELECT i, (SELECT string_agg(md5(j::text), ' ') FROM generate_series(1, 40000) j) FROM generate_series(1, 2) i;
UPDATE big SET h0 = shingle_simhash128(body, 3, 'words', 0), h1 = shingle_simhash128(body, 3, 'words', 1);
SET maintenance_work_mem = '1MB';
\set VERBOSITY sqlstate
SELECT count(*) FROM simhash_pairs('SELECT id, h0, h1, body FROM verify_parallel.big', 10, 0.8, 3, 'words');
\set VERBOSITY default
SELECT * FROM leftovers();
-- the same error serially
SET simhash.verify_workers = 0;
\set VERBOSITY sqlstate
SELECT count(*) FROM simhash_pairs('SELECT id, h0, h1, body FROM verify_parallel.big', 10, 0.8, 3, 'words');
\set VERBOSITY default
RESET maintenance_work_mem;
RESET parallel_leader_participation;

-- a statement timeout cancels the verification (the query sleeps half a
-- millisecond or more a row, and is read twice: for the candidates, then for
-- the texts while the workers run): no worker and no file left either
SET simhash.verify_workers = 2;
SET statement_timeout = '1600ms';
\set VERBOSITY sqlstate
SELECT count(*) FROM simhash_pairs('SELECT id, h0, h1, (SELECT body FROM pg_sleep(0.0005 * (id > 0)::int)) FROM verify_parallel.vp',
                                   80, 0.5, 3, 'auto');
\set VERBOSITY default
RESET statement_timeout;
SELECT * FROM leftovers();


-- the candidates' tables shared among workers: the forms above and the
-- integer forms without verification, against a serial run
RESET max_parallel_workers_per_gather;
SET simhash.verify_workers = 0;
INSERT INTO forms
SELECT w.bits || ' ' || f.name, format(f.call, w.q, w.k)
FROM (VALUES (64, 'SELECT id, fp FROM verify_parallel.vp', 24),
             (128, 'SELECT id, h0 FROM verify_parallel.vp', 40),
             (256, 'SELECT id, h0, h1 FROM verify_parallel.vp', 80)) w(bits, q, k),
     (VALUES ('unverified pairs', 'simhash_pairs(%L, %s)'),
             ('unverified clusters', 'simhash_clusters(%L, %s)'),
             ('unverified dedup', 'simhash_dedup(%L, %s)'),
             ('unverified clusters single', 'simhash_clusters(%L, %s, ''single'')'),
             ('unverified clusters center', 'simhash_clusters(%L, %s, ''center'')'),
             ('unverified dedup single', 'simhash_dedup(%L, %s, ''single'')'),
             ('unverified dedup center', 'simhash_dedup(%L, %s, ''center'')'),
             ('unverified lineage single', 'simhash_lineage(%L, %s, ''single'')'),
             ('unverified lineage center', 'simhash_lineage(%L, %s, ''center'')'),
             ('unverified pairs keyed', 'simhash_pairs_keyed(NULL::bigint, %L, %s)'),
             ('unverified clusters keyed', 'simhash_clusters_keyed(NULL::bigint, %L, %s, ''center'')')) f(name, call);
-- a run against the serial one, in the forms the run recorded: rows that
-- one has and the other not, and rows of a keyed form at another place
CREATE FUNCTION compare(label text, OUT forms bigint, OUT rows bigint, OUT unmatched bigint, OUT misplaced bigint) LANGUAGE sql AS $$
  SELECT (SELECT count(DISTINCT form) FROM verify_parallel.answers a WHERE a.label = compare.label),
         (SELECT count(*) FROM verify_parallel.answers a WHERE a.label = compare.label),
         (SELECT count(*) FROM (
            (SELECT form, answer FROM verify_parallel.answers a WHERE a.label = compare.label
             EXCEPT ALL SELECT form, answer FROM verify_parallel.answers WHERE label = 'serial')
            UNION ALL
            (SELECT form, answer FROM verify_parallel.answers s WHERE s.label = 'serial'
               AND s.form IN (SELECT a.form FROM verify_parallel.answers a WHERE a.label = compare.label)
             EXCEPT ALL SELECT form, answer FROM verify_parallel.answers a WHERE a.label = compare.label)) x),
         (SELECT count(*) FROM verify_parallel.answers a
            LEFT JOIN verify_parallel.answers s ON s.label = 'serial' AND (s.form, s.ord) = (a.form, a.ord)
           WHERE a.label = compare.label AND a.form LIKE '%keyed' AND s.answer IS DISTINCT FROM a.answer) $$;
DELETE FROM answers;
SET simhash.band_workers = 0;
SELECT record_answers('serial');
SELECT count(DISTINCT form) AS forms, count(*) AS rows, count(*) FILTER (WHERE form LIKE '%pairs') AS pairs
FROM answers WHERE label = 'serial';
-- two workers take every table (the leader only collects their pairs); they
-- say so
SET simhash.band_workers = 2;
SET parallel_leader_participation = off;
SET client_min_messages = debug1;
SELECT count(*) FROM simhash_pairs('SELECT id, h0, h1 FROM verify_parallel.vp', 80);
RESET client_min_messages;
SELECT record_answers('band workers');
-- the leader takes tables too (the 256-bit forms)
SET parallel_leader_participation = on;
SELECT record_answers('band workers and leader', '256 %');
SELECT label, (compare(label)).* FROM (VALUES ('band workers'), ('band workers and leader')) l(label);
-- the three shares of simhash_pairs_share (one a node, for Citus) with
-- workers: the serial run's pairs, each once
SET parallel_leader_participation = off;
CREATE TABLE shared_pairs AS
SELECT s.share, to_jsonb(p)::text AS answer
FROM generate_series(0, 2) s(share),
     simhash_pairs_share('SELECT id, h0, h1 FROM verify_parallel.vp', 80, 1, s.share, 3) p;
SELECT (SELECT count(*) FROM shared_pairs) AS pairs,
       (SELECT count(DISTINCT share) FROM shared_pairs) AS shares_with_pairs,
       (SELECT count(*) FROM (
          (SELECT answer FROM answers WHERE label = 'serial' AND form = '256 unverified pairs'
           EXCEPT ALL SELECT answer FROM shared_pairs)
          UNION ALL
          (SELECT answer FROM shared_pairs EXCEPT ALL
           SELECT answer FROM answers WHERE label = 'serial' AND form = '256 unverified pairs')) x) AS unmatched;
-- the bands (simhash.pairs_recall below 1), against their own serial run
-- (the 128- and 256-bit forms)
DELETE FROM answers;
SET simhash.pairs_recall = 0.9;
SET simhash.band_workers = 0;
SELECT record_answers('serial', '2%');
SELECT record_answers('serial', '1%');
SET simhash.band_workers = 2;
SET parallel_leader_participation = off;
SELECT record_answers('band workers, bands', '2%');
SELECT record_answers('band workers, bands', '1%');
SELECT label, (compare(label)).* FROM (VALUES ('band workers, bands')) l(label);
RESET simhash.pairs_recall;

-- rows spilled to a temporary file (work_mem of 64 kB holds 1,024 rows)
-- are shared too: each worker splits the file's copy, table by table, into
-- partitions of its own.  2,853 distinct texts (the texts above, each also
-- with a word appended and with a word prepended), the forms verified and
-- not, against a serial run with the same work_mem
CREATE TABLE vs (id bigint PRIMARY KEY, body text, fp simhash, h0 simhash128, h1 simhash128);
INSERT INTO vs (id, body)
SELECT id + c * 10000, CASE c WHEN 0 THEN body WHEN 1 THEN body || ' tail' ELSE 'head ' || body END
FROM vp, generate_series(0, 2) c WHERE body IS NOT NULL;
UPDATE vs SET fp = simhash(body), h0 = shingle_simhash128(body, 3, 'auto', 0), h1 = shingle_simhash128(body, 3, 'auto', 1);
INSERT INTO forms
SELECT 'spilled ' || w.bits || ' ' || f.name,
       format(f.call, format('SELECT id, %s%s FROM verify_parallel.vs', w.cols, CASE WHEN f.verified THEN ', body' END), w.k)
FROM (VALUES (64, 'fp', 10), (128, 'h0', 20), (256, 'h0, h1', 40)) w(bits, cols, k),
     (VALUES ('pairs', true, 'simhash_pairs(%L, %s, 0.5, 3, ''auto'')'),
             ('clusters', true, 'simhash_clusters(%L, %s, 0.5, 3, ''auto'')'),
             ('dedup', true, 'simhash_dedup(%L, %s, 0.5, 3, ''auto'')'),
             ('dedup keyed', true, 'simhash_dedup_keyed(NULL::bigint, %L, %s, 0.5, ''center'', 3, ''auto'')'),
             ('unverified pairs', false, 'simhash_pairs(%L, %s)'),
             ('unverified clusters', false, 'simhash_clusters(%L, %s)'),
             ('unverified dedup', false, 'simhash_dedup(%L, %s)'),
             ('unverified pairs keyed', false, 'simhash_pairs_keyed(NULL::bigint, %L, %s)'),
             ('unverified clusters keyed', false, 'simhash_clusters_keyed(NULL::bigint, %L, %s, ''center'')')) f(name, verified, call);
DELETE FROM answers;
SET work_mem = '64kB';
SET hash_mem_multiplier = 16;
SET simhash.band_workers = 0;
SELECT record_answers('serial', 'spilled %');
SELECT count(DISTINCT form) AS forms, count(*) AS rows, count(*) FILTER (WHERE form LIKE '%pairs') AS pairs
FROM answers WHERE label = 'serial';
-- two workers take every table of the spilled rows; they say so
SET simhash.band_workers = 2;
SET client_min_messages = debug1;
SELECT count(*) FROM simhash_pairs('SELECT id, fp FROM verify_parallel.vs', 3);
RESET client_min_messages;
SELECT record_answers('band workers, spilled', 'spilled %');
-- the leader takes tables of its own spill file too
SET parallel_leader_participation = on;
SELECT record_answers('band workers and leader, spilled', 'spilled 256 %');
SET parallel_leader_participation = off;
RESET work_mem;
RESET hash_mem_multiplier;
SELECT label, (compare(label)).*
FROM (VALUES ('band workers, spilled'), ('band workers and leader, spilled')) l(label);
-- simhash_mark_duplicates beyond maintenance_work_mem (1 MB holds 13,107
-- fingerprints of 256 bits): 14,000 texts, the marks of a serial run; a
-- worker that fails after its second table fails the call, so workers took
-- the spilled rows' tables
CREATE TABLE mk (id bigint PRIMARY KEY, body text, dup bigint);
INSERT INTO mk (id, body)
SELECT i, (SELECT string_agg('w' || (abs(hashint4(i * 43 + j)) % 500), ' ' ORDER BY j) FROM generate_series(1, 30) j)
FROM generate_series(1, 9000) i;
INSERT INTO mk (id, body) SELECT id + 10000, body || ' and more' FROM mk WHERE id <= 5000;
SET maintenance_work_mem = '1MB';
SET simhash.band_workers = 0;
SELECT simhash_mark_duplicates('mk', 'body', 'dup', 0.7) AS serial_marked;
CREATE TABLE serial_mk AS SELECT id, dup FROM mk;
SET simhash.band_workers = 2;
SELECT simhash_mark_duplicates('mk', 'body', 'dup', 0.7) AS parallel_marked;
SELECT count(*) AS rows, count(*) FILTER (WHERE s.dup IS DISTINCT FROM m.dup) AS mismatches
FROM mk m JOIN serial_mk s USING (id);
SET simhash.band_test_error = 2;
\set VERBOSITY sqlstate
SELECT simhash_mark_duplicates('mk', 'body', 'dup', 0.7);
\set VERBOSITY default
RESET simhash.band_test_error;
SELECT * FROM leftovers();
RESET maintenance_work_mem;

-- simhash_mark_duplicates with band workers, without and with a rank: the
-- marks of a serial run
SET simhash.band_workers = 0;
SELECT simhash_mark_duplicates('marks', 'body', 'dup', 0.7) AS serial_marked;
CREATE TABLE serial_marks_07 AS SELECT id, dup FROM marks;
SELECT simhash_mark_duplicates('marks', 'body', 'dup', 0.7, '-length(body)') AS serial_ranked;
CREATE TABLE serial_ranked AS SELECT id, dup FROM marks;
SET simhash.band_workers = 2;
SELECT simhash_mark_duplicates('marks', 'body', 'dup', 0.7) AS parallel_marked;
SELECT count(*) AS rows, count(*) FILTER (WHERE s.dup IS DISTINCT FROM m.dup) AS mismatches
FROM marks m JOIN serial_marks_07 s USING (id);
SELECT simhash_mark_duplicates('marks', 'body', 'dup', 0.7, '-length(body)') AS parallel_ranked;
SELECT count(*) AS rows, count(*) FILTER (WHERE s.dup IS DISTINCT FROM m.dup) AS mismatches
FROM marks m JOIN serial_ranked s USING (id);
-- (the rank changes the kept rows)
SELECT count(*) FILTER (WHERE r.dup IS DISTINCT FROM s.dup) > 0 AS rank_changes_marks
FROM serial_marks_07 s JOIN serial_ranked r USING (id);

-- an error in a band worker reaches the caller with its SQLSTATE, and
-- leaves nothing behind
SET simhash.band_test_error = 2;
\set VERBOSITY sqlstate
SELECT count(*) FROM simhash_pairs('SELECT id, h0, h1 FROM verify_parallel.vp', 80);
SELECT count(*) FROM simhash_dedup('SELECT id, h0, h1, body FROM verify_parallel.vp', 80, 0.5, 3, 'auto');
\set VERBOSITY default
RESET simhash.band_test_error;
SELECT * FROM leftovers();
-- a statement timeout cancels the band workers in the middle of their
-- tables: 20,000 random 256-bit fingerprints within 100 bits make 101
-- tables of 3-bit keys, each comparing an eighth of all pairs (half a
-- minute serially)
CREATE TABLE rnd AS SELECT i AS id, md5(i::text)::simhash128 AS h0, md5((-i)::text)::simhash128 AS h1
FROM generate_series(1, 20000) i;
SET statement_timeout = '1s';
\set VERBOSITY sqlstate
SELECT count(*) FROM simhash_pairs('SELECT id, h0, h1 FROM verify_parallel.rnd', 100);
\set VERBOSITY default
RESET statement_timeout;
SELECT * FROM leftovers();
-- and when the rows spilled (work_mem of 1 MB holds 13,107 of them)
SET work_mem = '1MB';
SET statement_timeout = '1s';
\set VERBOSITY sqlstate
SELECT count(*) FROM simhash_pairs('SELECT id, h0, h1 FROM verify_parallel.rnd', 100);
\set VERBOSITY default
RESET statement_timeout;
RESET work_mem;
SELECT * FROM leftovers();
RESET parallel_leader_participation;
RESET simhash.band_workers;
RESET simhash.verify_workers;

SET client_min_messages = warning;
DROP SCHEMA verify_parallel CASCADE;
RESET client_min_messages;
