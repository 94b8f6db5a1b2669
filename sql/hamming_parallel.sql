-- CREATE INDEX ... USING hamming with parallel workers: the index is the
-- serial build's byte for byte (but for each page's LSN and checksum and the
-- metapage's identity of its tables), it answers every radius 0..64 and
-- nearest first as the serial index and a sequential scan do, the workers
-- really ran, and an error or a cancel in the build leaves no worker and no
-- temporary file behind.  Indexes WITH (probe_tables = off), of
-- fingerprints and of texts, and of simhash128 hold the serial build's
-- entries and answer as a sequential scan does.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS simhash;
CREATE SCHEMA hamming_parallel;
RESET client_min_messages;
SET search_path = hamming_parallel, public;
SELECT setseed(0.43);

-- a fingerprint for each number: two 32-bit hashes
CREATE FUNCTION hashed_simhash(i int) RETURNS simhash LANGUAGE sql IMMUTABLE AS
$$ SELECT ((hashint4(i)::bigint << 32) | (hashint4(-i)::bigint & 4294967295))::simhash $$;
-- fp with d random bits flipped (some may coincide: at most d)
CREATE FUNCTION near_simhash(fp simhash, d int) RETURNS simhash LANGUAGE sql VOLATILE AS
$$ SELECT (fp::bigint # coalesce((SELECT bit_or(1::bigint << (random() * 63)::int)
                                   FROM generate_series(1, d)), 0))::simhash $$;

-- 50,000 rows: uniform fingerprints, neighbours of four centers, fingerprints
-- that several rows share, NULLs; then updates (HOT chains: the index holds
-- their root TIDs) and deletions
CREATE TABLE docs (id int, fp simhash) WITH (fillfactor = 80, autovacuum_enabled = off);
CREATE TABLE centers AS SELECT j, hashed_simhash(-j) AS fp FROM generate_series(1, 4) j;
INSERT INTO docs SELECT i, CASE WHEN i % 101 = 0 THEN NULL
                                WHEN i % 7 = 0 THEN (SELECT near_simhash(fp, i % 23) FROM centers WHERE j = i % 4 + 1)
                                WHEN i % 13 = 0 THEN ('00000000000000' || lpad(to_hex(i % 5), 2, '0'))::simhash
                                ELSE hashed_simhash(i) END
FROM generate_series(1, 50000) i;
UPDATE docs SET fp = NULL WHERE id % 997 = 0;
UPDATE docs SET fp = near_simhash(fp, 2) WHERE id % 1009 = 0;
DELETE FROM docs WHERE id % 1013 = 0;
VACUUM docs;
SELECT count(*) - count(fp) AS nulls, count(fp) - count(DISTINCT fp) AS repeated_fingerprints FROM docs;

-- the bytes of two indexes that differ, block by block (from the files:
-- after a checkpoint), but for each page's LSN and checksum (its first 10
-- bytes)
CREATE FUNCTION differing_bytes(a regclass, b regclass)
RETURNS TABLE (blkno int, first_byte int, last_byte int) LANGUAGE sql AS $$
  WITH f AS (SELECT pg_read_binary_file(pg_relation_filepath(a)) AS x,
                    pg_read_binary_file(pg_relation_filepath(b)) AS y),
  blocks AS (SELECT blk FROM f, generate_series(0, greatest(length(x), length(y)) / 8192 - 1) blk
             WHERE substring(x FROM blk * 8192 + 11 FOR 8182) IS DISTINCT FROM
                   substring(y FROM blk * 8192 + 11 FOR 8182))
  SELECT blk, min(i), max(i) FROM f, blocks, generate_series(10, 8191) i
  WHERE blk * 8192 + i >= least(length(x), length(y))
     OR get_byte(x, blk * 8192 + i) <> get_byte(y, blk * 8192 + i)
  GROUP BY blk ORDER BY blk $$;

-- what an index answers (whichever index of docs there is, forced): the
-- rows within k bits (count, checksum of ids) for k = 0..24 around every
-- center and every larger k around the first, and the first 300 rows
-- nearest first
CREATE TABLE radii AS SELECT j, k FROM centers, generate_series(0, 64) k WHERE k <= 24 OR j = 1;
CREATE TABLE answers (label text, j int, k int, n bigint, checksum bigint);
CREATE TABLE nearest (label text, j int, rank bigint, id int, d int);
-- what an error or a cancel may have left: parallel workers of this
-- backend, temporary files
CREATE FUNCTION leftovers(OUT workers bigint, OUT temporary_files bigint) LANGUAGE sql AS $$
  SELECT (SELECT count(*) FROM pg_stat_activity WHERE leader_pid = pg_backend_pid()),
         (SELECT count(*) FROM pg_ls_dir('base/pgsql_tmp', true, false)) $$;
