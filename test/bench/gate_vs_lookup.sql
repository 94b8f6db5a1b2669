-- The gate's check against a lookup on the same index, by the CPU time of
-- the backend (side by side, on a machine shared with other jobs): rows of
-- a table of new documents looked up through the gate's index, then
-- inserted into the gated table with INSERT ... ON CONFLICT DO NOTHING in a
-- transaction rolled back, each averaged over the rows.
--   psql -v tbl=TABLE -v src='SELECT id, body FROM batch LIMIT 3000' -f test/bench/gate_vs_lookup.sql
-- TABLE (id, body) has the gate EXCLUDE USING hamming (simhash_doc(body, 0.8)
-- WITH ~=); src gives new rows (id, body).  Needs a superuser (the CPU time
-- comes from /proc/self/stat).
\set ON_ERROR_STOP on
CREATE FUNCTION pg_temp.cpu_ms() RETURNS float8 LANGUAGE sql AS $f$
	SELECT ((string_to_array(split_part(pg_read_file('/proc/self/stat'), ') ', 2), ' '))[12]::float8
		  + (string_to_array(split_part(pg_read_file('/proc/self/stat'), ') ', 2), ' '))[13]::float8)
		  * 1000 / 100 $f$;
SET bench.tbl = :'tbl';
SET bench.src = :'src';
SET enable_bitmapscan = off;
SET enable_seqscan = off;
DO $$
DECLARE c0 float8; rec record; n bigint; rows bigint := 0;
BEGIN
	c0 := pg_temp.cpu_ms();
	FOR rec IN EXECUTE current_setting('bench.src') LOOP
		EXECUTE format('SELECT count(*) FROM %s WHERE simhash_doc(body, 0.8) ~= simhash_doc($1, 0.8)',
					   current_setting('bench.tbl')) INTO n USING rec.body;
		rows := rows + 1;
	END LOOP;
	RAISE NOTICE 'a lookup through the gate''s index: % ms of CPU a row (% rows)',
		round(((pg_temp.cpu_ms() - c0) / rows)::numeric, 3), rows;
END $$;
BEGIN;
DO $$
DECLARE c0 float8; rows bigint;
BEGIN
	c0 := pg_temp.cpu_ms();
	EXECUTE format('WITH s AS (%s) INSERT INTO %s SELECT id, body FROM s ON CONFLICT DO NOTHING',
				   current_setting('bench.src'), current_setting('bench.tbl'));
	EXECUTE format('SELECT count(*) FROM (%s) s', current_setting('bench.src')) INTO rows;
	RAISE NOTICE 'the gate, INSERT ... ON CONFLICT DO NOTHING: % ms of CPU a row (% rows)',
		round(((pg_temp.cpu_ms() - c0) / rows)::numeric, 3), rows;
END $$;
ROLLBACK;
