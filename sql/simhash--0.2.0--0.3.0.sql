/* simhash 0.2.0 -> 0.3.0: batch near-duplicate detection */

\echo Use "ALTER EXTENSION simhash UPDATE TO '0.3.0'" to load this file. \quit

-- ---------------------------------------------------------------------------
-- pairs, clusters and de-duplication over the rows of a query
--
-- Each function runs query, which must return two columns: an id (bigint,
-- integer or smallint) and a simhash, for example
--   SELECT * FROM simhash_pairs('SELECT id, fp FROM docs', 3);
-- Rows whose fingerprint is NULL are skipped.  A NULL id is an error (22004),
-- and so is an id that appears twice among the other rows (23505).
--
-- The pairs are found exactly (no pair is ever missed) with the permuted
-- tables of Manku et al. (2007): the 64 bits are cut into b blocks, and for
-- each choice of b - max_distance blocks the rows are sorted by those blocks;
-- only rows with equal blocks are compared.  b is chosen by a cost model for
-- the number of rows and max_distance.
--
-- Memory: 32 bytes a row (16 of row, 16 of sort scratch) within work_mem.
-- When the rows do not fit, they go to a temporary file, and each table
-- splits them by a hash of its key into partitions that fit, sorted one at a
-- time; a pass over the file writes up to work_mem / 32kB partitions to
-- temporary files of their own.  Memory exceeds work_mem only when more rows
-- share one key than fit in it: many copies of one fingerprint, or a
-- max_distance so large (about 16 and more) that every pair is compared, in
-- one partition.  simhash_clusters and simhash_dedup also keep a hash table
-- of the ids that appear in pairs.
-- Runs that last more than 10 s report their progress in a NOTICE every 10 s.
-- ---------------------------------------------------------------------------

CREATE FUNCTION simhash_pairs(query text, max_distance integer DEFAULT 3)
	RETURNS TABLE (id_a bigint, id_b bigint, distance integer)
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION simhash_pairs(text, integer) IS
	'every pair of rows of query (SELECT id, simhash) within max_distance bits (0..64), once, with id_a < id_b; NULL fingerprints are skipped; a NULL or repeated id is an error; exact, spills to a temporary file beyond work_mem';

CREATE FUNCTION simhash_clusters(query text, max_distance integer DEFAULT 3)
	RETURNS TABLE (id bigint, cluster_id bigint)
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION simhash_clusters(text, integer) IS
	'every id of query (SELECT id, simhash) once, with the smallest id of its connected component of simhash_pairs(query, max_distance); NULL fingerprints are skipped; a NULL or repeated id is an error';

CREATE FUNCTION simhash_dedup(query text, max_distance integer DEFAULT 3)
	RETURNS TABLE (id bigint, duplicate_of bigint)
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION simhash_dedup(text, integer) IS
	'every id of query (SELECT id, simhash) once: in ascending id order, a row is dropped when within max_distance bits of an already kept row (duplicate_of = the smallest such id), else kept (duplicate_of NULL); NULL fingerprints are skipped; a NULL or repeated id is an error';

-- ---------------------------------------------------------------------------
-- nearest first through the GIN index: widening radius searches
-- ---------------------------------------------------------------------------

CREATE FUNCTION simhash_nearest(query text, target simhash, n integer DEFAULT 10)
	RETURNS TABLE (id bigint, distance integer)
	LANGUAGE plpgsql STABLE STRICT PARALLEL UNSAFE
AS $$
DECLARE
	radius integer;
	found bigint;
	shape_ok boolean;
	-- the operator is qualified: the caller's search_path need not hold it
	wrapped text := format('SELECT s.id::bigint, (s.fp OPERATOR(@extschema@.<~>) $1)::integer '
						   'FROM (%s) AS s(id, fp) WHERE s.fp OPERATOR(@extschema@.<~>) $1 <= $2',
						   query);
BEGIN
	IF n < 0 THEN
		RAISE EXCEPTION 'n must not be negative, not %', n USING ERRCODE = 'invalid_parameter_value';
	END IF;
	-- its shape: exactly two columns, an integer id and a simhash (errors of
	-- the query itself come out of the first probe as they are)
	BEGIN
		EXECUTE format('SELECT 1 FROM (%s) AS s(c1, c2, c3) LIMIT 0', query);
		shape_ok := false;			/* three or more columns */
	EXCEPTION WHEN invalid_column_reference THEN
		BEGIN
			EXECUTE format('SELECT s.c1::bigint, s.c2 OPERATOR(@extschema@.<~>) NULL::@extschema@.simhash '
						   'FROM (%s) AS s(c1, c2) LIMIT 0', query);
			shape_ok := true;
		EXCEPTION WHEN invalid_column_reference OR undefined_function OR cannot_coerce THEN
			shape_ok := false;
		END;
	END;
	IF NOT shape_ok THEN
		RAISE EXCEPTION 'query must return two columns: a bigint id and a simhash'
			USING ERRCODE = 'datatype_mismatch',
				  HINT = 'Write the query as SELECT id, fingerprint FROM ...';
	END IF;
	-- the n nearest all lie within the first radius that holds n rows
	FOREACH radius IN ARRAY ARRAY[3, 6, 10, 16, 24, 64] LOOP
		IF radius < 64 THEN
			EXECUTE format('SELECT count(*) FROM (%s LIMIT $3) c', wrapped) INTO found USING target, radius, n;
		END IF;
		IF radius = 64 OR found >= n THEN
			RETURN QUERY EXECUTE wrapped || ' ORDER BY 2, 1 LIMIT $3' USING target, radius, n;
			RETURN;
		END IF;
	END LOOP;
END
$$;
COMMENT ON FUNCTION simhash_nearest(text, simhash, integer) IS
	'the n rows of query (SELECT id, simhash) nearest to target, nearest first, exact: radius searches of 3, 6, 10, 16, 24 and 64 bits, each answered by a simhash_ops index on the queried column';