CREATE FUNCTION record_answers(label text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off; SET LOCAL enable_sort = off;
  INSERT INTO answers SELECT label, c.j, k, count(d.id), coalesce(sum(hashint4(d.id)), 0)
    FROM centers c JOIN radii r USING (j)
    LEFT JOIN LATERAL (SELECT id FROM docs WHERE fp <~> c.fp <= k) d ON true GROUP BY 1, 2, 3;
  INSERT INTO nearest SELECT label, c.j, x.rank, x.id, x.d FROM centers c, LATERAL (
    SELECT row_number() OVER () AS rank, id, d FROM (
      SELECT id, fp <~> c.fp AS d FROM docs ORDER BY fp <~> c.fp LIMIT 300) s) x;
END $$;
-- the sequential scan's answers
SET enable_indexscan = off; SET enable_bitmapscan = off;
INSERT INTO answers SELECT 'seq', c.j, k, count(d.id), coalesce(sum(hashint4(d.id)), 0)
  FROM centers c JOIN radii r USING (j)
  LEFT JOIN docs d ON bit_count((d.fp::bigint # c.fp::bigint)::bit(64)) <= k GROUP BY 1, 2, 3;
INSERT INTO nearest SELECT 'seq', c.j, x.rank, x.id, x.d FROM centers c, LATERAL (
  SELECT row_number() OVER () AS rank, id, d FROM (
    SELECT id, bit_count((fp::bigint # c.fp::bigint)::bit(64))::int AS d FROM docs
    ORDER BY 2 NULLS LAST, ctid LIMIT 300) s) x;
RESET enable_indexscan; RESET enable_bitmapscan;

-- a serial build
SET maintenance_work_mem = '64MB';
SET max_parallel_maintenance_workers = 0;
CREATE INDEX docs_serial ON docs USING hamming (fp);
SELECT record_answers('serial');
-- (the index answers them)
SET enable_seqscan = off; SET enable_bitmapscan = off; SET enable_sort = off;
EXPLAIN (COSTS OFF) SELECT id FROM docs WHERE fp <~> '0123456789abcdef' <= 3;
EXPLAIN (COSTS OFF) SELECT id FROM docs ORDER BY fp <~> '0123456789abcdef' LIMIT 300;
RESET enable_seqscan; RESET enable_bitmapscan; RESET enable_sort;

-- a parallel build: two workers, whatever the table's size
SET max_parallel_maintenance_workers = 2;
SET min_parallel_table_scan_size = 0;
SET parallel_setup_cost = 0;
SET parallel_leader_participation = on;
ALTER TABLE docs SET (parallel_workers = 2);
-- the build says how many workers it started (17 and later say first that
-- the server asked for them, 15 that it builds "serially": the access method
-- asks on its own there)
SET client_min_messages = debug1;
CREATE INDEX docs_parallel ON docs USING hamming (fp);
RESET client_min_messages;
SELECT hamming_index_check('docs_parallel');
CHECKPOINT;
SELECT blkno, last_byte / 8 = first_byte / 8 AS within_one_word FROM differing_bytes('docs_serial', 'docs_parallel');
SELECT (SELECT table_entries FROM hamming_index_info('docs_serial')) AS serial_entries,
       (SELECT table_entries FROM hamming_index_info('docs_parallel')) AS parallel_entries;
DROP INDEX docs_serial;
SELECT record_answers('parallel');

-- without the leader, and with sorts that spill (a third of 1 MB each)
SET parallel_leader_participation = off;
SET maintenance_work_mem = '1MB';
CREATE INDEX docs_spilled ON docs USING hamming (fp);
SELECT hamming_index_check('docs_spilled');
CHECKPOINT;
SELECT blkno, last_byte / 8 = first_byte / 8 AS within_one_word FROM differing_bytes('docs_parallel', 'docs_spilled');
DROP INDEX docs_spilled;
RESET parallel_leader_participation;

-- a concurrent build (workers scan with the leader's snapshot)
SET maintenance_work_mem = '64MB';
CREATE INDEX CONCURRENTLY docs_concurrent ON docs USING hamming (fp);
SELECT hamming_index_check('docs_concurrent');
CHECKPOINT;
SELECT blkno, last_byte / 8 = first_byte / 8 AS within_one_word FROM differing_bytes('docs_parallel', 'docs_concurrent');
DROP INDEX docs_concurrent;
DROP INDEX docs_parallel;

-- WITH (probe_tables = off): the workers compute the entries, the leader
-- writes them onto the tail (in any order); the serial build's entries on
-- as many pages, NULLs included
SET max_parallel_maintenance_workers = 0;
CREATE INDEX docs_tail_serial ON docs USING hamming (fp) WITH (probe_tables = off);
SET max_parallel_maintenance_workers = 2;
SET client_min_messages = debug1;
CREATE INDEX docs_tail ON docs USING hamming (fp) WITH (probe_tables = off);
RESET client_min_messages;
SELECT hamming_index_check('docs_tail');
SELECT s.tail_entries AS serial_entries, p.tail_entries AS parallel_entries,
       s.tail_pages AS serial_pages, p.tail_pages AS parallel_pages, p.table_entries
FROM hamming_index_info('docs_tail_serial') s, hamming_index_info('docs_tail') p;
DROP INDEX docs_tail_serial;
SELECT record_answers('tail');
DROP INDEX docs_tail;

-- every answer equals the sequential scan's: rows within k, and nearest
-- first the distances rank by rank and the rows at each distance but the
-- last (whose ties the LIMIT cuts)
SELECT a.label, count(*) AS radii, count(*) FILTER (WHERE (a.n, a.checksum) <> (s.n, s.checksum)) AS mismatches,
       sum(a.n) AS rows_found
FROM answers a JOIN answers s ON s.label = 'seq' AND (s.j, s.k) = (a.j, a.k)
WHERE a.label <> 'seq' GROUP BY 1 ORDER BY 1;
SELECT a.label, count(*) AS ranks,
       count(*) FILTER (WHERE a.d IS DISTINCT FROM s.d) AS distance_mismatches
FROM nearest a JOIN nearest s ON s.label = 'seq' AND (s.j, s.rank) = (a.j, a.rank)
WHERE a.label <> 'seq' GROUP BY 1 ORDER BY 1;
SELECT l.label, (SELECT count(*) FROM (
    (SELECT j, id, d FROM nearest n WHERE n.label = l.label EXCEPT ALL SELECT j, id, d FROM nearest WHERE label = 'seq')
    UNION ALL
    (SELECT j, id, d FROM nearest WHERE label = 'seq' EXCEPT ALL SELECT j, id, d FROM nearest n WHERE n.label = l.label)) x
  WHERE x.d < (SELECT max(d) FROM nearest s WHERE s.label = 'seq' AND s.j = x.j)) AS row_mismatches
FROM (VALUES ('parallel'), ('serial'), ('tail')) l(label);

-- an index of texts WITH (probe_tables = off): the workers fingerprint the
-- texts (a row's distinct quarters: up to four entries, a NULL entry for a
-- NULL or a text without shingles), with the leader and without it
CREATE TABLE sample (n int, cid text, lang text, role text, orig text, rate text,
                     source text, package text, body text);
\copy sample FROM 'test/data/sample.tsv'
CREATE TABLE tdocs (id int, body text) WITH (autovacuum_enabled = off, parallel_workers = 2);
INSERT INTO tdocs SELECT n, body FROM sample;
INSERT INTO tdocs VALUES (1001, ''), (1002, NULL), (1003, (SELECT body FROM sample WHERE n = 1));
SET max_parallel_maintenance_workers = 0;
CREATE INDEX tdocs_serial ON tdocs USING hamming (body) WITH (probe_tables = off);
SET max_parallel_maintenance_workers = 2;
SET client_min_messages = debug1;
CREATE INDEX tdocs_parallel ON tdocs USING hamming (body) WITH (probe_tables = off);
SET parallel_leader_participation = off;
CREATE INDEX tdocs_workers ON tdocs USING hamming (body) WITH (probe_tables = off);
RESET parallel_leader_participation;
RESET client_min_messages;
SELECT hamming_index_check('tdocs_parallel'), hamming_index_check('tdocs_workers');
SELECT i::text AS index, tail_entries, tail_pages, table_entries
FROM unnest('{tdocs_serial, tdocs_parallel, tdocs_workers}'::regclass[]) i, hamming_index_info(i);
DROP INDEX tdocs_serial, tdocs_workers;
-- every text of the sample as a query: the rows near it through the index
-- (in this process) and by a sequential scan
SET max_parallel_workers_per_gather = 0;
SET enable_seqscan = off; SET enable_indexscan = off;
-- (the plan reads the index, whatever the version prints of it)
CREATE FUNCTION plan_reads(query text, index_name text) RETURNS bool LANGUAGE plpgsql AS $$
DECLARE plan text;
BEGIN
	EXECUTE 'EXPLAIN (COSTS OFF, FORMAT JSON) ' || query INTO plan;
	RETURN plan LIKE '%"Index Name": "' || index_name || '"%';
END $$;
SELECT plan_reads('SELECT n, ARRAY(SELECT id FROM tdocs t WHERE t.body ~= s.body ORDER BY id) FROM sample s',
                  'tdocs_parallel') AS reads_tdocs_parallel;
CREATE TABLE text_answers AS
  SELECT n, ARRAY(SELECT id FROM tdocs t WHERE t.body ~= s.body ORDER BY id) AS by_index FROM sample s;
RESET enable_seqscan; SET enable_bitmapscan = off;
SELECT count(*) AS queries, sum(cardinality(by_seq)) AS found,
       count(*) FILTER (WHERE by_index <> by_seq) AS differences
FROM (SELECT a.by_index, ARRAY(SELECT id FROM tdocs t WHERE t.body ~= s.body ORDER BY id) AS by_seq
      FROM text_answers a JOIN sample s USING (n)) x;
RESET enable_indexscan; RESET enable_bitmapscan; RESET max_parallel_workers_per_gather;

-- an index of simhash128 (tail pages only, as every one): the serial
-- build's entries, and every radius 0..128 around two queries answered as a
-- sequential scan does
CREATE TABLE wide (id int, fp simhash128) WITH (autovacuum_enabled = off, parallel_workers = 2);
-- (50 centers, each with neighbours that differ in their last 10 bits, and NULLs)
INSERT INTO wide SELECT i, (md5((i % 50)::text)::simhash128::bit(128) # flips)::simhash128
FROM generate_series(1, 20000) i, LATERAL (SELECT (repeat('0', 118) || (i % 1024)::bit(10)::text)::bit(128) AS flips) f;
INSERT INTO wide SELECT -i, NULL FROM generate_series(1, 200) i;
SET max_parallel_maintenance_workers = 0;
CREATE INDEX wide_serial ON wide USING hamming (fp);
SET max_parallel_maintenance_workers = 2;
SET client_min_messages = debug1;
CREATE INDEX wide_parallel ON wide USING hamming (fp);
RESET client_min_messages;
SELECT i::text AS index, tail_entries, tail_pages
FROM unnest('{wide_serial, wide_parallel}'::regclass[]) i, hamming_index_info(i);
DROP INDEX wide_serial;
SET max_parallel_workers_per_gather = 0;
SET enable_seqscan = off;
SELECT plan_reads($$SELECT array_agg(id ORDER BY id) FROM wide WHERE fp <~> md5('3')::simhash128 <= 20$$,
                  'wide_parallel') AS reads_wide_parallel;
CREATE TABLE wide_answers AS
  SELECT q, k, (SELECT array_agg(id ORDER BY id) FROM wide WHERE fp <~> q <= k) AS by_index
  FROM unnest(ARRAY[md5('3')::simhash128, md5('x')::simhash128]) q, generate_series(0, 128) k;
RESET enable_seqscan; SET enable_indexscan = off; SET enable_bitmapscan = off;
SELECT count(*) AS radii, sum(cardinality(by_index)) AS rows_found,
       count(*) FILTER (WHERE by_index IS DISTINCT FROM
                        (SELECT array_agg(id ORDER BY id) FROM wide WHERE fp <~> q <= k)) AS mismatches
FROM wide_answers;
RESET enable_indexscan; RESET enable_bitmapscan; RESET max_parallel_workers_per_gather;
DROP TABLE wide, wide_answers;

-- an error in a worker reaches the caller with its SQLSTATE: an index
-- expression that fails in any process but this one (the workers scan alone)
CREATE FUNCTION leader_only(fp simhash) RETURNS simhash LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
BEGIN
  IF pg_backend_pid() <> current_setting('hamming_parallel.leader')::int THEN
    RAISE EXCEPTION 'fingerprint computed in a parallel worker' USING ERRCODE = 'data_exception';
  END IF;
  RETURN fp;
END $$;
SELECT set_config('hamming_parallel.leader', pg_backend_pid()::text, false) IS NOT NULL AS leader_set;
SET parallel_leader_participation = off;
\set VERBOSITY sqlstate
CREATE INDEX docs_error ON docs USING hamming (leader_only(fp));
\set VERBOSITY default
RESET parallel_leader_participation;
SELECT * FROM leftovers();

-- a statement timeout cancels the build: no worker and no file left either
CREATE FUNCTION slow(fp simhash) RETURNS simhash LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
$$ SELECT fp FROM pg_sleep(0.001) $$;
SET statement_timeout = '300ms';
\set VERBOSITY sqlstate
CREATE INDEX docs_cancelled ON docs USING hamming (slow(fp));
\set VERBOSITY default
RESET statement_timeout;
SELECT * FROM leftovers();
SELECT count(*) AS hamming_indexes FROM pg_indexes WHERE schemaname = 'hamming_parallel';

SET client_min_messages = warning;
DROP SCHEMA hamming_parallel CASCADE;
RESET client_min_messages;
