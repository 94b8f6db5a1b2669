-- The query of a whole-table function runs once, to completion, so that
-- PostgreSQL may run it with parallel workers: the fingerprints that the
-- query computes are then computed by the workers.  Forced here (parallel
-- costs of 0, the leader taking no part in the query), each row's text goes
-- through in_worker(), which fails in the leader: the answers are those of a
-- serial run, for 64, 128 and 256 bits, verified or not (the verified forms
-- read the query a second time, for the texts, in parallel too, also while
-- the verification's own workers run).  An error in a worker of the query
-- reaches the caller with its SQLSTATE, and a cancel leaves no worker and no
-- temporary file behind.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS simhash;
CREATE SCHEMA query_parallel;
RESET client_min_messages;
SET search_path = query_parallel, public;

-- 400 texts of 40 words out of 300, near copies (one word replaced), exact
-- copies and a NULL
CREATE TABLE docs (id bigint PRIMARY KEY, body text);
INSERT INTO docs
SELECT i, (SELECT string_agg('w' || (abs(hashint4(i * 37 + j)) % 300), ' ' ORDER BY j) FROM generate_series(1, 40) j)
FROM generate_series(1, 400) i;
INSERT INTO docs SELECT id + 1000, regexp_replace(body, '\mw' || (id % 300) || '\M', 'x', 'g') FROM docs WHERE id <= 150;
INSERT INTO docs SELECT id + 2000, body FROM docs WHERE id <= 50;
INSERT INTO docs VALUES (3000, NULL);
ANALYZE docs;

-- a row's text, read in a parallel worker; in the leader (whose process id
-- the session sets; 0 for the serial run) an error
CREATE FUNCTION in_worker(id bigint, body text) RETURNS text LANGUAGE plpgsql STABLE PARALLEL SAFE AS $$
BEGIN
  IF pg_backend_pid() = current_setting('query_parallel.leader')::int THEN
    RAISE EXCEPTION 'the text of row % was read by the leader', id;
  END IF;
  RETURN body;
END $$;

-- every form, the fingerprints computed in its query; the 256-bit one once
-- a row by shingle_simhash256, in a subquery that OFFSET 0 keeps whole
CREATE TABLE forms (form text, call text, ordered boolean, serial text[]);
INSERT INTO forms
WITH w(bits, plain, verified, k) AS (VALUES
  (64, 'SELECT id, simhash(query_parallel.in_worker(id, body)) FROM query_parallel.docs',
       'SELECT id, simhash(query_parallel.in_worker(id, body)), body FROM query_parallel.docs', 24),
  (128, 'SELECT id, shingle_simhash128(query_parallel.in_worker(id, body), 3, ''auto'', 0) FROM query_parallel.docs',
        'SELECT id, shingle_simhash128(query_parallel.in_worker(id, body), 3, ''auto'', 0), body FROM query_parallel.docs', 40),
  (256, 'SELECT id, f[1], f[2] FROM (SELECT id, shingle_simhash256(query_parallel.in_worker(id, body), 3, ''auto'') AS f '
        'FROM query_parallel.docs OFFSET 0) s',
        'SELECT id, f[1], f[2], body FROM (SELECT id, shingle_simhash256(query_parallel.in_worker(id, body), 3, ''auto'') AS f, body '
        'FROM query_parallel.docs OFFSET 0) s', 80))
SELECT w.bits || CASE WHEN v.verified THEN ' verified ' ELSE ' ' END || f.name,
       format('simhash_%s(%L, %s%s)', f.name, CASE WHEN v.verified THEN w.verified ELSE w.plain END, w.k,
              CASE WHEN v.verified THEN ', 0.5, 3, ''auto''' ELSE '' END), false
FROM w, (VALUES ('pairs'), ('clusters'), ('dedup')) f(name), (VALUES (false), (true)) v(verified)
UNION ALL
SELECT w.bits || ' verified dedup keyed',
       format('simhash_dedup_keyed(NULL::bigint, %L, %s, 0.5, ''center'', 3, ''auto'')', w.verified, w.k), true
FROM w;
-- a call's rows as text: in their order where the order is promised (the
-- keyed form), else sorted (the engine's order depends on the order the
-- rows came in)
CREATE FUNCTION answer(call text, ordered boolean) RETURNS text[] LANGUAGE plpgsql AS $$
DECLARE
  rows text[];
BEGIN
  EXECUTE format('SELECT array_agg(a.r ORDER BY %s) FROM (SELECT (to_jsonb(t) - ''ordinality'')::text AS r, t.ordinality '
                 'FROM %s WITH ORDINALITY AS t) a', CASE WHEN ordered THEN 'a.ordinality' ELSE 'a.r' END, call)
    INTO rows;
  RETURN rows;
END $$;

-- serial
SET max_parallel_workers_per_gather = 0;
SET simhash.verify_workers = 0;
SELECT set_config('query_parallel.leader', '0', false) AS leader;
UPDATE forms SET serial = answer(call, ordered);

-- parallel: every text read by the workers, the same answers
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET parallel_leader_participation = off;
SELECT set_config('query_parallel.leader', pg_backend_pid()::text, false) IS NOT NULL AS leader_set;
SELECT form, cardinality(serial) AS rows, answer(call, ordered) = serial AS same FROM forms ORDER BY form;
-- the verified forms while the verification's workers tokenize the texts:
-- the second read of the query has workers of its own
SET simhash.verify_workers = 2;
SELECT form, answer(call, ordered) = serial AS same FROM forms WHERE form LIKE '%verified%' ORDER BY form;
SET simhash.verify_workers = 0;

-- an error in a worker of the query reaches the caller with its SQLSTATE: a
-- division by zero after in_worker() (in the leader in_worker() would fail
-- first)
\set VERBOSITY sqlstate
SELECT count(*) FROM simhash_pairs('SELECT id, simhash(query_parallel.in_worker(id, body) || 1 / (id - id)) FROM query_parallel.docs', 3);
\set VERBOSITY default

-- a statement timeout cancels the query while its workers fingerprint (10 ms
-- a row): no worker and no temporary file (the verification's) left
CREATE FUNCTION slow(id bigint, body text) RETURNS text LANGUAGE plpgsql STABLE PARALLEL SAFE AS $$
BEGIN
  PERFORM pg_sleep(0.01);
  RETURN query_parallel.in_worker(id, body);
END $$;
SET statement_timeout = '500ms';
\set VERBOSITY sqlstate
SELECT count(*) FROM simhash_pairs('SELECT id, simhash(query_parallel.slow(id, body)), body FROM query_parallel.docs', 3, 0.5, 3, 'auto');
\set VERBOSITY default
RESET statement_timeout;
SELECT (SELECT count(*) FROM pg_stat_activity WHERE leader_pid = pg_backend_pid()) AS workers,
       (SELECT count(*) FROM pg_ls_dir('base/pgsql_tmp', true, false)) AS temporary_files;

RESET parallel_leader_participation;
RESET min_parallel_table_scan_size;
RESET parallel_tuple_cost;
RESET parallel_setup_cost;
RESET max_parallel_workers_per_gather;
RESET simhash.verify_workers;
SET client_min_messages = warning;
DROP SCHEMA query_parallel CASCADE;
RESET client_min_messages;
