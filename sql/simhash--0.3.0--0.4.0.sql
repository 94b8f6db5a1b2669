/* simhash 0.3.0 -> 0.4.0 */

\echo Use "ALTER EXTENSION simhash UPDATE TO '0.4.0'" to load this file. \quit

-- ---------------------------------------------------------------------------
-- hardening (input hygiene, trust, memory bounds)
-- ---------------------------------------------------------------------------



-- ---------------------------------------------------------------------------
-- the Hamming index access method
-- ---------------------------------------------------------------------------



-- ---------------------------------------------------------------------------
-- verified near-duplicates (shingle similarity)
-- ---------------------------------------------------------------------------



-- ---------------------------------------------------------------------------
-- scaling out (Citus)
-- ---------------------------------------------------------------------------

-- Manku et al.'s permuted tables as rows: a table of (tab, key, id, fp)
-- distributed by key, joined with itself on (key, tab), finds every pair
-- within max_distance bits on the nodes that hold the rows, each pair once.
CREATE FUNCTION simhash_block_keys(fp simhash, max_distance integer, nblocks integer)
	RETURNS TABLE (tab integer, key bigint)
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE ROWS 10;
COMMENT ON FUNCTION simhash_block_keys(simhash, integer, integer) IS
	'the key of fp in each of the C(nblocks, max_distance) permuted tables (tab numbered from 1): two fingerprints within max_distance bits have equal keys in at least one table';

CREATE FUNCTION simhash_first_common_table(a simhash, b simhash, max_distance integer, nblocks integer)
	RETURNS integer
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash_first_common_table(simhash, simhash, integer, integer) IS
	'the first permuted table of simhash_block_keys(..., max_distance, nblocks) in which a and b have equal keys, or NULL: the table that emits the pair, so that a self-join on the keys gives each pair once';

-- simhash_nearest: one query per radius (the n nearest within it, kept when
-- there are n of them) instead of a count and a final query: on a distributed
-- table every query is a round trip to every shard
CREATE OR REPLACE FUNCTION simhash_nearest(query text, target simhash, n integer DEFAULT 10)
	RETURNS TABLE (id bigint, distance integer)
	LANGUAGE plpgsql STABLE STRICT PARALLEL UNSAFE
AS $$
DECLARE
	radius integer;
	ids bigint[];
	distances integer[];
	shape_ok boolean;
	-- the operator is qualified: the caller's search_path need not hold it
	nearest text := format('SELECT array_agg(s.id ORDER BY s.d, s.id), array_agg(s.d ORDER BY s.d, s.id) '
						   'FROM (SELECT s.id::bigint AS id, (s.fp OPERATOR(@extschema@.<~>) $1)::integer AS d '
						   'FROM (%s) AS s(id, fp) WHERE s.fp OPERATOR(@extschema@.<~>) $1 <= $2 '
						   'ORDER BY 2, 1 LIMIT $3) s',
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
		EXECUTE nearest INTO ids, distances USING target, radius, n;
		IF radius = 64 OR coalesce(cardinality(ids), 0) >= n THEN
			RETURN QUERY SELECT u.id, u.d FROM unnest(ids, distances) AS u(id, d);
			RETURN;
		END IF;
	END LOOP;
END
$$;


-- ---------------------------------------------------------------------------
-- fingerprint speed
-- ---------------------------------------------------------------------------

