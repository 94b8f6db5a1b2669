/* simhash 0.3.0 -> 0.4.0 */

\echo Use "ALTER EXTENSION simhash UPDATE TO '0.4.0'" to load this file. \quit

-- ---------------------------------------------------------------------------
-- hardening (input hygiene, trust, memory bounds)
-- ---------------------------------------------------------------------------

-- (dedup helper)
-- simhash_nearest: the user's query is wrapped as a subquery, so a trailing
-- semicolon or "-- comment" made the wrapper a syntax error.  Trailing
-- semicolons and white space are now stripped (body), and the closing
-- parenthesis goes on a line of its own.
CREATE OR REPLACE FUNCTION simhash_nearest(query text, target simhash, n integer DEFAULT 10)
	RETURNS TABLE (id bigint, distance integer)
	LANGUAGE plpgsql STABLE STRICT PARALLEL UNSAFE
AS $$
DECLARE
	radius integer;
	found bigint;
	shape_ok boolean;
	body text := regexp_replace(query, '[[:space:];]+$', '') || chr(10);
	-- the operator is qualified: the caller's search_path need not hold it
	wrapped text := format('SELECT s.id::bigint, (s.fp OPERATOR(@extschema@.<~>) $1)::integer '
						   'FROM (%s) AS s(id, fp) WHERE s.fp OPERATOR(@extschema@.<~>) $1 <= $2',
						   body);
BEGIN
	IF n < 0 THEN
		RAISE EXCEPTION 'n must not be negative, not %', n USING ERRCODE = 'invalid_parameter_value';
	END IF;
	-- its shape: exactly two columns, an integer id and a simhash (errors of
	-- the query itself come out of the first probe as they are)
	BEGIN
		EXECUTE format('SELECT 1 FROM (%s) AS s(c1, c2, c3) LIMIT 0', body);
		shape_ok := false;			/* three or more columns */
	EXCEPTION WHEN invalid_column_reference THEN
		BEGIN
			EXECUTE format('SELECT s.c1::bigint, s.c2 OPERATOR(@extschema@.<~>) NULL::@extschema@.simhash '
						   'FROM (%s) AS s(c1, c2) LIMIT 0', body);
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
	'the n rows of query (SELECT id, simhash) nearest to target, nearest first, exact: radius searches of 3, 6, 10, 16, 24 and 64 bits, each answered by a simhash_ops index on the queried column; trailing semicolons and a trailing -- comment are allowed';



-- ---------------------------------------------------------------------------
-- the Hamming index access method
-- ---------------------------------------------------------------------------



-- ---------------------------------------------------------------------------
-- verified near-duplicates (shingle similarity)
-- ---------------------------------------------------------------------------



-- ---------------------------------------------------------------------------
-- scaling out (Citus)
-- ---------------------------------------------------------------------------



-- ---------------------------------------------------------------------------
-- fingerprint speed
-- ---------------------------------------------------------------------------

