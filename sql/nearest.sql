-- simhash_nearest: the n nearest rows through the GIN index, exact
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS simhash;
RESET client_min_messages;
SELECT setseed(0.5);
CREATE TABLE near_docs (id integer PRIMARY KEY, fp simhash);
INSERT INTO near_docs SELECT i, (((random() * 4294967296)::bigint << 32) | (random() * 4294967296)::bigint)::simhash
FROM generate_series(1, 5000) i;
CREATE TABLE near_q AS SELECT j, (((random() * 4294967296)::bigint << 32) | (random() * 4294967296)::bigint)::simhash AS q
FROM generate_series(1, 20) j;
-- query j has 2 * (j % 8) planted neighbours, 1 to 8 bits away
INSERT INTO near_docs SELECT 100000 + j * 100 + n,
  (q::bigint # (SELECT bit_or(1::bigint << b) FROM (SELECT b FROM generate_series(0, 63) b ORDER BY random() LIMIT 1 + n % 8) s))::simhash
FROM near_q, generate_series(1, 20) n WHERE n <= 2 * (j % 8);
INSERT INTO near_docs VALUES (999999, NULL);
CREATE INDEX ON near_docs USING gin (fp);
ANALYZE near_docs;

-- the radius searches it runs use the index (forced here: the table is small)
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT s.id::bigint, (s.fp <~> 'ffffffffffffffff')::integer
FROM (SELECT id, fp FROM near_docs) AS s(id, fp) WHERE s.fp <~> 'ffffffffffffffff' <= 6 ORDER BY 2, 1 LIMIT 10;
RESET enable_seqscan;

-- exact: the same distances as a sorted sequential scan, for n = 1, 5, 10, 40,
-- and every returned distance is the row's true distance
SELECT n, count(*) AS queries,
       count(*) FILTER (WHERE got IS DISTINCT FROM want) AS wrong_distances,
       sum(bad_rows) AS rows_with_wrong_distance
FROM near_q, unnest(ARRAY[1, 5, 10, 40]) n,
LATERAL (SELECT array_agg(distance ORDER BY distance) AS got,
                count(*) FILTER (WHERE distance <> (SELECT bit_count((d.fp::bigint # q::bigint)::bit(64)) FROM near_docs d WHERE d.id = nn.id)) AS bad_rows
         FROM simhash_nearest('SELECT id, fp FROM near_docs', q, n) nn) g,
LATERAL (SELECT array_agg(d ORDER BY d) AS want FROM
         (SELECT bit_count((fp::bigint # q::bigint)::bit(64))::int AS d FROM near_docs WHERE fp IS NOT NULL ORDER BY 1 LIMIT n) s) w
GROUP BY n ORDER BY n;
-- nearest first, ties by id
SELECT * FROM simhash_nearest('SELECT id, fp FROM near_docs', (SELECT q FROM near_q WHERE j = 7), 8);
SELECT count(*) AS none FROM simhash_nearest('SELECT id, fp FROM near_docs', '0123456789abcdef', 0);
SELECT count(*) AS whole_table FROM simhash_nearest('SELECT id, fp FROM near_docs WHERE id < 100', '0123456789abcdef', 1000);
SELECT * FROM simhash_nearest('SELECT id, fp FROM near_docs', '0123456789abcdef', -1);
-- a query of the wrong shape is a clear error
\set VERBOSITY default
\set SHOW_CONTEXT never
SELECT * FROM simhash_nearest('SELECT id FROM near_docs', '0123456789abcdef', 3);
SELECT * FROM simhash_nearest('SELECT id::text, fp::bigint FROM near_docs', '0123456789abcdef', 3);
SELECT * FROM simhash_nearest('SELECT id, fp, 1 FROM near_docs', '0123456789abcdef', 3);
SELECT * FROM simhash_nearest('SELECT id, fp FROM no_such_table', '0123456789abcdef', 3);
-- it works whatever the search_path
SET search_path = pg_catalog;
SELECT count(*) FROM public.simhash_nearest('SELECT id, fp FROM public.near_docs', '0123456789abcdef', 3);
RESET search_path;
\set VERBOSITY terse
