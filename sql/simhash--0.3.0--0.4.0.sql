/* simhash 0.3.0 -> 0.4.0 */

\echo Use "ALTER EXTENSION simhash UPDATE TO '0.4.0'" to load this file. \quit

-- ---------------------------------------------------------------------------
-- hardening (input hygiene, trust, memory bounds)
-- ---------------------------------------------------------------------------

-- A function that embeds a user's query as a subquery (simhash_nearest)
-- embeds this form of it, so that the query may end with semicolons, white
-- space and comments, as a query typed at psql does.
CREATE FUNCTION simhash_subquery(query text) RETURNS text
	AS 'MODULE_PATHNAME' LANGUAGE C STABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash_subquery(text) IS
	'query made fit to embed as a subquery: trailing semicolons and the white space and comments after them removed (read by the server''s lexer), and a newline appended so that a trailing -- comment ends; STABLE: the lexer follows standard_conforming_strings';

-- binary I/O of simhash_ball (COPY BINARY, binary protocol, Citus)
CREATE FUNCTION simhash_ball_recv(internal) RETURNS simhash_ball
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_ball_send(simhash_ball) RETURNS bytea
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
ALTER TYPE simhash_ball SET (RECEIVE = simhash_ball_recv, SEND = simhash_ball_send);
COMMENT ON FUNCTION simhash_ball_recv(internal) IS 'reads a simhash_ball in binary form (center 8 bytes, radius 4 bytes, big-endian)';
COMMENT ON FUNCTION simhash_ball_send(simhash_ball) IS 'writes a simhash_ball in binary form (center 8 bytes, radius 4 bytes, big-endian)';
COMMENT ON FUNCTION simhash_ball_in(cstring) IS 'reads a simhash_ball written (center,radius), radius -1 (empty) to 64';
COMMENT ON FUNCTION simhash_ball(simhash, integer) IS 'the ball of fingerprints within radius bits of center (radius 0..64, any other an error)';


-- ---------------------------------------------------------------------------
-- the Hamming index access method
-- ---------------------------------------------------------------------------

CREATE FUNCTION hamming_handler(internal) RETURNS index_am_handler
	AS 'MODULE_PATHNAME' LANGUAGE C STRICT;
COMMENT ON FUNCTION hamming_handler(internal) IS 'handler of the hamming index access method';

CREATE ACCESS METHOD hamming TYPE INDEX HANDLER hamming_handler;
COMMENT ON ACCESS METHOD hamming IS 'packed fingerprints scanned by popcount: exact Hamming-radius search for every radius, and nearest first';

CREATE OPERATOR CLASS simhash_hamming_ops
	DEFAULT FOR TYPE simhash USING hamming AS
	OPERATOR 1 <@ (simhash, simhash_ball),
	OPERATOR 2 % (simhash, simhash),
	OPERATOR 3 = (simhash, simhash),
	OPERATOR 4 <-> (simhash, simhash) FOR ORDER BY pg_catalog.integer_ops;
COMMENT ON OPERATOR CLASS simhash_hamming_ops USING hamming IS 'exact Hamming-radius search for every k (fp <~> q <= k, fp <@ simhash_ball(q, k), fp % q, fp = q) and ORDER BY fp <~> q, nearest first';
COMMENT ON OPERATOR FAMILY simhash_hamming_ops USING hamming IS 'hamming operator family for simhash';

-- executable by everyone: it checks that the caller owns the table (as
-- REINDEX does), so the owner of a table can check its indexes when the
-- extension was installed by a non-superuser (it is trusted)
CREATE FUNCTION hamming_index_check(index regclass) RETURNS void
	AS 'MODULE_PATHNAME', 'hamming_index_check' LANGUAGE C STRICT PARALLEL RESTRICTED;
COMMENT ON FUNCTION hamming_index_check(regclass) IS
	'checks a hamming index (page kinds, metapage, layout and order of the probe tables, directories, tombstones, tail) and that every row of its table has an entry; raises SQLSTATE XX002 on the first violation; needs to own the table; the index''s expressions and predicate run as the table''s owner, restricted as in VACUUM';

-- what a hamming index holds, and merging its tail now (both need no
-- superuser: the information is the index's own; the merge checks that the
-- caller owns the table, as VACUUM does)
CREATE FUNCTION hamming_index_info(index regclass,
	OUT probe_tables boolean, OUT table_entries bigint, OUT tail_pages bigint,
	OUT tail_entries bigint, OUT merges bigint, OUT merge_in_progress boolean,
	OUT replaced_pages_pending boolean, OUT index_pages bigint)
	AS 'MODULE_PATHNAME', 'hamming_index_info' LANGUAGE C STRICT PARALLEL RESTRICTED;
COMMENT ON FUNCTION hamming_index_info(regclass) IS
	'what a hamming index holds: whether it has probe tables, their entries (tombstones included), the tail (pages and entries that every scan reads), merges so far, whether a merge is in progress (or failed), whether the pages the last merge replaced still wait for older snapshots to end, and its size in pages; needs SELECT on the table';
CREATE FUNCTION hamming_merge_tail(index regclass) RETURNS boolean
	AS 'MODULE_PATHNAME', 'hamming_merge_tail' LANGUAGE C STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION hamming_merge_tail(regclass) IS
	'merges the tail of a hamming index of simhash into new probe tables now, as VACUUM does; true if it did; waits for a VACUUM of the table; needs to own the table';



-- ---------------------------------------------------------------------------
-- verified near-duplicates (shingle similarity)
-- ---------------------------------------------------------------------------

-- The exact Jaccard similarity of shingle sets, with the shingles of
-- simhash(text, n): candidates come from the fingerprints (an index, or
-- simhash_pairs), and only candidates are checked.  The COST makes the
-- planner evaluate it after every cheaper condition (the Hamming distance).
CREATE FUNCTION shingle_similarity(a text, b text, n integer DEFAULT 3, units text DEFAULT 'words')
	RETURNS float8
	AS 'MODULE_PATHNAME', 'shingle_similarity'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 1000;
COMMENT ON FUNCTION shingle_similarity(text, text, integer, text) IS
	'Jaccard similarity (0..1) of the sets of shingles of n units (default 3) of two texts, normalized as by simhash(); units: words (regex \w+ words and CJK characters, the default), characters (letters, digits and CJK characters) or auto (characters for a text with more CJK characters than other words, else words); 1 for two texts without shingles';
CREATE FUNCTION shingle_set(body text, n integer DEFAULT 3, units text DEFAULT 'words')
	RETURNS bigint[]
	AS 'MODULE_PATHNAME', 'shingle_set'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 500;
COMMENT ON FUNCTION shingle_set(text, integer, text) IS
	'the shingles of shingle_similarity(body, ..., n, units) as a set: their 64-bit hashes, distinct and ascending; to store and compare with shingle_similarity(bigint[], bigint[]); built within maintenance_work_mem (16 to 32 bytes a distinct shingle), an error beyond';
CREATE FUNCTION shingle_similarity(a bigint[], b bigint[]) RETURNS float8
	AS 'MODULE_PATHNAME', 'shingle_set_similarity'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 20;
COMMENT ON FUNCTION shingle_similarity(bigint[], bigint[]) IS
	'Jaccard similarity of two shingle sets made by shingle_set(); equals shingle_similarity() of their texts';

-- Whole tables: the query returns (id, fingerprint, body).  The pairs within
-- max_distance bits are candidates; the rows are then read once more, each
-- body that is in a candidate pair is tokenized once (its sorted shingle set
-- goes to a temporary file), and a candidate counts when the Jaccard
-- similarity of its two sets is >= min_similarity.  The body may also be a
-- stored shingle_set() (bigint[]), used as it is.  Rows with a NULL
-- fingerprint are skipped, rows with a NULL body are in no verified pair.
-- The clusters and the kept rows are made of the verified pairs by the code
-- of the two-argument forms.  shingle_verify_pairs() is the verification
-- step alone, for candidate pairs from elsewhere.
CREATE FUNCTION shingle_verify_pairs(pairs_query text, docs_query text, min_similarity float8,
									 n integer DEFAULT 3, units text DEFAULT 'words')
	RETURNS TABLE (id_a bigint, id_b bigint, distance integer, similarity float8)
	AS 'MODULE_PATHNAME', 'shingle_verify_pairs'
	LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION shingle_verify_pairs(text, text, float8, integer, text) IS
	'the candidate pairs of pairs_query (SELECT id_a bigint, id_b bigint, distance integer) whose bodies, from docs_query (SELECT id bigint, body text or shingle_set() bigint[]), have shingle_similarity >= min_similarity; each body is tokenized once';
-- The batch functions read simhash128 columns too, and with
-- simhash.pairs_recall below 1 find their candidates in bands of sampled
-- bits (not quadratic at large radii, a recall below 1 by design)
COMMENT ON FUNCTION simhash_pairs(text, integer) IS
	'every pair of rows of query (SELECT id, simhash or simhash128) within max_distance bits (0..64, or 0..128), once, with id_a < id_b; NULL fingerprints are skipped; a NULL or repeated id is an error; exact, or with simhash.pairs_recall below 1 banded (a pair at max_distance found with at least that probability); spills to a temporary file beyond work_mem';
COMMENT ON FUNCTION simhash_clusters(text, integer) IS
	'every id of query (SELECT id, simhash or simhash128) once, with the smallest id of its connected component of simhash_pairs(query, max_distance); NULL fingerprints are skipped; a NULL or repeated id is an error';
COMMENT ON FUNCTION simhash_dedup(text, integer) IS
	'every id of query (SELECT id, simhash or simhash128) once: in ascending id order, a row is dropped when within max_distance bits of an already kept row (duplicate_of = the smallest such id), else kept (duplicate_of NULL); NULL fingerprints are skipped; a NULL or repeated id is an error';
CREATE FUNCTION simhash_pairs(query text, max_distance integer, min_similarity float8,
							  shingle integer DEFAULT 3, units text DEFAULT 'words')
	RETURNS TABLE (id_a bigint, id_b bigint, distance integer, similarity float8)
	AS 'MODULE_PATHNAME', 'simhash_pairs_verified'
	LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION simhash_pairs(text, integer, float8, integer, text) IS
	'verified pairs: every pair of rows of query (SELECT id, simhash or simhash128, body) within max_distance bits whose shingle_similarity(body, body, shingle, units) is >= min_similarity, once, with id_a < id_b; each body is read once more and tokenized once; body may be a stored shingle_set() instead';
CREATE FUNCTION simhash_clusters(query text, max_distance integer, min_similarity float8,
								 shingle integer DEFAULT 3, units text DEFAULT 'words')
	RETURNS TABLE (id bigint, cluster_id bigint)
	AS 'MODULE_PATHNAME', 'simhash_clusters_verified'
	LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION simhash_clusters(text, integer, float8, integer, text) IS
	'every id of query (SELECT id, simhash or simhash128, body) once, with the smallest id of its connected component of the verified pairs simhash_pairs(query, max_distance, min_similarity, shingle, units); NULL fingerprints are skipped';
CREATE FUNCTION simhash_dedup(query text, max_distance integer, min_similarity float8,
							  shingle integer DEFAULT 3, units text DEFAULT 'words')
	RETURNS TABLE (id bigint, duplicate_of bigint)
	AS 'MODULE_PATHNAME', 'simhash_dedup_verified'
	LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION simhash_dedup(text, integer, float8, integer, text) IS
	'every id of query (SELECT id, simhash or simhash128, body) once: in ascending id order, a row is dropped when an already kept row is within max_distance bits and has shingle_similarity >= min_similarity with it (duplicate_of = the smallest such id), else kept (duplicate_of NULL); NULL fingerprints are skipped';


-- ---------------------------------------------------------------------------
-- linkage, the kept row and the lineage of every removal
-- ---------------------------------------------------------------------------

-- simhash_query_on_workers(query): whether the whole-table functions run
-- query on the Citus workers (it reads a table that Citus distributes, this
-- node is the coordinator, the transaction may write, and the caller may
-- create tables in that table's schema).  simhash_link(query, linkage): the
-- clusters ('single', as simhash_clusters()) or the kept rows ('center', as
-- simhash_dedup(), kept NULL for a kept row) of the rows and pairs that query
-- returns: every row as (id, id, NULL, NULL), every pair as (id_a < id_b,
-- distance, similarity).  The forms with a rank link the pairs found on the
-- workers, numbered on the coordinator, with it.
CREATE FUNCTION simhash_query_on_workers(query text) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION simhash_query_on_workers(text) IS
	'whether simhash_pairs(), simhash_clusters(), simhash_dedup() and simhash_lineage() run query on the Citus workers: it reads a distributed table, this node is the coordinator, the transaction may write and the caller may create tables in the schema of that table';
CREATE FUNCTION simhash_link(query text, linkage text)
	RETURNS TABLE (id bigint, kept bigint)
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION simhash_link(text, text) IS
	'the clusters (linkage ''single'': kept the smallest id of the connected component) or kept rows (''center'': kept NULL for a kept row, else the kept row) of the rows (id, id, NULL, NULL) and pairs (id_a < id_b, distance, similarity) that query returns; not for calling directly';


-- The clusters of simhash_clusters() and simhash_dedup() with a linkage and
-- an order of the rows (doc/clusters.md):
--   'single'  connected components of the (verified) pairs; a component's
--             kept row is its first row in the order;
--   'center'  greedy: in order, a row not yet in a cluster becomes the kept
--             row of a new cluster and takes every row not yet in a cluster
--             within max_distance bits of it (verified: with
--             shingle_similarity >= min_similarity to it).  That is the rule
--             simhash_dedup() has always applied in id order, and its engine
--             answers it: every member is a (verified) near-duplicate of its
--             kept row, no chain joins two clusters.
-- The order is the query's optional last column, rank: lowest rank first
-- (NULL ranks last), ties by id; without it, ascending id.  With a rank, or
-- ids that are not integers (the _keyed forms below), the engines run on the
-- rows numbered in that order (row_number() over rank and id, dense_rank()
-- over the id alone, so the query must give the same rows on every read),
-- and the numbers are mapped back to ids.  With lineage, each row also gets its distance and (verified) its
-- similarity to its kept row, and its cluster's size.  min_similarity NULL:
-- not verified.
CREATE FUNCTION simhash_keyed(key anyelement, what text, query text, max_distance integer,
							  min_similarity float8, linkage text, shingle integer, units text, ordered boolean)
	RETURNS TABLE (id anyelement, other_id anyelement, distance integer, similarity float8, cluster_size bigint)
	LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
AS $$
DECLARE
	sub pg_catalog.text;
	verified boolean := min_similarity IS NOT NULL;
	-- the columns the engines read, and what is selected of them
	cols pg_catalog.text := CASE WHEN min_similarity IS NULL THEN 'id, fp' ELSE 'id, fp, body' END;
	data pg_catalog.text := CASE WHEN min_similarity IS NULL THEN 's.fp' ELSE 's.fp, s.body' END;
	args pg_catalog.text := CASE WHEN min_similarity IS NULL THEN '($1, $2)'
		ELSE '($1, $2, $3::pg_catalog.float8, $4::pg_catalog.int4, $5::pg_catalog.text)' END;
	shape pg_catalog.text;
	ranked boolean := false;
	too_many boolean := false;
	wide boolean := false;
	key_type pg_catalog.regtype := pg_catalog.pg_typeof(key);
	id_type pg_catalog.regtype;
	body_type pg_catalog.regtype;
	bad_null boolean;
	bad_id pg_catalog.text;
	numbered boolean;
	dup_check pg_catalog.text;
	num pg_catalog.text;
	engine pg_catalog.text;
	map pg_catalog.text;
	result pg_catalog.text;
	err_state pg_catalog.text;
	err_message pg_catalog.text;
	err_detail pg_catalog.text;
	err_hint pg_catalog.text;
	-- a query of a Citus distributed table with a rank, or a lineage 'center':
	-- the pairs found on the workers by their ids, numbered on the coordinator
	on_workers boolean := false;
BEGIN
	-- a NULL argument (but the key, which only gives the type): no rows, as a strict function
	IF query IS NULL OR max_distance IS NULL OR ordered IS NULL OR (verified AND (shingle IS NULL OR units IS NULL)) OR
		(what OPERATOR(pg_catalog.<>) 'pairs' AND linkage IS NULL) THEN
		RETURN;
	END IF;
	-- an error of the query or the engines is raised again as it was, without
	-- the statements built here as its context
	BEGIN
		sub := @extschema@.simhash_subquery(query);
		IF what OPERATOR(pg_catalog.<>) 'pairs' AND (linkage IS NULL OR NOT (linkage OPERATOR(pg_catalog.=) 'single' OR linkage OPERATOR(pg_catalog.=) 'center')) THEN
			RAISE EXCEPTION 'unrecognized linkage: %', coalesce(pg_catalog.quote_literal(linkage), 'NULL')
				USING ERRCODE = 'invalid_parameter_value',
					  HINT = 'The linkage is ''single'' (connected components of the pairs) or ''center'' (every member within the radius of its cluster''s kept row).';
		END IF;
		-- two simhash128 columns after the id: a 256-bit fingerprint, read as the engines read it
		BEGIN
			EXECUTE pg_catalog.format('SELECT pg_catalog.pg_typeof(s.fp) OPERATOR(pg_catalog.=) ''@extschema@.simhash128''::pg_catalog.regtype '
									  'AND pg_catalog.pg_typeof(s.fp1) OPERATOR(pg_catalog.=) ''@extschema@.simhash128''::pg_catalog.regtype '
									  'FROM (SELECT 1) AS x LEFT JOIN (SELECT * FROM (%s) AS q LIMIT 0) AS s(id, fp, fp1) ON true', sub)
				INTO wide;
		EXCEPTION WHEN invalid_column_reference THEN
			NULL;
		END;
		IF wide THEN
			cols := CASE WHEN verified THEN 'id, fp, fp1, body' ELSE 'id, fp, fp1' END;
			data := CASE WHEN verified THEN 's.fp, s.fp1, s.body' ELSE 's.fp, s.fp1' END;
		END IF;
		shape := pg_catalog.format(CASE WHEN wide THEN
				CASE WHEN what OPERATOR(pg_catalog.=) 'pairs' THEN
					CASE WHEN verified THEN 'query must return four columns: %s, two simhash128 values, and a text or a shingle set'
						 ELSE 'query must return three columns: %s and two simhash128 values' END
				WHEN verified THEN 'query must return four or five columns: %s, two simhash128 values, a text or a shingle set, and a rank'
				ELSE 'query must return three or four columns: %s, two simhash128 values, and a rank' END
			WHEN what OPERATOR(pg_catalog.=) 'pairs' THEN
				CASE WHEN verified THEN 'query must return three columns: %s, a simhash, and a text or a shingle set'
					 ELSE 'query must return two columns: %s and a simhash' END
			WHEN verified THEN 'query must return three or four columns: %s, a simhash, a text or a shingle set, and a rank'
			ELSE 'query must return two or three columns: %s, a simhash, and a rank' END,
			CASE WHEN key_type OPERATOR(pg_catalog.=) 'bigint'::pg_catalog.regtype THEN 'a bigint id' ELSE 'an id' END);
		-- its shape: the engine's columns, and (not for pairs) a rank if there is one more
		BEGIN
			EXECUTE pg_catalog.format('SELECT 1 FROM (%s) AS s(%s, rank) LIMIT 0', sub, cols);
			ranked := true;
		EXCEPTION WHEN invalid_column_reference THEN
			NULL;
		END;
		IF ranked THEN
			BEGIN
				EXECUTE pg_catalog.format('SELECT 1 FROM (%s) AS s(%s, rank, extra) LIMIT 0', sub, cols);
				too_many := true;
			EXCEPTION WHEN invalid_column_reference THEN
				NULL;
			END;
		END IF;
		IF too_many OR (ranked AND what OPERATOR(pg_catalog.=) 'pairs') THEN
			RAISE EXCEPTION '%', shape
				USING ERRCODE = 'datatype_mismatch',
					  HINT = CASE WHEN what OPERATOR(pg_catalog.=) 'pairs' THEN pg_catalog.format('Write the query as SELECT %s FROM ...', cols)
						ELSE pg_catalog.format('Write the query as SELECT %s, rank FROM ...: the row of lowest rank of each cluster is kept (ties: the smallest id); without a rank, the smallest id.', cols) END;
		END IF;
		IF ranked THEN
			cols := cols OPERATOR(pg_catalog.||) ', rank';
		END IF;
		EXECUTE pg_catalog.format('SELECT pg_catalog.pg_typeof(s.id) FROM (SELECT 1) AS x LEFT JOIN '
								  '(SELECT * FROM (%s) AS q LIMIT 0) AS s(%s) ON true', sub, cols)
			INTO id_type;

		-- the engines read integer ids in id order as they are; any other id,
		-- or an order by rank, is numbered in that order and mapped back
		numbered := ranked OR NOT (key_type OPERATOR(pg_catalog.=) 'bigint'::pg_catalog.regtype AND
			id_type OPERATOR(pg_catalog.=) ANY ('{bigint,integer,smallint}'::pg_catalog.regtype[]));
		IF key_type OPERATOR(pg_catalog.=) 'bigint'::pg_catalog.regtype AND
			NOT id_type OPERATOR(pg_catalog.=) ANY ('{bigint,integer,smallint}'::pg_catalog.regtype[]) THEN
			RAISE EXCEPTION '%', shape
				USING ERRCODE = 'datatype_mismatch',
					  DETAIL = pg_catalog.format('The first column has type %s.', id_type),
					  HINT = pg_catalog.format('For ids of another type, pass a NULL of that type to the keyed form: %s_keyed(NULL::%s, query, ...).',
											   CASE WHEN what OPERATOR(pg_catalog.=) 'lineage' THEN 'simhash_lineage'
													WHEN what OPERATOR(pg_catalog.=) 'pairs' THEN 'simhash_pairs'
													ELSE 'simhash_clusters' END, id_type);
		END IF;
		IF numbered THEN
			IF id_type OPERATOR(pg_catalog.<>) key_type AND key_type OPERATOR(pg_catalog.<>) 'bigint'::pg_catalog.regtype THEN
				RAISE EXCEPTION 'the ids of the query have type %, the first argument has type %', id_type, key_type
					USING ERRCODE = 'datatype_mismatch',
						  HINT = pg_catalog.format('Pass NULL::%s as the first argument, or cast the id column of the query to %s.', id_type, key_type);
			END IF;
			BEGIN
				EXECUTE pg_catalog.format('SELECT 1 FROM (%s) AS s(%s) ORDER BY s.id LIMIT 0', sub, cols);
			EXCEPTION WHEN undefined_function THEN
				RAISE EXCEPTION 'ids of type % cannot be ordered', id_type
					USING ERRCODE = 'datatype_mismatch',
						  HINT = 'The id needs a default btree operator class (as a primary key has): the smallest id of a cluster is kept, and rows are numbered in id order. Use another key, or number the rows with row_number() OVER ().';
			END;
			-- the first NULL or repeated id, if any
			dup_check := pg_catalog.format('SELECT s.id IS NULL AS is_null, s.id::pg_catalog.text AS id FROM (%s) AS s(%s) '
										   'GROUP BY s.id HAVING s.id IS NULL OR pg_catalog.count(*) OPERATOR(pg_catalog.>) 1 '
										   'ORDER BY s.id NULLS FIRST LIMIT 1', sub, cols);
			-- the rows numbered in (rank,) id order.  In id order, equal ids
			-- get equal numbers and a NULL id none, so the engine finds them
			-- (and the handler below names them) without a read of its own;
			-- in rank order they are looked for first.
			IF ranked THEN
				num := 'pg_catalog.row_number() OVER (ORDER BY s.rank, s.id)';
				EXECUTE dup_check INTO bad_null, bad_id;
				IF bad_null OR bad_id IS NOT NULL THEN
					RAISE EXCEPTION USING ERRCODE = 'cardinality_violation';
				END IF;
			ELSE
				num := 'CASE WHEN s.id IS NOT NULL THEN pg_catalog.dense_rank() OVER (ORDER BY s.id) END';
			END IF;
			-- map: number -> id
			map := pg_catalog.format('SELECT %s AS n, s.id%s AS id FROM (%s) AS s(%s)', num,
									 CASE WHEN id_type OPERATOR(pg_catalog.<>) key_type THEN '::pg_catalog.int8' ELSE '' END, sub, cols);
			engine := pg_catalog.format('SELECT %s, %s FROM (%s) AS s(%s)', num, data, sub, cols);
		ELSE
			map := 'SELECT NULL::pg_catalog.int8 AS n, NULL::pg_catalog.int8 AS id WHERE false';
			engine := query;
		END IF;

		-- on the workers: the pairs of the engines' columns (verified, or all
		-- of them at simhash.pairs_recall = 1, as the engines on the numbered
		-- rows find them) by their ids, then every row with a fingerprint
		-- numbered in (rank,) id order and the pairs as numbers, for simhash_link
		on_workers := what OPERATOR(pg_catalog.<>) 'pairs' AND key_type OPERATOR(pg_catalog.=) 'bigint'::pg_catalog.regtype
			AND id_type OPERATOR(pg_catalog.=) ANY ('{bigint,integer,smallint}'::pg_catalog.regtype[])
			AND (ranked OR (what OPERATOR(pg_catalog.=) 'lineage' AND linkage OPERATOR(pg_catalog.=) 'center'))
			AND NOT (what OPERATOR(pg_catalog.=) 'lineage' AND linkage OPERATOR(pg_catalog.=) 'single')
			AND (verified OR pg_catalog.current_setting('simhash.pairs_recall')::pg_catalog.float8 OPERATOR(pg_catalog.>=) 1)
			AND pg_catalog.has_database_privilege(pg_catalog.current_database(), 'TEMP') AND @extschema@.simhash_query_on_workers(sub);
		IF on_workers THEN
			EXECUTE pg_catalog.format('CREATE TEMPORARY TABLE simhash_keyed_pairs AS SELECT p.id_a, p.id_b, p.distance, %s AS similarity FROM @extschema@.simhash_pairs%s AS p',
				CASE WHEN verified THEN 'p.similarity' ELSE 'NULL::pg_catalog.float8' END, args)
				USING pg_catalog.format('SELECT s.id, %s FROM (%s) AS s(%s)', data, sub, cols), max_distance, min_similarity, shingle, units;
			EXECUTE pg_catalog.format('CREATE TEMPORARY TABLE simhash_keyed_map AS SELECT %s AS n, x.id::pg_catalog.int8 AS id '
									  'FROM (SELECT s.id%s FROM (%s) AS s(%s) WHERE s.fp IS NOT NULL%s OFFSET 0) AS x',
				CASE WHEN ranked THEN 'pg_catalog.row_number() OVER (ORDER BY x.rank, x.id)' ELSE 'x.id::pg_catalog.int8' END,
				CASE WHEN ranked THEN ', s.rank' ELSE '' END, sub, cols, CASE WHEN wide THEN ' AND s.fp1 IS NOT NULL' ELSE '' END);
			engine := 'SELECT m.n, m.n, NULL::pg_catalog.int4, NULL::pg_catalog.float8 FROM pg_temp.simhash_keyed_map AS m UNION ALL '
				'SELECT LEAST(a.n, b.n), GREATEST(a.n, b.n), p.distance, p.similarity FROM pg_temp.simhash_keyed_pairs AS p '
				'JOIN pg_temp.simhash_keyed_map AS a ON a.id OPERATOR(pg_catalog.=) p.id_a JOIN pg_temp.simhash_keyed_map AS b ON b.id OPERATOR(pg_catalog.=) p.id_b';
			map := 'SELECT m.n, m.id FROM pg_temp.simhash_keyed_map AS m';
		END IF;

		-- e: the engine's rows; n: the same with the ids of the query
		IF on_workers THEN
			result := pg_catalog.format('SELECT l.id, %s AS kept, NULL::pg_catalog.int4 AS distance, NULL::pg_catalog.float8 AS similarity FROM @extschema@.simhash_link($1, %L) AS l',
				CASE WHEN linkage OPERATOR(pg_catalog.=) 'center' THEN 'COALESCE(l.kept, l.id)' ELSE 'l.kept' END, linkage);
		ELSIF what OPERATOR(pg_catalog.=) 'pairs' THEN
			result := 'SELECT p.id_a AS id, p.id_b AS kept, p.distance, '
				OPERATOR(pg_catalog.||) CASE WHEN verified THEN 'p.similarity' ELSE 'NULL::pg_catalog.float8' END
				OPERATOR(pg_catalog.||) ' AS similarity FROM @extschema@.simhash_pairs' OPERATOR(pg_catalog.||) args OPERATOR(pg_catalog.||) ' AS p';
		ELSIF linkage OPERATOR(pg_catalog.=) 'single' THEN
			result := 'SELECT c.id, c.cluster_id AS kept, NULL::pg_catalog.int4 AS distance, NULL::pg_catalog.float8 AS similarity FROM @extschema@.simhash_clusters' OPERATOR(pg_catalog.||) args OPERATOR(pg_catalog.||) ' AS c';
		ELSE
			result := 'SELECT d.id, coalesce(d.duplicate_of, d.id) AS kept, NULL::pg_catalog.int4 AS distance, NULL::pg_catalog.float8 AS similarity FROM @extschema@.simhash_dedup' OPERATOR(pg_catalog.||) args OPERATOR(pg_catalog.||) ' AS d';
		END IF;
		result := 'WITH e AS (' OPERATOR(pg_catalog.||) result OPERATOR(pg_catalog.||) '), '
			OPERATOR(pg_catalog.||) CASE WHEN numbered THEN
				pg_catalog.format('m AS MATERIALIZED (%s), n AS (SELECT a.id, b.id AS kept, e.distance, e.similarity, e.id AS id_n, e.kept AS kept_n '
								  'FROM e JOIN m AS a ON a.n OPERATOR(pg_catalog.=) e.id JOIN m AS b ON b.n OPERATOR(pg_catalog.=) e.kept)', map)
			ELSE 'n AS (SELECT e.id::pg_catalog.int8 AS id, e.kept::pg_catalog.int8 AS kept, e.distance, e.similarity, e.id AS id_n, e.kept AS kept_n FROM e)' END;

		IF what OPERATOR(pg_catalog.=) 'pairs' THEN
			RETURN QUERY EXECUTE result OPERATOR(pg_catalog.||) ' SELECT n.id, n.kept, n.distance, n.similarity, NULL::pg_catalog.int8 FROM n'
				OPERATOR(pg_catalog.||) CASE WHEN ordered THEN ' ORDER BY n.id_n, n.kept_n' ELSE '' END
				USING engine, max_distance, min_similarity, shingle, units;
			RETURN;
		END IF;
		-- dedup: the kept row's other_id NULL
		IF what OPERATOR(pg_catalog.=) 'clusters' OR what OPERATOR(pg_catalog.=) 'dedup' THEN
			RETURN QUERY EXECUTE result OPERATOR(pg_catalog.||) ' SELECT n.id, '
				OPERATOR(pg_catalog.||) CASE WHEN what OPERATOR(pg_catalog.=) 'dedup' THEN 'CASE WHEN n.id_n OPERATOR(pg_catalog.<>) n.kept_n THEN n.kept END' ELSE 'n.kept' END
				OPERATOR(pg_catalog.||) ', NULL::pg_catalog.int4, NULL::pg_catalog.float8, NULL::pg_catalog.int8 FROM n'
				OPERATOR(pg_catalog.||) CASE WHEN ordered THEN ' ORDER BY n.kept_n, n.id_n' ELSE '' END
				USING engine, max_distance, min_similarity, shingle, units;
			IF on_workers THEN
				DROP TABLE pg_temp.simhash_keyed_pairs, pg_temp.simhash_keyed_map;
			END IF;
			RETURN;
		END IF;
		-- the lineage 'center' on the workers: each row's pair with its kept row
		IF on_workers THEN
			RETURN QUERY EXECUTE result OPERATOR(pg_catalog.||)
				' SELECT n.id, n.kept, CASE WHEN n.id_n OPERATOR(pg_catalog.<>) n.kept_n THEN p.distance ELSE 0 END, '
				'        CASE WHEN n.id_n OPERATOR(pg_catalog.<>) n.kept_n THEN p.similarity END, pg_catalog.count(*) OVER (PARTITION BY n.kept_n) '
				'FROM n LEFT JOIN pg_temp.simhash_keyed_pairs AS p ON p.id_a OPERATOR(pg_catalog.=) LEAST(n.id, n.kept) AND p.id_b OPERATOR(pg_catalog.=) GREATEST(n.id, n.kept)'
				OPERATOR(pg_catalog.||) CASE WHEN ordered THEN ' ORDER BY n.kept_n, n.id_n' ELSE '' END
				USING engine, max_distance, min_similarity, shingle, units;
			DROP TABLE pg_temp.simhash_keyed_pairs, pg_temp.simhash_keyed_map;
			RETURN;
		END IF;
		-- the lineage: each row's distance and similarity to its kept row, joined by the engine's ids
		IF verified THEN
			EXECUTE pg_catalog.format('SELECT pg_catalog.pg_typeof(s.body) FROM (SELECT 1) AS x LEFT JOIN '
									  '(SELECT * FROM (%s) AS q LIMIT 0) AS s(%s) ON true', sub, cols)
				INTO body_type;
		END IF;
		RETURN QUERY EXECUTE result OPERATOR(pg_catalog.||) pg_catalog.format(
			', s AS (%s) '
			'SELECT n.id, n.kept, (a.fp OPERATOR(@extschema@.<~>) b.fp%s)::pg_catalog.int4, '
			'       CASE WHEN n.id_n OPERATOR(pg_catalog.<>) n.kept_n THEN %s END, '
			'       pg_catalog.count(*) OVER (PARTITION BY n.kept_n) '
			'FROM n JOIN s AS a ON a.n OPERATOR(pg_catalog.=) n.id_n JOIN s AS b ON b.n OPERATOR(pg_catalog.=) n.kept_n',
			CASE WHEN numbered THEN pg_catalog.format('SELECT t.* FROM (%s) AS t(n, %s)', engine, pg_catalog.replace(data, 's.', ''))
				 ELSE pg_catalog.format('SELECT s.id::pg_catalog.int8 AS n, %s FROM (%s) AS s(%s) WHERE s.fp IS NOT NULL%s', data, sub, cols,
										CASE WHEN wide THEN ' AND s.fp1 IS NOT NULL' ELSE '' END) END,
			CASE WHEN wide THEN ' OPERATOR(pg_catalog.+) (a.fp1 OPERATOR(@extschema@.<~>) b.fp1)' ELSE '' END,
			CASE WHEN NOT verified THEN 'NULL::pg_catalog.float8'
				 WHEN body_type OPERATOR(pg_catalog.=) 'bigint[]'::pg_catalog.regtype
					THEN '@extschema@.shingle_similarity(a.body, b.body)'
				 ELSE '@extschema@.shingle_similarity(a.body::pg_catalog.text, b.body::pg_catalog.text, $4, $5)' END)
			OPERATOR(pg_catalog.||) CASE WHEN ordered THEN ' ORDER BY n.kept_n, n.id_n' ELSE '' END
			USING engine, max_distance, min_similarity, shingle, units;
	EXCEPTION WHEN OTHERS THEN
		GET STACKED DIAGNOSTICS err_state = RETURNED_SQLSTATE, err_message = MESSAGE_TEXT,
			err_detail = PG_EXCEPTION_DETAIL, err_hint = PG_EXCEPTION_HINT;
		-- a NULL or repeated id of numbered rows, named by the id
		IF numbered AND err_state OPERATOR(pg_catalog.=) '21000' THEN
			IF NOT ranked THEN
				BEGIN
					EXECUTE dup_check INTO bad_null, bad_id;
				EXCEPTION WHEN OTHERS THEN
					NULL;	-- the query's own error (a subquery of more than one row): as it was
				END;
			END IF;
			IF bad_null THEN
				err_state := '22004';
				err_message := 'query returned a NULL id';
				err_detail := '';
				err_hint := 'Every row needs an id; rows with a NULL fingerprint are skipped.';
			ELSIF bad_id IS NOT NULL THEN
				err_message := pg_catalog.format('id %s appears more than once in the query result', bad_id);
				err_detail := '';
				err_hint := 'The first column of the query must identify its rows, for example a primary key or row_number() OVER ().';
			END IF;
		END IF;
		IF err_detail OPERATOR(pg_catalog.=) '' AND err_hint OPERATOR(pg_catalog.=) '' THEN
			RAISE EXCEPTION USING ERRCODE = err_state, MESSAGE = err_message;
		ELSIF err_detail OPERATOR(pg_catalog.=) '' THEN
			RAISE EXCEPTION USING ERRCODE = err_state, MESSAGE = err_message, HINT = err_hint;
		ELSIF err_hint OPERATOR(pg_catalog.=) '' THEN
			RAISE EXCEPTION USING ERRCODE = err_state, MESSAGE = err_message, DETAIL = err_detail;
		ELSE
			RAISE EXCEPTION USING ERRCODE = err_state, MESSAGE = err_message, DETAIL = err_detail, HINT = err_hint;
		END IF;
	END;
END
$$;
COMMENT ON FUNCTION simhash_keyed(anyelement, text, text, integer, float8, text, integer, text, boolean) IS
	'what the whole-table functions with a key (simhash_pairs_keyed ...) and the forms with a linkage run: the pairs (what ''pairs''), or every row with its cluster''s kept row (''clusters''; ''lineage'' with its distance, similarity and cluster size) of query (SELECT id, simhash[, body][, rank]); ids of the type of key; min_similarity NULL: not verified; ''dedup'' as ''clusters'' with other_id NULL for the kept row; ordered: by the kept row''s order, then the row''s; the forms with a linkage or a key run it by its OID (simhash_keyed_form), so that no function of the same name in the schema can take its place';

-- Every form of simhash_clusters and simhash_dedup with a linkage, after its
-- thresholds.  Without one they answer as in 0.3.0: simhash_clusters
-- 'single', simhash_dedup 'center', both in id order.
CREATE FUNCTION simhash_clusters(query text, max_distance integer, linkage text)
	RETURNS TABLE (id bigint, cluster_id bigint)
	AS 'MODULE_PATHNAME', 'simhash_keyed_form' LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION simhash_clusters(text, integer, text) IS
	'every id of query (SELECT id, simhash[, rank]) once, with the id of its cluster''s kept row (the lowest rank, ties by id; without a rank the smallest id); linkage ''single'': connected components of simhash_pairs(query, max_distance); ''center'': every member within max_distance bits of the kept row, no chaining';

CREATE FUNCTION simhash_clusters(query text, max_distance integer, min_similarity float8, linkage text,
								 shingle integer DEFAULT 3, units text DEFAULT 'words')
	RETURNS TABLE (id bigint, cluster_id bigint)
	AS 'MODULE_PATHNAME', 'simhash_keyed_form' LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION simhash_clusters(text, integer, float8, text, integer, text) IS
	'every id of query (SELECT id, simhash, body[, rank]) once, with the id of its cluster''s kept row (the lowest rank, ties by id; without a rank the smallest id); linkage ''single'': connected components of the verified pairs; ''center'': every member within max_distance bits of the kept row and with shingle_similarity >= min_similarity to it, no chaining';

CREATE FUNCTION simhash_dedup(query text, max_distance integer, linkage text)
	RETURNS TABLE (id bigint, duplicate_of bigint)
	AS 'MODULE_PATHNAME', 'simhash_keyed_form' LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION simhash_dedup(text, integer, text) IS
	'every id of query (SELECT id, simhash[, rank]) once: the kept row of each cluster of simhash_clusters(query, max_distance, linkage) with duplicate_of NULL, every other row with duplicate_of = that kept row';

CREATE FUNCTION simhash_dedup(query text, max_distance integer, min_similarity float8, linkage text,
							  shingle integer DEFAULT 3, units text DEFAULT 'words')
	RETURNS TABLE (id bigint, duplicate_of bigint)
	AS 'MODULE_PATHNAME', 'simhash_keyed_form' LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION simhash_dedup(text, integer, float8, text, integer, text) IS
	'every id of query (SELECT id, simhash, body[, rank]) once: the kept row of each cluster of simhash_clusters(query, max_distance, min_similarity, linkage, shingle, units) with duplicate_of NULL, every other row with duplicate_of = that kept row';

-- The lineage: why each row is kept or removed.
CREATE FUNCTION simhash_lineage(query text, max_distance integer, linkage text DEFAULT 'center')
	RETURNS TABLE (id bigint, kept_id bigint, distance integer, similarity float8, cluster_size bigint)
	AS 'MODULE_PATHNAME', 'simhash_keyed_form' LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION simhash_lineage(text, integer, text) IS
	'every id of query (SELECT id, simhash[, rank]) once, with its cluster''s kept row as simhash_clusters(query, max_distance, linkage) chooses it (kept_id = id for the kept row itself), its Hamming distance to that row and the number of rows of its cluster; similarity NULL';

CREATE FUNCTION simhash_lineage(query text, max_distance integer, min_similarity float8, linkage text DEFAULT 'center',
								shingle integer DEFAULT 3, units text DEFAULT 'words')
	RETURNS TABLE (id bigint, kept_id bigint, distance integer, similarity float8, cluster_size bigint)
	AS 'MODULE_PATHNAME', 'simhash_keyed_form' LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION simhash_lineage(text, integer, float8, text, integer, text) IS
	'every id of query (SELECT id, simhash, body[, rank]) once, with its cluster''s kept row as simhash_clusters(query, max_distance, min_similarity, linkage, shingle, units) chooses it (kept_id = id for the kept row itself), its Hamming distance and shingle_similarity to that row (similarity NULL for the kept row) and the number of rows of its cluster';

-- The same with ids of any type that has a default btree operator class
-- (text, uuid, numeric, a composite key ...): the first argument is a NULL of
-- that type, and fixes the type of the ids returned (their own names: as
-- overloads of the forms above, a NULL::text first would match their query
-- argument).  Rows are numbered in
-- (rank,) id order, the engines run on the numbers, and the numbers are mapped
-- back; the rows come out in a stable order: pairs by id_a, id_b; clusters,
-- dedup and lineage by the kept row, then the row (in rank and id order).
CREATE FUNCTION simhash_pairs_keyed(key anyelement, query text, max_distance integer DEFAULT 3)
	RETURNS TABLE (id_a anyelement, id_b anyelement, distance integer)
	AS 'MODULE_PATHNAME', 'simhash_keyed_form' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION simhash_pairs_keyed(anyelement, text, integer) IS
	'every pair of rows of query (SELECT id, simhash) within max_distance bits, once each (id_a < id_b), ids of the type of key (a NULL of that type, e.g. NULL::uuid), in order of id_a, id_b';

CREATE FUNCTION simhash_pairs_keyed(key anyelement, query text, max_distance integer, min_similarity float8,
							  shingle integer DEFAULT 3, units text DEFAULT 'words')
	RETURNS TABLE (id_a anyelement, id_b anyelement, distance integer, similarity float8)
	AS 'MODULE_PATHNAME', 'simhash_keyed_form' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION simhash_pairs_keyed(anyelement, text, integer, float8, integer, text) IS
	'every pair of rows of query (SELECT id, simhash, body) within max_distance bits whose shingle_similarity is at least min_similarity, with both, ids of the type of key (a NULL of that type), in order of id_a, id_b';

CREATE FUNCTION simhash_clusters_keyed(key anyelement, query text, max_distance integer DEFAULT 3, linkage text DEFAULT 'single')
	RETURNS TABLE (id anyelement, cluster_id anyelement)
	AS 'MODULE_PATHNAME', 'simhash_keyed_form' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION simhash_clusters_keyed(anyelement, text, integer, text) IS
	'every id of query (SELECT id, simhash[, rank]) once with its cluster''s kept row, as simhash_clusters(query, max_distance, linkage), ids of the type of key (a NULL of that type), in order of the kept row, then the row';

CREATE FUNCTION simhash_clusters_keyed(key anyelement, query text, max_distance integer, min_similarity float8,
								 linkage text DEFAULT 'single', shingle integer DEFAULT 3, units text DEFAULT 'words')
	RETURNS TABLE (id anyelement, cluster_id anyelement)
	AS 'MODULE_PATHNAME', 'simhash_keyed_form' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION simhash_clusters_keyed(anyelement, text, integer, float8, text, integer, text) IS
	'every id of query (SELECT id, simhash, body[, rank]) once with its cluster''s kept row, as simhash_clusters(query, max_distance, min_similarity, linkage, shingle, units), ids of the type of key (a NULL of that type), in order of the kept row, then the row';

CREATE FUNCTION simhash_dedup_keyed(key anyelement, query text, max_distance integer DEFAULT 3, linkage text DEFAULT 'center')
	RETURNS TABLE (id anyelement, duplicate_of anyelement)
	AS 'MODULE_PATHNAME', 'simhash_keyed_form' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION simhash_dedup_keyed(anyelement, text, integer, text) IS
	'every id of query (SELECT id, simhash[, rank]) once, duplicate_of NULL for the kept row of its cluster, else that row, as simhash_dedup(query, max_distance, linkage), ids of the type of key (a NULL of that type), in order of the kept row, then the row';

CREATE FUNCTION simhash_dedup_keyed(key anyelement, query text, max_distance integer, min_similarity float8,
							  linkage text DEFAULT 'center', shingle integer DEFAULT 3, units text DEFAULT 'words')
	RETURNS TABLE (id anyelement, duplicate_of anyelement)
	AS 'MODULE_PATHNAME', 'simhash_keyed_form' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION simhash_dedup_keyed(anyelement, text, integer, float8, text, integer, text) IS
	'every id of query (SELECT id, simhash, body[, rank]) once, duplicate_of NULL for the kept row of its cluster, else that row, as simhash_dedup(query, max_distance, min_similarity, linkage, shingle, units), ids of the type of key (a NULL of that type), in order of the kept row, then the row';

CREATE FUNCTION simhash_lineage_keyed(key anyelement, query text, max_distance integer, linkage text DEFAULT 'center')
	RETURNS TABLE (id anyelement, kept_id anyelement, distance integer, similarity float8, cluster_size bigint)
	AS 'MODULE_PATHNAME', 'simhash_keyed_form' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION simhash_lineage_keyed(anyelement, text, integer, text) IS
	'simhash_lineage(query, max_distance, linkage) with ids of the type of key (a NULL of that type), in order of the kept row, then the row';

CREATE FUNCTION simhash_lineage_keyed(key anyelement, query text, max_distance integer, min_similarity float8,
								linkage text DEFAULT 'center', shingle integer DEFAULT 3, units text DEFAULT 'words')
	RETURNS TABLE (id anyelement, kept_id anyelement, distance integer, similarity float8, cluster_size bigint)
	AS 'MODULE_PATHNAME', 'simhash_keyed_form' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION simhash_lineage_keyed(anyelement, text, integer, float8, text, integer, text) IS
	'simhash_lineage(query, max_distance, min_similarity, linkage, shingle, units) with ids of the type of key (a NULL of that type), in order of the kept row, then the row';


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
-- table every query is a round trip to every shard.  The user's query is
-- wrapped as a subquery, in the form simhash_subquery() gives (a trailing
-- semicolon or "-- comment" made the wrapper a syntax error).
CREATE OR REPLACE FUNCTION simhash_nearest(query text, target simhash, n integer DEFAULT 10)
	RETURNS TABLE (id bigint, distance integer)
	LANGUAGE plpgsql STABLE STRICT PARALLEL UNSAFE
AS $$
DECLARE
	radius integer;
	ids bigint[];
	distances integer[];
	shape_ok boolean;
	body pg_catalog.text := @extschema@.simhash_subquery(query);
	-- names are qualified: the caller's search_path must not change them
	nearest pg_catalog.text := pg_catalog.format('SELECT pg_catalog.array_agg(s.id ORDER BY s.d, s.id), pg_catalog.array_agg(s.d ORDER BY s.d, s.id) '
						   'FROM (SELECT s.id::bigint AS id, (s.fp OPERATOR(@extschema@.<~>) $1)::integer AS d '
						   'FROM (%s) AS s(id, fp) WHERE s.fp OPERATOR(@extschema@.<~>) $1 OPERATOR(@extschema@.<=) $2 '
						   'ORDER BY 2, 1 LIMIT $3) s',
						   body);
BEGIN
	IF n OPERATOR(pg_catalog.<) 0 THEN
		RAISE EXCEPTION 'n must not be negative, not %', n USING ERRCODE = 'invalid_parameter_value';
	END IF;
	-- its shape: exactly two columns, an integer id and a simhash (errors of
	-- the query itself come out of the first probe as they are)
	BEGIN
		EXECUTE pg_catalog.format('SELECT 1 FROM (%s) AS s(c1, c2, c3) LIMIT 0', body);
		shape_ok := false;			/* three or more columns */
	EXCEPTION WHEN invalid_column_reference THEN
		BEGIN
			EXECUTE pg_catalog.format('SELECT s.c1::bigint, s.c2 OPERATOR(@extschema@.<~>) NULL::@extschema@.simhash '
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
		EXECUTE nearest INTO ids, distances USING target, radius, n;
		IF radius OPERATOR(pg_catalog.=) 64 OR coalesce(pg_catalog.cardinality(ids), 0) OPERATOR(pg_catalog.>=) n THEN
			RETURN QUERY SELECT u.id, u.d FROM ROWS FROM (pg_catalog.unnest(ids), pg_catalog.unnest(distances)) AS u(id, d);
			RETURN;
		END IF;
	END LOOP;
END
$$;
COMMENT ON FUNCTION simhash_nearest(text, simhash, integer) IS
	'deprecated: use ORDER BY fp <~> target LIMIT n with a hamming index. The n rows of query (SELECT id, simhash or simhash128) nearest to target, nearest first (ties by id), exact: one query per radius of 3, 6, 10, 16, 24 and 64 bits, each answered by an index on the queried column; trailing semicolons and a trailing -- comment are allowed';


-- ---------------------------------------------------------------------------
-- fingerprint speed
-- ---------------------------------------------------------------------------


-- ---------------------------------------------------------------------------
-- 128-bit fingerprints
-- ---------------------------------------------------------------------------

CREATE TYPE simhash128;

CREATE FUNCTION simhash128_in(cstring) RETURNS simhash128
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash128_out(simhash128) RETURNS cstring
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash128_recv(internal) RETURNS simhash128
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash128_send(simhash128) RETURNS bytea
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE TYPE simhash128 (
	INPUT = simhash128_in,
	OUTPUT = simhash128_out,
	RECEIVE = simhash128_recv,
	SEND = simhash128_send,
	INTERNALLENGTH = 16,
	ALIGNMENT = double,
	STORAGE = plain
);

COMMENT ON TYPE simhash128 IS '128-bit SimHash fingerprint, written as 32 hexadecimal digits';
COMMENT ON FUNCTION simhash128_in(cstring) IS 'reads a simhash128 from 32 hexadecimal digits';
COMMENT ON FUNCTION simhash128_out(simhash128) IS 'writes a simhash128 as 32 lower-case hexadecimal digits';
COMMENT ON FUNCTION simhash128_recv(internal) IS 'reads a simhash128 in binary form (16 bytes, big-endian)';
COMMENT ON FUNCTION simhash128_send(simhash128) IS 'writes a simhash128 in binary form (16 bytes, big-endian)';

-- casts: explicit and bit-for-bit, most significant first
CREATE FUNCTION simhash128_to_bit(simhash128, integer, boolean) RETURNS bit
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash128_from_bit(bit) RETURNS simhash128
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash128_from_bit(varbit) RETURNS simhash128
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash128_to_bytea(simhash128) RETURNS bytea
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash128_from_bytea(bytea) RETURNS simhash128
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE CAST (simhash128 AS bit) WITH FUNCTION simhash128_to_bit(simhash128, integer, boolean);
CREATE CAST (bit AS simhash128) WITH FUNCTION simhash128_from_bit(bit);
CREATE CAST (varbit AS simhash128) WITH FUNCTION simhash128_from_bit(varbit);
CREATE CAST (simhash128 AS bytea) WITH FUNCTION simhash128_to_bytea(simhash128);
CREATE CAST (bytea AS simhash128) WITH FUNCTION simhash128_from_bytea(bytea);

COMMENT ON FUNCTION simhash128_to_bit(simhash128, integer, boolean) IS 'cast simhash128 to bit(128), most significant bit first';
COMMENT ON FUNCTION simhash128_from_bit(bit) IS 'cast bit(128) to simhash128; other lengths are an error';
COMMENT ON FUNCTION simhash128_from_bit(varbit) IS 'cast a 128-bit varbit to simhash128; other lengths are an error';
COMMENT ON FUNCTION simhash128_to_bytea(simhash128) IS 'cast simhash128 to 16 bytes, big-endian';
COMMENT ON FUNCTION simhash128_from_bytea(bytea) IS 'cast 16 big-endian bytes to simhash128; other lengths are an error';

CREATE FUNCTION simhash128_high(simhash128) RETURNS simhash
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION simhash128_low(simhash128) RETURNS simhash
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
COMMENT ON FUNCTION simhash128_high(simhash128) IS 'the 64 most significant bits, as a simhash (for a fingerprint of text: simhash() of the same text and options)';
COMMENT ON FUNCTION simhash128_low(simhash128) IS 'the 64 least significant bits, as a simhash';

-- comparison: unsigned order of the 128-bit value (= order of the hex text)
CREATE FUNCTION simhash128_eq(simhash128, simhash128) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION simhash128_ne(simhash128, simhash128) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION simhash128_lt(simhash128, simhash128) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION simhash128_le(simhash128, simhash128) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION simhash128_gt(simhash128, simhash128) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION simhash128_ge(simhash128, simhash128) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION simhash128_cmp(simhash128, simhash128) RETURNS integer
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION simhash128_hash(simhash128) RETURNS integer
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION simhash128_hash_extended(simhash128, bigint) RETURNS bigint
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE OPERATOR = (LEFTARG = simhash128, RIGHTARG = simhash128, FUNCTION = simhash128_eq,
	COMMUTATOR = =, NEGATOR = <>, RESTRICT = eqsel, JOIN = eqjoinsel, HASHES, MERGES);
CREATE OPERATOR <> (LEFTARG = simhash128, RIGHTARG = simhash128, FUNCTION = simhash128_ne,
	COMMUTATOR = <>, NEGATOR = =, RESTRICT = neqsel, JOIN = neqjoinsel);
CREATE OPERATOR < (LEFTARG = simhash128, RIGHTARG = simhash128, FUNCTION = simhash128_lt,
	COMMUTATOR = >, NEGATOR = >=, RESTRICT = scalarltsel, JOIN = scalarltjoinsel);
CREATE OPERATOR <= (LEFTARG = simhash128, RIGHTARG = simhash128, FUNCTION = simhash128_le,
	COMMUTATOR = >=, NEGATOR = >, RESTRICT = scalarlesel, JOIN = scalarlejoinsel);
CREATE OPERATOR > (LEFTARG = simhash128, RIGHTARG = simhash128, FUNCTION = simhash128_gt,
	COMMUTATOR = <, NEGATOR = <=, RESTRICT = scalargtsel, JOIN = scalargtjoinsel);
CREATE OPERATOR >= (LEFTARG = simhash128, RIGHTARG = simhash128, FUNCTION = simhash128_ge,
	COMMUTATOR = <=, NEGATOR = <, RESTRICT = scalargesel, JOIN = scalargejoinsel);

CREATE OPERATOR CLASS simhash128_btree_ops
	DEFAULT FOR TYPE simhash128 USING btree AS
	OPERATOR 1 <,
	OPERATOR 2 <=,
	OPERATOR 3 =,
	OPERATOR 4 >=,
	OPERATOR 5 >,
	FUNCTION 1 simhash128_cmp(simhash128, simhash128);

CREATE OPERATOR CLASS simhash128_hash_ops
	DEFAULT FOR TYPE simhash128 USING hash AS
	OPERATOR 1 =,
	FUNCTION 1 simhash128_hash(simhash128),
	FUNCTION 2 simhash128_hash_extended(simhash128, bigint);

COMMENT ON FUNCTION simhash128_eq(simhash128, simhash128) IS 'implementation of = for simhash128';
COMMENT ON FUNCTION simhash128_ne(simhash128, simhash128) IS 'implementation of <> for simhash128';
COMMENT ON FUNCTION simhash128_lt(simhash128, simhash128) IS 'implementation of < for simhash128 (unsigned order)';
COMMENT ON FUNCTION simhash128_le(simhash128, simhash128) IS 'implementation of <= for simhash128 (unsigned order)';
COMMENT ON FUNCTION simhash128_gt(simhash128, simhash128) IS 'implementation of > for simhash128 (unsigned order)';
COMMENT ON FUNCTION simhash128_ge(simhash128, simhash128) IS 'implementation of >= for simhash128 (unsigned order)';
COMMENT ON FUNCTION simhash128_cmp(simhash128, simhash128) IS 'btree comparison support for simhash128';
COMMENT ON FUNCTION simhash128_hash(simhash128) IS 'hash support for simhash128 (of its 16 big-endian bytes)';
COMMENT ON FUNCTION simhash128_hash_extended(simhash128, bigint) IS 'seeded 64-bit hash support for simhash128';
COMMENT ON OPERATOR = (simhash128, simhash128) IS 'equal';
COMMENT ON OPERATOR <> (simhash128, simhash128) IS 'not equal';
COMMENT ON OPERATOR < (simhash128, simhash128) IS 'less than (unsigned order)';
COMMENT ON OPERATOR <= (simhash128, simhash128) IS 'less than or equal (unsigned order)';
COMMENT ON OPERATOR > (simhash128, simhash128) IS 'greater than (unsigned order)';
COMMENT ON OPERATOR >= (simhash128, simhash128) IS 'greater than or equal (unsigned order)';
COMMENT ON OPERATOR CLASS simhash128_btree_ops USING btree IS 'default btree operator class for simhash128';
COMMENT ON OPERATOR CLASS simhash128_hash_ops USING hash IS 'default hash operator class for simhash128';
COMMENT ON OPERATOR FAMILY simhash128_btree_ops USING btree IS 'btree operator family for simhash128';
COMMENT ON OPERATOR FAMILY simhash128_hash_ops USING hash IS 'hash operator family for simhash128';

-- the distance: a simhash_distance (an integer, 0..128 here), so that the
-- planner support of "a <~> b <= k" applies as for 64 bits
CREATE FUNCTION simhash128_distance(simhash128, simhash128) RETURNS simhash_distance
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF
	SUPPORT simhash_hamming_support;
COMMENT ON FUNCTION simhash128_distance(simhash128, simhash128) IS 'number of bits in which two 128-bit fingerprints differ (0..128)';
CREATE OPERATOR <~> (LEFTARG = simhash128, RIGHTARG = simhash128, FUNCTION = simhash128_distance,
	COMMUTATOR = <~>);
COMMENT ON OPERATOR <~> (simhash128, simhash128) IS 'Hamming distance (0..128)';
-- the ordering operator: "ORDER BY a <~> b" is planned as "a <-> b" (see
-- simhash_hamming_support), which a hamming index returns nearest first
CREATE FUNCTION simhash128_distance_integer(simhash128, simhash128) RETURNS integer
	AS 'MODULE_PATHNAME', 'simhash128_distance' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
COMMENT ON FUNCTION simhash128_distance_integer(simhash128, simhash128) IS 'Hamming distance of 128-bit fingerprints as a plain integer (the ordering operator <->)';
CREATE OPERATOR <-> (LEFTARG = simhash128, RIGHTARG = simhash128, FUNCTION = simhash128_distance_integer,
	COMMUTATOR = <->);
COMMENT ON OPERATOR <-> (simhash128, simhash128) IS 'Hamming distance as integer; ORDER BY fp <-> q (and fp <~> q) can use a hamming index';

-- fingerprints: the same features, options and frozen definition as the
-- 64-bit forms, in one pass over the input.  The high 64 bits are the 64-bit
-- form's value; the low 64 bits are voted by each feature's second hash
-- (XXH3-64, seed 128, of its first hash's 8 little-endian bytes).
CREATE FUNCTION simhash128(body text, shingle integer DEFAULT 3, weighting text DEFAULT 'sublinear')
	RETURNS simhash128 AS 'MODULE_PATHNAME', 'simhash128_text'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash128(text, integer, text) IS
	'128-bit fingerprint of a text, with the tokens, shingles and weightings of simhash(text, shingle, weighting), whose value is its high half';
-- varchar columns need their own entry: without it, simhash128(varchar_column)
-- would be read as a cast to the simhash128 type
CREATE FUNCTION simhash128(body varchar, shingle integer DEFAULT 3, weighting text DEFAULT 'sublinear')
	RETURNS simhash128 AS 'MODULE_PATHNAME', 'simhash128_text'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash128(varchar, integer, text) IS '128-bit fingerprint of a varchar; same as simhash128(text)';
CREATE FUNCTION simhash128_ngram(body text, n integer DEFAULT 3, weighting text DEFAULT 'tf')
	RETURNS simhash128 AS 'MODULE_PATHNAME', 'simhash128_ngram'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash128_ngram(text, integer, text) IS
	'128-bit fingerprint of a text from its character n-grams, as simhash_ngram(text, n, weighting), whose value is its high half';
CREATE FUNCTION simhash128(tsvector) RETURNS simhash128
	AS 'MODULE_PATHNAME', 'simhash128_tsvector'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash128(tsvector) IS '128-bit fingerprint of a tsvector, as simhash(tsvector), whose value is its high half';
CREATE FUNCTION simhash128(features text[]) RETURNS simhash128
	AS 'MODULE_PATHNAME', 'simhash128_features'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash128(text[]) IS '128-bit fingerprint of a list of features, as simhash(text[]), whose value is its high half';
CREATE FUNCTION shingle_simhash128(body text, n integer DEFAULT 3, units text DEFAULT 'words', part integer DEFAULT 0)
	RETURNS simhash128 AS 'MODULE_PATHNAME', 'shingle_simhash128'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 500;
COMMENT ON FUNCTION shingle_simhash128(text, integer, text, integer) IS
	'128-bit fingerprint of the shingle set of shingle_set(body, n, units): each distinct shingle votes once, in the high half as the feature ''a'' || its hash, in the low half as ''b'' || its hash (as elements of simhash(text[])); part p (0 .. 12) uses the letters chr(97 + 2p) and chr(98 + 2p) instead, another independent 128 bits (parts 0 and 1: a 256-bit fingerprint, distances added); fewer unrelated candidates than simhash128(body) at the same recall; the set is built within maintenance_work_mem, as by shingle_set';

-- radius searches: simhash128_ball, <@ and @>, simhash128_within(); the
-- planner support turns "a <~> b <= k" into simhash128_within(a, b, k) and
-- that into the index condition "a <@ simhash128_ball(b, k)"
CREATE TYPE simhash128_ball;
CREATE FUNCTION simhash128_ball_in(cstring) RETURNS simhash128_ball
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash128_ball_out(simhash128_ball) RETURNS cstring
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash128_ball_recv(internal) RETURNS simhash128_ball
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash128_ball_send(simhash128_ball) RETURNS bytea
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE TYPE simhash128_ball (
	INPUT = simhash128_ball_in,
	OUTPUT = simhash128_ball_out,
	RECEIVE = simhash128_ball_recv,
	SEND = simhash128_ball_send,
	INTERNALLENGTH = 24,
	ALIGNMENT = double,
	STORAGE = plain
);
COMMENT ON TYPE simhash128_ball IS 'all 128-bit fingerprints within a Hamming radius of a center, written (center,radius)';
COMMENT ON FUNCTION simhash128_ball_in(cstring) IS 'reads a simhash128_ball written (center,radius)';
COMMENT ON FUNCTION simhash128_ball_out(simhash128_ball) IS 'writes a simhash128_ball as (center,radius)';
COMMENT ON FUNCTION simhash128_ball_recv(internal) IS 'reads a simhash128_ball in binary form (16-byte center, 4-byte radius, big-endian)';
COMMENT ON FUNCTION simhash128_ball_send(simhash128_ball) IS 'writes a simhash128_ball in binary form (16-byte center, 4-byte radius, big-endian)';

CREATE FUNCTION simhash128_ball(center simhash128, radius integer) RETURNS simhash128_ball
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash128_ball(simhash128, integer) IS 'the ball of 128-bit fingerprints within radius bits of center (radius 0..128, any other an error)';
CREATE FUNCTION simhash128_ball_center(simhash128_ball) RETURNS simhash128
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash128_ball_center(simhash128_ball) IS 'center of a simhash128_ball';
CREATE FUNCTION simhash128_ball_radius(simhash128_ball) RETURNS integer
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash128_ball_radius(simhash128_ball) IS 'radius of a simhash128_ball';

CREATE FUNCTION simhash128_in_ball(simhash128, simhash128_ball) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION simhash128_ball_contains(simhash128_ball, simhash128) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
COMMENT ON FUNCTION simhash128_in_ball(simhash128, simhash128_ball) IS 'implementation of <@: is the fingerprint in the ball';
COMMENT ON FUNCTION simhash128_ball_contains(simhash128_ball, simhash128) IS 'implementation of @>: does the ball contain the fingerprint';
CREATE OPERATOR <@ (LEFTARG = simhash128, RIGHTARG = simhash128_ball, FUNCTION = simhash128_in_ball,
	COMMUTATOR = @>, RESTRICT = simhash_ball_sel, JOIN = simhash_ball_joinsel);
CREATE OPERATOR @> (LEFTARG = simhash128_ball, RIGHTARG = simhash128, FUNCTION = simhash128_ball_contains,
	COMMUTATOR = <@, RESTRICT = simhash_ball_sel, JOIN = simhash_ball_joinsel);
COMMENT ON OPERATOR <@ (simhash128, simhash128_ball) IS 'is within the ball (indexable)';
COMMENT ON OPERATOR @> (simhash128_ball, simhash128) IS 'ball contains the fingerprint (indexable)';

CREATE FUNCTION simhash128_within(a simhash128, b simhash128, max_distance integer) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF
	SUPPORT simhash_within_support;
COMMENT ON FUNCTION simhash128_within(simhash128, simhash128, integer) IS 'true when a and b differ in at most max_distance bits (indexable on a or b)';
CREATE FUNCTION simhash128_at_distance(a simhash128, b simhash128, distance integer) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF
	SUPPORT simhash_within_support;
COMMENT ON FUNCTION simhash128_at_distance(simhash128, simhash128, integer) IS 'true when a and b differ in exactly distance bits (indexable on a or b)';

-- the hamming index of simhash128: packed pages that every scan reads in
-- full, exact for every radius, and nearest first
CREATE OPERATOR CLASS simhash128_hamming_ops
	DEFAULT FOR TYPE simhash128 USING hamming AS
	OPERATOR 1 <@ (simhash128, simhash128_ball),
	OPERATOR 3 = (simhash128, simhash128),
	OPERATOR 4 <-> (simhash128, simhash128) FOR ORDER BY pg_catalog.integer_ops;
COMMENT ON OPERATOR CLASS simhash128_hamming_ops USING hamming IS 'exact Hamming-radius search of 128-bit fingerprints for every k (fp <~> q <= k, fp <@ simhash128_ball(q, k), fp = q) and ORDER BY fp <~> q, nearest first';
COMMENT ON OPERATOR FAMILY simhash128_hamming_ops USING hamming IS 'hamming operator family for simhash128';

-- ---------------------------------------------------------------------------
-- marking the near-duplicates of a table
-- ---------------------------------------------------------------------------

-- parts 0 and 1 of shingle_simhash128 from one shingling of the text
CREATE FUNCTION shingle_simhash256(body text, n integer DEFAULT 3, units text DEFAULT 'words')
	RETURNS simhash128[] AS 'MODULE_PATHNAME', 'shingle_simhash256'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 800;
COMMENT ON FUNCTION shingle_simhash256(text, integer, text) IS
	'the 256-bit fingerprint of the shingle set of shingle_set(body, n, units) as ARRAY[shingle_simhash128(body, n, units, 0), shingle_simhash128(body, n, units, 1)], the text read and its set built once for both';

-- ---- near-duplicate texts (neardup.c) ----
-- a ~= b: both texts have shingles, their 256-bit shingle fingerprints
-- (shingle_simhash256(body, 3, 'auto')) lie within
-- simhash_similarity_radius(t) bits, and shingle_similarity(a, b, 3, 'auto')
-- is at least t: simhash.similarity_threshold for text ~= text, the
-- argument of simhash_similar(a, b, t), the threshold a simhash_doc carries.
CREATE FUNCTION simhash_similarity_radius(min_similarity float8) RETURNS integer
	AS 'MODULE_PATHNAME', 'simhash_similarity_radius'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash_similarity_radius(float8) IS
	'the radius in bits of the 256-bit shingle fingerprint within which two texts of at least this shingle similarity (0.5 .. 1) lie: the measured table of ~=, simhash_similar and simhash_mark_duplicates';

CREATE FUNCTION simhash_near(a text, b text) RETURNS boolean
	AS 'MODULE_PATHNAME', 'simhash_text_near'
	LANGUAGE C STABLE STRICT PARALLEL SAFE COST 1000;
COMMENT ON FUNCTION simhash_near(text, text) IS
	'the ~= operator: are the texts near-duplicates at simhash.similarity_threshold (default 0.8)?';
CREATE OPERATOR ~= (LEFTARG = text, RIGHTARG = text, FUNCTION = simhash_near,
	COMMUTATOR = ~=, RESTRICT = contsel, JOIN = contjoinsel);
COMMENT ON OPERATOR ~= (text, text) IS
	'near-duplicate texts: shingle similarity at least simhash.similarity_threshold, verified (indexable by a hamming index on the text)';

CREATE FUNCTION simhash_similar_support(internal) RETURNS internal
	AS 'MODULE_PATHNAME', 'simhash_similar_support'
	LANGUAGE C STRICT;
COMMENT ON FUNCTION simhash_similar_support(internal) IS
	'planner support of simhash_similar(text, text, float8): its index condition and selectivity';
CREATE FUNCTION simhash_similar(a text, b text, min_similarity float8) RETURNS boolean
	AS 'MODULE_PATHNAME', 'simhash_text_similar'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 1000
	SUPPORT simhash_similar_support;
COMMENT ON FUNCTION simhash_similar(text, text, float8) IS
	'are the texts near-duplicates at min_similarity (0.5 .. 1; 0.8 is the usual)? as text ~= text, with its threshold as an argument (indexable by a hamming index on either text); the threshold is required, so that simhash_similar of two literals stays the one of fingerprints';

CREATE TYPE simhash_doc;
CREATE FUNCTION simhash_doc_in(cstring) RETURNS simhash_doc
	AS 'MODULE_PATHNAME', 'simhash_doc_in'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash_doc_in(cstring) IS 'input function of simhash_doc: the threshold, a colon, the text';
CREATE FUNCTION simhash_doc_out(simhash_doc) RETURNS cstring
	AS 'MODULE_PATHNAME', 'simhash_doc_out'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash_doc_out(simhash_doc) IS 'output function of simhash_doc: the threshold, a colon, the text';
CREATE TYPE simhash_doc (
	INPUT = simhash_doc_in,
	OUTPUT = simhash_doc_out,
	INTERNALLENGTH = VARIABLE,
	STORAGE = extended,
	ALIGNMENT = int4
);
COMMENT ON TYPE simhash_doc IS
	'a text with the threshold at which it is compared (simhash_doc(body, min_similarity)): what an exclusion constraint of near-duplicates indexes, so that its threshold is its own';

CREATE FUNCTION simhash_doc(body text, min_similarity float8 DEFAULT 0.8) RETURNS simhash_doc
	AS 'MODULE_PATHNAME', 'simhash_doc_make'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash_doc(text, float8) IS
	'the text with the threshold (0.5 .. 1, default 0.8) at which ~= compares it: EXCLUDE USING hamming (simhash_doc(body, 0.8) WITH ~=) rejects near-duplicates';
CREATE FUNCTION simhash_doc_body(doc simhash_doc) RETURNS text
	AS 'MODULE_PATHNAME', 'simhash_doc_body'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash_doc_body(simhash_doc) IS 'the text of a simhash_doc';
CREATE FUNCTION simhash_doc_threshold(doc simhash_doc) RETURNS float8
	AS 'MODULE_PATHNAME', 'simhash_doc_threshold'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash_doc_threshold(simhash_doc) IS 'the threshold of a simhash_doc';

CREATE FUNCTION simhash_near(a text, b simhash_doc) RETURNS boolean
	AS 'MODULE_PATHNAME', 'simhash_text_near_doc'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 1000;
COMMENT ON FUNCTION simhash_near(text, simhash_doc) IS
	'the ~= operator: is the text a near-duplicate of the doc''s text at the doc''s threshold?';
CREATE OPERATOR ~= (LEFTARG = text, RIGHTARG = simhash_doc, FUNCTION = simhash_near,
	RESTRICT = contsel, JOIN = contjoinsel);
COMMENT ON OPERATOR ~= (text, simhash_doc) IS
	'near-duplicate texts at the threshold of the simhash_doc (what simhash_similar uses a hamming index through)';

CREATE FUNCTION simhash_near(a simhash_doc, b simhash_doc) RETURNS boolean
	AS 'MODULE_PATHNAME', 'simhash_doc_near'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 1000;
COMMENT ON FUNCTION simhash_near(simhash_doc, simhash_doc) IS
	'the ~= operator: are the docs'' texts near-duplicates at the higher of their thresholds?';
CREATE OPERATOR ~= (LEFTARG = simhash_doc, RIGHTARG = simhash_doc, FUNCTION = simhash_near,
	COMMUTATOR = ~=, RESTRICT = contsel, JOIN = contjoinsel);
COMMENT ON OPERATOR ~= (simhash_doc, simhash_doc) IS
	'near-duplicate texts at the higher of the two thresholds (the operator of an exclusion constraint on simhash_doc(body, t))';

CREATE OPERATOR CLASS simhash_text_ops
	DEFAULT FOR TYPE text USING hamming AS
	OPERATOR 1 ~= (text, simhash_doc),
	OPERATOR 2 ~= (text, text);
COMMENT ON OPERATOR CLASS simhash_text_ops USING hamming IS
	'near-duplicate texts: body ~= q, simhash_similar(body, q, t); keeps the 256-bit shingle fingerprint of each text';
COMMENT ON OPERATOR FAMILY simhash_text_ops USING hamming IS 'hamming operator family of near-duplicate texts';
CREATE OPERATOR CLASS simhash_doc_ops
	DEFAULT FOR TYPE simhash_doc USING hamming AS
	OPERATOR 1 ~= (simhash_doc, simhash_doc);
COMMENT ON OPERATOR CLASS simhash_doc_ops USING hamming IS
	'near-duplicate texts with their threshold: EXCLUDE USING hamming (simhash_doc(body, t) WITH ~=)';
COMMENT ON OPERATOR FAMILY simhash_doc_ops USING hamming IS 'hamming operator family of simhash_doc';

-- simhash_pairs_share(query, max_distance, recall, share, shares): the pairs
-- of simhash_pairs(query, max_distance) (with simhash.pairs_recall = recall)
-- whose first table or band t has (t - 1) % shares = share.  The plan depends
-- only on the rows, the distance and the recall, so nodes that read the same
-- rows and run the shares 0 .. shares - 1 find disjoint sets of pairs whose
-- union is simhash_pairs(): the distributed simhash_mark_duplicates() runs
-- one share on each worker.
CREATE FUNCTION simhash_pairs_share(query text, max_distance integer, recall float8, share integer, shares integer)
	RETURNS TABLE (id_a bigint, id_b bigint, distance integer)
	AS 'MODULE_PATHNAME', 'simhash_pairs_share'
	LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION simhash_pairs_share(text, integer, float8, integer, integer) IS
	'the pairs of simhash_pairs(query, max_distance) at simhash.pairs_recall = recall (0.5..1) whose first table or band t has (t - 1) % shares = share: disjoint shares whose union is every pair, for running one enumeration on several nodes over the same rows';

-- The steps that the distributed simhash_mark_duplicates() and the query-text
-- forms on a Citus distributed table (simhash_query_distributed) share.  Their
-- intermediate results are unlogged distributed tables whose names begin with
-- scratch (schema-qualified), dropped by the caller, and rolled back with its
-- transaction.
--
-- simhash_dist_copies(scratch, fp_columns): creates scratch_fps (c, id,
-- fp_columns), distributed by a copy number c with one shard per worker, and
-- returns the copy number of each shard (the least value that it holds), in
-- shard order: a row inserted once for each copy number is on every worker.
CREATE FUNCTION simhash_dist_copies(scratch text, fp_columns text)
	RETURNS integer[]
	LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
AS $$
DECLARE
	nworkers pg_catalog.int4;
	copies pg_catalog.int4[];
BEGIN
	SELECT pg_catalog.count(*)::pg_catalog.int4 INTO nworkers FROM pg_catalog.citus_get_active_worker_nodes();
	EXECUTE pg_catalog.format('CREATE UNLOGGED TABLE %s_fps (c pg_catalog.int4, id pg_catalog.int8, %s)', scratch, fp_columns);
	PERFORM pg_catalog.create_distributed_table(scratch OPERATOR(pg_catalog.||) '_fps', 'c', shard_count => GREATEST(nworkers, 1), colocate_with => 'none');
	EXECUTE pg_catalog.format(
		'SELECT pg_catalog.array_agg((SELECT v FROM pg_catalog.generate_series(0, 1000000) AS v '
		'  WHERE pg_catalog.get_shard_id_for_distribution_column(%1$L, v) OPERATOR(pg_catalog.=) s.shardid LIMIT 1) ORDER BY s.shardid) '
		'FROM pg_catalog.pg_dist_shard AS s WHERE s.logicalrelid OPERATOR(pg_catalog.=) %1$L::pg_catalog.regclass',
		scratch OPERATOR(pg_catalog.||) '_fps') INTO copies;
	RETURN copies;
END
$$;
COMMENT ON FUNCTION simhash_dist_copies(text, text) IS
	'a step of the distributed whole-table calls: creates the table scratch_fps (c, id, fp_columns) of one shard per worker, distributed by the copy number c, and returns the copy number of each shard; not for calling directly';

-- simhash_dist_candidates(scratch, copies, fp_query, radius, recall): the
-- query of the candidate pairs (a, b, d) of the rows of scratch_fps: on the
-- shard of copy copies[s + 1], share s of simhash_pairs_share() at recall over
-- fp_query (a format of the shard and the copy number that reads SELECT id,
-- fingerprint), with the caller's work_mem; each pair once, a < b.
CREATE FUNCTION simhash_dist_candidates(scratch text, copies integer[], fp_query text, radius integer, recall float8)
	RETURNS text
	LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
DECLARE
	share_of pg_catalog.text;
BEGIN
	SELECT 'CASE x.c' OPERATOR(pg_catalog.||) pg_catalog.string_agg(pg_catalog.format(' WHEN %s THEN %s', c, i OPERATOR(pg_catalog.-) 1), '')
		   OPERATOR(pg_catalog.||) ' END'
	  INTO share_of FROM pg_catalog.unnest(copies) WITH ORDINALITY AS u(c, i);
	RETURN pg_catalog.format(
		'SELECT (p.p).id_a AS a, (p.p).id_b AS b, (p.p).distance AS d FROM ('
		'  SELECT @extschema@.simhash_pairs_share(pg_catalog.format(%7$L, x.t::pg_catalog.regclass, x.c), %2$s, %3$s, %4$s, %5$s) AS p '
		'  FROM (SELECT f.c, f.tableoid AS t, pg_catalog.set_config(''work_mem'', %6$L, true) FROM %1$s_fps AS f GROUP BY f.c, f.tableoid) AS x) AS p',
		scratch, radius, recall, share_of, pg_catalog.cardinality(copies), pg_catalog.current_setting('work_mem'), fp_query);
END
$$;
COMMENT ON FUNCTION simhash_dist_candidates(text, integer[], text, integer, float8) IS
	'a step of the distributed whole-table calls: the query of the candidate pairs (a, b, d) of the fingerprints in scratch_fps, one share of simhash_pairs_share() on each worker; not for calling directly';

-- simhash_verify_sets(sets_query, pairs_query, min_similarity, key, rank):
-- the verification of one worker's pairs in memory: sets_query gives its rows
-- (ctid, k, r, s), a row's ctid, its key, its rank and its shingle set;
-- pairs_query the pairs (tid_a, tid_b, d), the ctids of their two rows;
-- returns those whose sets have a shingle_similarity of at least
-- min_similarity.  Each set is read once.  key and rank are NULLs of the
-- types of k and r.
CREATE FUNCTION simhash_verify_sets(sets_query text, pairs_query text, min_similarity float8, key anyelement, rank anycompatible)
	RETURNS TABLE (ka anyelement, ra anycompatible, kb anyelement, rb anycompatible, d integer, similarity float8)
	AS 'MODULE_PATHNAME', 'simhash_verify_sets'
	LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION simhash_verify_sets(text, text, float8, anyelement, anycompatible) IS
	'a step of the distributed whole-table calls: the pairs (tid_a, tid_b, d) of pairs_query, ctids of rows (ctid, k, r, s) of sets_query, whose shingle sets s have a shingle_similarity of at least min_similarity, as (ka, ra, kb, rb, d, similarity), each set read once; not for calling directly';

-- simhash_dist_verify(scratch, copies, rows_query, set_of, key_ops,
-- min_similarity): steps 3 and 4 of the verification of the candidates in
-- scratch_cand (x, y, d: each pair both ways, on the shard of x), and the
-- query of step 5.  rows_query gives the rows (k, b, r) of the table that
-- scratch_cand is colocated with: k its key, b its body, r what the verified
-- pairs carry of it (the rank); set_of is the shingle set of t.b; key_ops the
-- key's <, = and > as OPERATOR(...); copies the copy numbers of scratch_fps
-- (simhash_dist_copies), one a worker.  The tables of steps 3 and 4 have one
-- shard a worker, colocated with scratch_fps; the worker of a key is the one
-- that holds its shard of scratch_cand (by Citus's hash of the key and the
-- shards' ranges).
--   3. scratch_sets (c, k, s, r): the worker of each row in a candidate pair
--      builds its set once and keeps it (c, the worker's copy number)
--   4. scratch_verify (c, a, b, d, cb): each pair, a < b, on the worker of a;
--      scratch_need (c, k, w): the keys b whose set is on another worker
--      than a, once for each worker w that lacks it; each such set goes once
--      to w (into scratch_sets, with c = w): pairs whose rows are on one
--      worker move no set
--   5. the query: on each worker, simhash_verify_sets over its sets and its
--      pairs, in memory: the pairs (ka < kb, ra, rb, d, similarity) whose
--      sets have a shingle_similarity of at least min_similarity
CREATE FUNCTION simhash_dist_verify(scratch text, copies integer[], rows_query text, set_of text, key_ops text[], min_similarity float8)
	RETURNS text
	LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
AS $$
DECLARE
	-- the copy number of the worker of each shard of scratch_cand, and the
	-- least hash of each shard but the first, in hash order
	held pg_catalog.int4[];
	bounds pg_catalog.int4[];
	-- the copy number of the worker of the key %s
	home pg_catalog.text;
	nsets pg_catalog.int8;
	nsent pg_catalog.int8;
	-- the types of the key and the rank (k, r), and with their collations
	types pg_catalog.text[];
	collated pg_catalog.text[];
	-- CASE branches: for each copy number, the queries of its worker's sets and pairs
	sets_of pg_catalog.text;
	pairs_of pg_catalog.text;
BEGIN
	SELECT pg_catalog.array_agg(COALESCE(w.c, copies[1]) ORDER BY s.shardminvalue::pg_catalog.int4),
		   (pg_catalog.array_agg(s.shardminvalue::pg_catalog.int4 ORDER BY s.shardminvalue::pg_catalog.int4))[2:]
	  INTO held, bounds
	  FROM pg_catalog.pg_dist_shard AS s
	  LEFT JOIN LATERAL (
		SELECT pg_catalog.min(u.c) AS c
		  FROM pg_catalog.unnest(copies) WITH ORDINALITY AS u(c, i)
		  JOIN (SELECT f.shardid, pg_catalog.row_number() OVER (ORDER BY f.shardid) AS i FROM pg_catalog.pg_dist_shard AS f
				 WHERE f.logicalrelid OPERATOR(pg_catalog.=) (scratch OPERATOR(pg_catalog.||) '_fps')::pg_catalog.regclass) AS f
			ON f.i OPERATOR(pg_catalog.=) u.i
		  JOIN pg_catalog.pg_dist_placement AS fp ON fp.shardid OPERATOR(pg_catalog.=) f.shardid
		  JOIN pg_catalog.pg_dist_placement AS p ON p.groupid OPERATOR(pg_catalog.=) fp.groupid AND p.shardid OPERATOR(pg_catalog.=) s.shardid) AS w ON true
	 WHERE s.logicalrelid OPERATOR(pg_catalog.=) (scratch OPERATOR(pg_catalog.||) '_cand')::pg_catalog.regclass;
	home := pg_catalog.format('(%L::pg_catalog.int4[])[pg_catalog.width_bucket(pg_catalog.worker_hash(%%s), %L::pg_catalog.int4[]) OPERATOR(pg_catalog.+) 1]',
		held, bounds);
	-- 3. the sets, each on the worker of its row
	EXECUTE pg_catalog.format('CREATE UNLOGGED TABLE %1$s_sets AS SELECT 0::pg_catalog.int4 AS c, t.k, %3$s AS s, t.r FROM (%2$s) AS t WITH NO DATA',
		scratch, rows_query, set_of);
	PERFORM pg_catalog.create_distributed_table(scratch OPERATOR(pg_catalog.||) '_sets', 'c', colocate_with => scratch OPERATOR(pg_catalog.||) '_fps');
	EXECUTE pg_catalog.format(
		'INSERT INTO %1$s_sets SELECT %5$s, t.k, %3$s, t.r FROM (%2$s) AS t WHERE t.k %4$s ANY (SELECT c.x FROM %1$s_cand AS c)',
		scratch, rows_query, set_of, key_ops[2], pg_catalog.format(home, 't.k'));
	GET DIAGNOSTICS nsets = ROW_COUNT;
	-- 4. the pairs on the worker of their first row, and the sets that it lacks
	EXECUTE pg_catalog.format(
		'CREATE UNLOGGED TABLE %1$s_verify AS SELECT 0::pg_catalog.int4 AS c, c.x AS a, c.y AS b, c.d, 0::pg_catalog.int4 AS cb FROM %1$s_cand AS c WITH NO DATA', scratch);
	PERFORM pg_catalog.create_distributed_table(scratch OPERATOR(pg_catalog.||) '_verify', 'c', colocate_with => scratch OPERATOR(pg_catalog.||) '_fps');
	EXECUTE pg_catalog.format('INSERT INTO %1$s_verify SELECT %3$s, c.x, c.y, c.d, %4$s FROM %1$s_cand AS c WHERE c.x %2$s c.y',
		scratch, key_ops[1], pg_catalog.format(home, 'c.x'), pg_catalog.format(home, 'c.y'));
	EXECUTE pg_catalog.format(
		'CREATE UNLOGGED TABLE %1$s_need AS SELECT v.cb AS c, v.b AS k, v.c AS w FROM %1$s_verify AS v WITH NO DATA', scratch);
	PERFORM pg_catalog.create_distributed_table(scratch OPERATOR(pg_catalog.||) '_need', 'c', colocate_with => scratch OPERATOR(pg_catalog.||) '_fps');
	-- (grouped by c too: each group is on one worker, and goes worker to worker)
	EXECUTE pg_catalog.format(
		'INSERT INTO %1$s_need SELECT v.cb, v.b, v.c FROM %1$s_verify AS v WHERE v.cb OPERATOR(pg_catalog.<>) v.c GROUP BY v.c, v.cb, v.b', scratch);
	EXECUTE pg_catalog.format(
		'INSERT INTO %1$s_sets SELECT n.w, s.k, s.s, s.r FROM %1$s_need AS n JOIN %1$s_sets AS s ON s.c OPERATOR(pg_catalog.=) n.c AND s.k %2$s n.k',
		scratch, key_ops[2]);
	GET DIAGNOSTICS nsent = ROW_COUNT;
	RAISE DEBUG 'simhash_dist_verify: % shingle sets built, % sent to another worker', nsets, nsent;
	-- 5. on each worker, simhash_verify_sets over its sets and its pairs as
	-- the ctids of their two sets
	SELECT pg_catalog.array_agg(pg_catalog.format_type(a.atttypid, a.atttypmod) ORDER BY a.attname),
		   pg_catalog.array_agg(pg_catalog.format_type(a.atttypid, a.atttypmod) OPERATOR(pg_catalog.||)
			   CASE WHEN o.oid IS NULL THEN '' ELSE pg_catalog.format(' COLLATE %I.%I', n.nspname, o.collname) END ORDER BY a.attname)
	  INTO types, collated
	  FROM pg_catalog.pg_attribute AS a
	  LEFT JOIN pg_catalog.pg_collation AS o ON o.oid OPERATOR(pg_catalog.=) a.attcollation
	  LEFT JOIN pg_catalog.pg_namespace AS n ON n.oid OPERATOR(pg_catalog.=) o.collnamespace
	 WHERE a.attrelid OPERATOR(pg_catalog.=) (scratch OPERATOR(pg_catalog.||) '_sets')::pg_catalog.regclass
	   AND a.attname OPERATOR(pg_catalog.=) ANY ('{k,r}'::pg_catalog.name[]);
	SELECT pg_catalog.string_agg(pg_catalog.format(' WHEN %s THEN %L', u.c, pg_catalog.format(
			   'SELECT s.ctid, s.k, s.r, s.s FROM %1$s AS s', u.sets)), ''),
		   pg_catalog.string_agg(pg_catalog.format(' WHEN %s THEN %L', u.c, pg_catalog.format(
			   'SELECT a.ctid, b.ctid, v.d FROM %2$s AS v JOIN %1$s AS a ON a.k %3$s v.a JOIN %1$s AS b ON b.k %3$s v.b',
			   u.sets, u.pairs, key_ops[2])), '')
	  INTO sets_of, pairs_of
	  FROM (SELECT c.c,
				   pg_catalog.shard_name(t.sets, pg_catalog.get_shard_id_for_distribution_column(t.sets, c.c)) AS sets,
				   pg_catalog.shard_name(t.pairs, pg_catalog.get_shard_id_for_distribution_column(t.pairs, c.c)) AS pairs
			  FROM pg_catalog.unnest(copies) AS c(c),
				   (SELECT (scratch OPERATOR(pg_catalog.||) '_sets')::pg_catalog.regclass AS sets,
						   (scratch OPERATOR(pg_catalog.||) '_verify')::pg_catalog.regclass AS pairs) AS t) AS u;
	RETURN pg_catalog.format(
		'SELECT (p.p).ka::%2$s AS ka, (p.p).ra::%3$s AS ra, (p.p).kb::%2$s AS kb, (p.p).rb::%3$s AS rb, (p.p).d, (p.p).similarity FROM ('
		'  SELECT @extschema@.simhash_verify_sets(CASE x.c%4$s END, CASE x.c%5$s END, %6$s::pg_catalog.float8, NULL::%7$s, NULL::%8$s) AS p '
		'  FROM (SELECT s.c FROM %1$s_sets AS s GROUP BY s.c) AS x) AS p',
		scratch, collated[1], collated[2], sets_of, pairs_of, min_similarity, types[1], types[2]);
END
$$;
COMMENT ON FUNCTION simhash_dist_verify(text, integer[], text, text, text[], float8) IS
	'a step of the distributed whole-table calls: the shingle set of each row in a candidate pair of scratch_cand built once on its worker, each pair on the worker of its first row, the sets that worker lacks sent once each, and the query of the verified pairs there; not for calling directly';

-- simhash_query_distributed(query, tables, id_type, words, max_distance,
-- min_similarity, shingle, units, body_type, rows): what simhash_pairs(),
-- simhash_clusters() and simhash_dedup() (and so every form built on them)
-- run when their query reads a Citus distributed table (tables, in the order
-- of the query's range table) on the coordinator: the rows stay on the
-- workers, and the coordinator receives the (verified) pairs (id_a < id_b,
-- distance, similarity or NULL), and with rows 'rows' or 'collapse' every
-- row (id, its representative, NULL, NULL) in id order, for the linkage that
-- the C function does as on one server; or, for an id of more than one row,
-- that row alone (id, id, -1, NULL).  The query has the shape that the
-- function checked: an id of id_type, a fingerprint of words 64-bit words
-- (simhash, simhash128, or two simhash128 columns), and with a min_similarity
-- a body of body_type (text or bigint[]).
--   1. the query's ids and fingerprints go into scratch_rows, distributed by
--      id, colocated with the first of tables that is distributed by hash on
--      a column of the id's type (an INSERT ... SELECT that Citus pushes down
--      or repartitions, worker to worker), and every row's (id, fingerprint)
--      to every worker (simhash_dist_copies)
--   2. each worker runs one share of simhash_pairs_share() at the session's
--      simhash.pairs_recall over all of them (simhash_dist_candidates); with
--      rows 'collapse' (simhash_clusters and simhash_dedup unverified, which
--      collapse identical fingerprints on one server) over one row per
--      distinct fingerprint, its smallest id, so that the bands are planned
--      for the same rows as on one server
--   3. verified: the candidates both ways to the shards of their rows, and
--      simhash_dist_verify over the query read once more, as on one server,
--      for the bodies of the rows in candidate pairs (the worker of each such
--      row builds its shingle set, and sends it once to each other worker
--      that verifies a pair of it)
CREATE FUNCTION simhash_query_distributed(query text, tables oid[], id_type regtype, words integer, max_distance integer,
										  min_similarity float8, shingle integer, units text, body_type regtype, rows text)
	RETURNS TABLE (id_a bigint, id_b bigint, distance integer, similarity float8)
	LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
AS $$
DECLARE
	scratch pg_catalog.text := (SELECT pg_catalog.format('%I.%I', n.nspname, 'simhash_query_' OPERATOR(pg_catalog.||) pg_catalog.pg_backend_pid())
		FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace
		WHERE c.oid OPERATOR(pg_catalog.=) tables[1]);
	colocate pg_catalog.text;
	wide boolean := words OPERATOR(pg_catalog.=) 4;
	fp_type pg_catalog.text := CASE WHEN words OPERATOR(pg_catalog.=) 1 THEN '@extschema@.simhash' ELSE '@extschema@.simhash128' END;
	fps pg_catalog.text := CASE WHEN words OPERATOR(pg_catalog.=) 4 THEN 'fp0, fp1' ELSE 'fp0' END;
	copies pg_catalog.int4[];
	pairs_query pg_catalog.text;
	verified_query pg_catalog.text;
	rows_of pg_catalog.text := @extschema@.simhash_subquery(query);
	null_id boolean := false;
	repeated pg_catalog.int8;
	ids pg_catalog.int8[];
	reps pg_catalog.int8[];
	n pg_catalog.int8;
	phase pg_catalog.timestamptz := pg_catalog.clock_timestamp();
BEGIN
	SELECT u.t::pg_catalog.regclass::pg_catalog.text INTO colocate
	  FROM pg_catalog.unnest(tables) WITH ORDINALITY AS u(t, o)
	  JOIN pg_catalog.pg_dist_partition AS p ON p.logicalrelid OPERATOR(pg_catalog.=) u.t
	  JOIN pg_catalog.pg_attribute AS a ON a.attrelid OPERATOR(pg_catalog.=) u.t
		AND a.attname OPERATOR(pg_catalog.=) pg_catalog.column_to_column_name(p.logicalrelid, p.partkey)
	 WHERE p.partmethod OPERATOR(pg_catalog.=) 'h' AND a.atttypid OPERATOR(pg_catalog.=) id_type
	 ORDER BY u.o LIMIT 1;
	-- 1. the rows, then (id, fingerprint) on every worker
	EXECUTE pg_catalog.format('CREATE UNLOGGED TABLE %s_rows (id %s, fp0 %s%s)', scratch, id_type, fp_type,
		CASE WHEN wide THEN ', fp1 @extschema@.simhash128' ELSE '' END);
	PERFORM pg_catalog.create_distributed_table(scratch OPERATOR(pg_catalog.||) '_rows', 'id', colocate_with => COALESCE(colocate, 'none'));
	BEGIN
		EXECUTE pg_catalog.format('INSERT INTO %1$s_rows SELECT %2$s FROM (%3$s) AS q(id, %4$s%5$s) WHERE q.id IS NULL OR (q.fp0 IS NOT NULL%6$s)',
			scratch, pg_catalog.replace('q.id, ' OPERATOR(pg_catalog.||) fps, ', ', ', q.'), rows_of, fps,
			CASE WHEN min_similarity IS NOT NULL THEN ', b' ELSE '' END, CASE WHEN wide THEN ' AND q.fp1 IS NOT NULL' ELSE '' END);
	EXCEPTION WHEN null_value_not_allowed THEN
		null_id := true;
	END;
	IF NOT null_id THEN
		EXECUTE pg_catalog.format('SELECT EXISTS (SELECT 1 FROM %s_rows AS r WHERE r.id IS NULL)', scratch) INTO null_id;
	END IF;
	IF null_id THEN
		RAISE EXCEPTION 'query returned a NULL id'
			USING ERRCODE = 'null_value_not_allowed',
				  HINT = 'Every row needs an id; rows with a NULL fingerprint are skipped.';
	END IF;
	-- an id of more than one row: the one row (id, id, -1, NULL), for the caller's error
	EXECUTE pg_catalog.format('SELECT r.id FROM %s_rows AS r GROUP BY r.id HAVING pg_catalog.count(*) OPERATOR(pg_catalog.>) 1 ORDER BY r.id LIMIT 1', scratch)
		INTO repeated;
	IF repeated IS NOT NULL THEN
		RETURN QUERY SELECT repeated, repeated, -1, NULL::pg_catalog.float8;
		EXECUTE pg_catalog.format('DROP TABLE %s_rows', scratch);
		RETURN;
	END IF;
	copies := @extschema@.simhash_dist_copies(scratch, pg_catalog.format(CASE WHEN wide THEN 'fp0 %1$s, fp1 %1$s' ELSE 'fp0 %1$s' END, fp_type));
	EXECUTE pg_catalog.format('INSERT INTO %1$s_fps SELECT c.c, r.id, %2$s FROM %1$s_rows AS r CROSS JOIN pg_catalog.unnest(%3$L::pg_catalog.int4[]) AS c(c)',
		scratch, pg_catalog.replace('r.' OPERATOR(pg_catalog.||) fps, ', ', ', r.'), copies);
	GET DIAGNOSTICS n = ROW_COUNT;
	RAISE DEBUG 'simhash_query_distributed: % rows with a fingerprint, % copies, in % s', n OPERATOR(pg_catalog./) pg_catalog.cardinality(copies),
		pg_catalog.cardinality(copies), pg_catalog.round(pg_catalog.date_part('epoch', pg_catalog.clock_timestamp() OPERATOR(pg_catalog.-) phase)::pg_catalog.numeric, 1);
	phase := pg_catalog.clock_timestamp();

	-- 2. the candidates; the rows first, in id order, from one copy
	pairs_query := @extschema@.simhash_dist_candidates(scratch, copies,
		CASE WHEN rows OPERATOR(pg_catalog.=) 'collapse' THEN pg_catalog.format('SELECT pg_catalog.min(id), %1$s FROM %%s WHERE c = %%s GROUP BY %1$s', fps)
			 ELSE pg_catalog.format('SELECT id, %s FROM %%s WHERE c = %%s', fps) END,
		max_distance, pg_catalog.current_setting('simhash.pairs_recall')::pg_catalog.float8);
	IF rows OPERATOR(pg_catalog.<>) 'pairs' THEN
		-- (as arrays of up to 65,536 ids from one worker, and with 'collapse'
		-- their representatives: 12 bytes an id in the binary protocol, 24)
		FOR ids, reps IN EXECUTE pg_catalog.format(
			'SELECT pg_catalog.array_agg(f.id ORDER BY f.id), %s '
			'FROM (SELECT f.id, %s AS r FROM %s_fps AS f WHERE f.c OPERATOR(pg_catalog.=) %s) AS f GROUP BY f.id OPERATOR(pg_catalog.>>) 16 ORDER BY 1',
			CASE WHEN rows OPERATOR(pg_catalog.=) 'collapse' THEN 'pg_catalog.array_agg(f.r ORDER BY f.id)' ELSE 'NULL::pg_catalog.int8[]' END,
			CASE WHEN rows OPERATOR(pg_catalog.=) 'collapse' THEN pg_catalog.format('pg_catalog.min(f.id) OVER (PARTITION BY %s)', pg_catalog.replace('f.' OPERATOR(pg_catalog.||) fps, ', ', ', f.'))
				 ELSE 'NULL::pg_catalog.int8' END,
			scratch, copies[1])
		LOOP
			RETURN QUERY SELECT u.id, COALESCE(u.r, u.id), NULL::pg_catalog.int4, NULL::pg_catalog.float8 FROM ROWS FROM (pg_catalog.unnest(ids), pg_catalog.unnest(reps)) AS u(id, r);
		END LOOP;
	END IF;
	IF min_similarity IS NULL THEN
		RETURN QUERY EXECUTE pg_catalog.format('SELECT p.a, p.b, p.d, NULL::pg_catalog.float8 FROM (%s) AS p', pairs_query);
	ELSE
		-- 3. verified on the workers
		EXECUTE pg_catalog.format('CREATE UNLOGGED TABLE %1$s_cand (x %2$s, y %2$s, d pg_catalog.int4)', scratch, id_type);
		PERFORM pg_catalog.create_distributed_table(scratch OPERATOR(pg_catalog.||) '_cand', 'x', colocate_with => scratch OPERATOR(pg_catalog.||) '_rows');
		EXECUTE pg_catalog.format('INSERT INTO %1$s_cand SELECT u.x, u.y, p.d FROM (%2$s) AS p CROSS JOIN LATERAL (VALUES (p.a, p.b), (p.b, p.a)) AS u(x, y)',
			scratch, pairs_query);
		GET DIAGNOSTICS n = ROW_COUNT;
		RAISE DEBUG 'simhash_query_distributed: % candidates within % bits in % s', n OPERATOR(pg_catalog./) 2, max_distance,
			pg_catalog.round(pg_catalog.date_part('epoch', pg_catalog.clock_timestamp() OPERATOR(pg_catalog.-) phase)::pg_catalog.numeric, 1);
		phase := pg_catalog.clock_timestamp();
		verified_query := @extschema@.simhash_dist_verify(scratch, copies,
			pg_catalog.format('SELECT q.id::%s AS k, q.b, NULL::pg_catalog.int4 AS r FROM (%s) AS q(id, %s, b) WHERE q.b IS NOT NULL', id_type, rows_of, fps),
			CASE WHEN body_type OPERATOR(pg_catalog.=) 'bigint[]'::pg_catalog.regtype THEN 't.b'
				 ELSE pg_catalog.format('@extschema@.shingle_set(t.b::pg_catalog.text, %s, %L)', shingle, units) END,
			'{OPERATOR(pg_catalog.<),OPERATOR(pg_catalog.=),OPERATOR(pg_catalog.>)}', min_similarity);
		RETURN QUERY EXECUTE pg_catalog.format('SELECT v.ka::pg_catalog.int8, v.kb::pg_catalog.int8, v.d, v.similarity FROM (%s) AS v', verified_query);
		GET DIAGNOSTICS n = ROW_COUNT;
		RAISE DEBUG 'simhash_query_distributed: % verified pairs at similarity % in % s', n, min_similarity,
			pg_catalog.round(pg_catalog.date_part('epoch', pg_catalog.clock_timestamp() OPERATOR(pg_catalog.-) phase)::pg_catalog.numeric, 1);
		EXECUTE pg_catalog.format('DROP TABLE %1$s_cand, %1$s_sets, %1$s_verify, %1$s_need', scratch);
	END IF;
	EXECUTE pg_catalog.format('DROP TABLE %1$s_fps, %1$s_rows', scratch);
END
$$;
COMMENT ON FUNCTION simhash_query_distributed(text, oid[], regtype, integer, integer, float8, integer, text, regtype, text) IS
	'what simhash_pairs(), simhash_clusters() and simhash_dedup() run on the coordinator when their query reads a Citus distributed table: the rows, candidates and verification on the workers, the (verified) pairs and with rows ''rows'' or ''collapse'' every row''s id and representative to the coordinator; not for calling directly';

-- simhash_mark_distributed(tbl, key_column, body_column, min_similarity,
-- radius, rank, id_bits): the duplicates of simhash_mark_duplicates() on a
-- table that Citus distributes by its primary key, found on the workers, into
-- pg_temp.simhash_mark_dups (k, kept); returns their number.  The table is
-- locked against writes (SHARE ROW EXCLUSIVE) for the transaction: every step
-- reads the same rows.  Keys are compared by the equality and order of the
-- primary key's operator family, and keep their type, typmod and collation.
-- Each step is a distributed statement (the scratch tables are unlogged
-- distributed tables in tbl's schema, dropped at the end):
--   0. the rows are enumerated by bigint ids: an integer key is its own id;
--      another key's id is its hash (the type's extended hash function, or
--      the hash of its text for a type without one; id_bits bits, 63 but for
--      tests), and the keys that share a hash get negative ids in key order,
--      held in a table beside tbl's shards; the map of ids to keys stays on
--      the workers, distributed by id (a shard a worker)
--   1. every worker fingerprints its shards and sends (id, fp0, fp1) of each
--      row with content to every worker: one shard per worker of a table
--      distributed by a copy number (a repartitioned INSERT .. SELECT)
--   2. each worker runs one share of simhash_pairs() over all of them (the
--      bands of the single-node plan, split); each candidate pair goes to
--      the shards of both its rows (repartitioned, keys only; by way of the
--      map when the ids are not the keys)
--   3. the worker of a row in a candidate pair builds its shingle set once
--   4. each pair goes to the worker of its smaller key, and the set of its
--      larger key too when that row is on another worker: once for each
--      row and worker that lacks it (simhash_dist_verify)
--   5. that worker verifies (shingle_similarity of the sets); only the
--      verified pairs, with their ranks, reach the coordinator
--   6. the coordinator links them ('center' in (rank, key) order)
CREATE FUNCTION simhash_mark_distributed(tbl regclass, key_column name, body_column name,
										 min_similarity float8, radius integer, rank text, id_bits integer DEFAULT 63)
	RETURNS bigint
	LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
AS $$
DECLARE
	-- the scratch tables: tbl's schema, the backend's pid
	scratch pg_catalog.text := (SELECT pg_catalog.format('%I.%I', n.nspname, 'simhash_mark_' OPERATOR(pg_catalog.||) pg_catalog.pg_backend_pid())
		FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace
		WHERE c.oid OPERATOR(pg_catalog.=) tbl);
	rows_query pg_catalog.text;
	-- the key's <, = and > of its primary key's operator family, as OPERATOR(...)
	key_ops pg_catalog.text[];
	-- the id of the row t: its key, or its hash (or s.id, a hash it shares)
	id_of pg_catalog.text;
	-- the rows of step 1: t, joined to the keys that share a hash
	fps_from pg_catalog.text := tbl::pg_catalog.text OPERATOR(pg_catalog.||) ' AS t';
	key_type pg_catalog.regtype := (SELECT a.atttypid FROM pg_catalog.pg_attribute AS a
		WHERE a.attrelid OPERATOR(pg_catalog.=) tbl AND a.attname OPERATOR(pg_catalog.=) key_column);
	mapped boolean := NOT key_type OPERATOR(pg_catalog.=) ANY ('{int2,int4,int8}'::pg_catalog.regtype[]);
	shared pg_catalog.text;
	nshared pg_catalog.int8 := 0;
	-- the keys' hash, of t.%I
	hash_of pg_catalog.text;
	pairs_query pg_catalog.text;
	nworkers pg_catalog.int4;
	copies pg_catalog.int4[];
	nrows pg_catalog.int8;
	npairs pg_catalog.int8;
	nnodes pg_catalog.int8;
	dropped boolean[];
	kept pg_catalog.int8[];
	lo pg_catalog.int8;
	hi pg_catalog.int8;
	marked pg_catalog.int8;
	phase pg_catalog.timestamptz;
BEGIN
	IF NOT id_bits OPERATOR(pg_catalog.>=) 1 OR NOT id_bits OPERATOR(pg_catalog.<=) 63 THEN
		RAISE EXCEPTION 'id_bits must be between 1 and 63, not %', id_bits
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	-- writers wait for the call: the steps read the table in several statements
	IF NOT pg_catalog.has_table_privilege(tbl, 'UPDATE, DELETE, TRUNCATE') THEN
		RAISE EXCEPTION 'permission denied for table %', tbl
			USING ERRCODE = 'insufficient_privilege',
				  DETAIL = 'On a table that Citus distributes, the call locks the table against writes (LOCK TABLE ... IN SHARE ROW EXCLUSIVE MODE) until its transaction ends.',
				  HINT = 'The lock takes UPDATE, DELETE or TRUNCATE on the table itself; UPDATE on the mark column alone is not enough.';
	END IF;
	EXECUTE pg_catalog.format('LOCK TABLE %s IN SHARE ROW EXCLUSIVE MODE', tbl);
	SELECT pg_catalog.array_agg(pg_catalog.format('OPERATOR(%I.%s)', n.nspname, o.oprname) ORDER BY p.amopstrategy) INTO key_ops
	  FROM pg_catalog.pg_index AS i
	  JOIN pg_catalog.pg_opclass AS c ON c.oid OPERATOR(pg_catalog.=) i.indclass[0]
	  JOIN pg_catalog.pg_amop AS p ON p.amopfamily OPERATOR(pg_catalog.=) c.opcfamily
		AND p.amoplefttype OPERATOR(pg_catalog.=) c.opcintype AND p.amoprighttype OPERATOR(pg_catalog.=) c.opcintype
		AND p.amopstrategy OPERATOR(pg_catalog.=) ANY ('{1,3,5}'::pg_catalog.int2[])
	  JOIN pg_catalog.pg_operator AS o ON o.oid OPERATOR(pg_catalog.=) p.amopopr
	  JOIN pg_catalog.pg_namespace AS n ON n.oid OPERATOR(pg_catalog.=) o.oprnamespace
	 WHERE i.indrelid OPERATOR(pg_catalog.=) tbl AND i.indisprimary;
	-- a row of the table as the steps below read it: its key, body and rank
	rows_query := pg_catalog.format('SELECT t.%1$I AS k, t.%2$I::pg_catalog.text AS b, %3$s AS r FROM %4$s AS t',
		key_column, body_column,
		CASE WHEN rank IS NULL THEN 'NULL::pg_catalog.int4' ELSE '(' OPERATOR(pg_catalog.||) rank OPERATOR(pg_catalog.||) ')' END, tbl);
	-- the candidates, both ways (x, y) on the shard of x: keys of tbl's type and collation
	EXECUTE pg_catalog.format('CREATE UNLOGGED TABLE %1$s_cand AS SELECT t.k AS x, t.k AS y, 0::pg_catalog.int4 AS d FROM (%2$s) AS t WITH NO DATA', scratch, rows_query);
	PERFORM pg_catalog.create_distributed_table(scratch OPERATOR(pg_catalog.||) '_cand', 'x', colocate_with => tbl::pg_catalog.text);
	SELECT pg_catalog.count(*)::pg_catalog.int4 INTO nworkers FROM pg_catalog.citus_get_active_worker_nodes();

	-- 0. the ids
	phase := pg_catalog.clock_timestamp();
	IF mapped THEN
		-- the type's own extended hash when it has one (a NULL tells), else its text's
		BEGIN
			EXECUTE pg_catalog.format('SELECT pg_catalog.hash_record_extended(ROW(NULL::%s), 0)', key_type);
			hash_of := 'pg_catalog.hash_record_extended(ROW(t.%I), 0)';
		EXCEPTION WHEN undefined_function THEN
			hash_of := 'pg_catalog.hashtextextended(t.%I::pg_catalog.text, 0)';
		END;
		id_of := pg_catalog.format('(%s OPERATOR(pg_catalog.&) %s)', pg_catalog.format(hash_of, key_column),
			9223372036854775807::pg_catalog.int8 OPERATOR(pg_catalog.>>) (63 OPERATOR(pg_catalog.-) id_bits));
		EXECUTE pg_catalog.format('CREATE UNLOGGED TABLE %1$s_ids AS SELECT 0::pg_catalog.int8 AS id, t.k FROM (%2$s) AS t WITH NO DATA', scratch, rows_query);
		-- (one shard per worker, as the fingerprints: few tasks to repartition)
		PERFORM pg_catalog.create_distributed_table(scratch OPERATOR(pg_catalog.||) '_ids', 'id', shard_count => GREATEST(nworkers, 1), colocate_with => 'none');
		EXECUTE pg_catalog.format('INSERT INTO %1$s_ids SELECT %2$s, t.%3$I FROM %4$s AS t WHERE t.%5$I IS NOT NULL',
			scratch, id_of, key_column, tbl, body_column);
		-- the keys that share a hash (none, nearly always): -1, -2, ... in key
		-- order, in a table colocated with tbl (step 1 joins it) and in the map
		shared := pg_catalog.format('SELECT j.id FROM %1$s_ids AS j GROUP BY j.id HAVING pg_catalog.count(*) OPERATOR(pg_catalog.>) 1', scratch);
		EXECUTE pg_catalog.format('SELECT pg_catalog.count(*) FROM %1$s_ids AS i WHERE i.id OPERATOR(pg_catalog.=) ANY (%2$s)', scratch, shared)
		   INTO nshared;
		IF nshared OPERATOR(pg_catalog.>) 0 THEN
			EXECUTE pg_catalog.format('CREATE UNLOGGED TABLE %1$s_shared AS SELECT t.k, 0::pg_catalog.int8 AS id FROM (%2$s) AS t WITH NO DATA', scratch, rows_query);
			PERFORM pg_catalog.create_distributed_table(scratch OPERATOR(pg_catalog.||) '_shared', 'k', colocate_with => tbl::pg_catalog.text);
			EXECUTE pg_catalog.format(
				'INSERT INTO %1$s_shared SELECT s.k, OPERATOR(pg_catalog.-) pg_catalog.row_number() OVER (ORDER BY s.k USING %3$s) '
				'FROM (SELECT i.k FROM %1$s_ids AS i WHERE i.id OPERATOR(pg_catalog.=) ANY (%2$s) OFFSET 0) AS s',
				scratch, shared, key_ops[1]);
			EXECUTE pg_catalog.format('DELETE FROM %1$s_ids AS i WHERE i.id OPERATOR(pg_catalog.=) ANY (%2$s)', scratch, shared);
			EXECUTE pg_catalog.format('INSERT INTO %1$s_ids SELECT s.id, s.k FROM %1$s_shared AS s', scratch);
			id_of := pg_catalog.format('COALESCE(s.id, %s)', id_of);
			fps_from := pg_catalog.format('%s AS t LEFT JOIN %s_shared AS s ON s.k %s t.%I', tbl, scratch, key_ops[2], key_column);
		END IF;
		RAISE DEBUG 'simhash_mark_duplicates: ids of the keys, % shared a hash, in % s', nshared,
			pg_catalog.round(pg_catalog.date_part('epoch', pg_catalog.clock_timestamp() OPERATOR(pg_catalog.-) phase)::pg_catalog.numeric, 1);
	ELSE
		id_of := pg_catalog.format('t.%I::pg_catalog.int8', key_column);
	END IF;

	-- 1. the fingerprints, one copy per worker
	phase := pg_catalog.clock_timestamp();
	copies := @extschema@.simhash_dist_copies(scratch, 'fp0 @extschema@.simhash128, fp1 @extschema@.simhash128');
	EXECUTE pg_catalog.format(
		'INSERT INTO %1$s_fps SELECT c.c, %2$s, f[1], f[2] '
		'FROM %3$s CROSS JOIN LATERAL @extschema@.shingle_simhash256(t.%4$I::pg_catalog.text, 3, ''auto''::pg_catalog.text) AS x(f) '
		'CROSS JOIN pg_catalog.unnest(%5$L::pg_catalog.int4[]) AS c(c) '
		'WHERE t.%4$I IS NOT NULL AND CASE WHEN f[1] OPERATOR(@extschema@.=) ''00000000000000000000000000000000''::@extschema@.simhash128 '
		'            AND f[2] OPERATOR(@extschema@.=) ''00000000000000000000000000000000''::@extschema@.simhash128 '
		'       THEN pg_catalog.cardinality(@extschema@.shingle_set(t.%4$I::pg_catalog.text, 3, ''auto''::pg_catalog.text)) OPERATOR(pg_catalog.>) 0 ELSE true END',
		scratch, id_of, fps_from, body_column, copies);
	GET DIAGNOSTICS nrows = ROW_COUNT;
	nrows := nrows OPERATOR(pg_catalog./) pg_catalog.cardinality(copies);
	RAISE DEBUG 'simhash_mark_duplicates: fingerprints of % rows with content, % copies, in % s', nrows, pg_catalog.cardinality(copies),
		pg_catalog.round(pg_catalog.date_part('epoch', pg_catalog.clock_timestamp() OPERATOR(pg_catalog.-) phase)::pg_catalog.numeric, 1);

	-- 2. the candidates: share s on the shard of copy copies[s + 1], each pair
	-- (a, b) of ids once; then both ways, as keys, on the shards of their rows
	phase := pg_catalog.clock_timestamp();
	pairs_query := @extschema@.simhash_dist_candidates(scratch, copies, 'SELECT id, fp0, fp1 FROM %s WHERE c = %s', radius,
		CASE WHEN nrows OPERATOR(pg_catalog.>=) 1000 THEN 0.99 ELSE 1 END);
	IF nrows OPERATOR(pg_catalog.<) 2 THEN
		npairs := 0;
	ELSIF mapped THEN
		-- (a, b) on the shard of the map that holds a; (b, the key of a) on
		-- the one that holds b; then both keys
		EXECUTE pg_catalog.format('CREATE UNLOGGED TABLE %1$s_pairs (a pg_catalog.int8, b pg_catalog.int8, d pg_catalog.int4)', scratch);
		PERFORM pg_catalog.create_distributed_table(scratch OPERATOR(pg_catalog.||) '_pairs', 'a', colocate_with => scratch OPERATOR(pg_catalog.||) '_ids');
		EXECUTE pg_catalog.format('INSERT INTO %1$s_pairs %2$s', scratch, pairs_query);
		EXECUTE pg_catalog.format(
			'CREATE UNLOGGED TABLE %1$s_half AS SELECT p.b, i.k AS ka, p.d FROM %1$s_pairs AS p JOIN %1$s_ids AS i ON i.id OPERATOR(pg_catalog.=) p.a WITH NO DATA', scratch);
		PERFORM pg_catalog.create_distributed_table(scratch OPERATOR(pg_catalog.||) '_half', 'b', colocate_with => scratch OPERATOR(pg_catalog.||) '_ids');
		EXECUTE pg_catalog.format(
			'INSERT INTO %1$s_half SELECT p.b, i.k, p.d FROM %1$s_pairs AS p JOIN %1$s_ids AS i ON i.id OPERATOR(pg_catalog.=) p.a', scratch);
		EXECUTE pg_catalog.format(
			'INSERT INTO %1$s_cand SELECT u.x, u.y, h.d FROM %1$s_half AS h JOIN %1$s_ids AS i ON i.id OPERATOR(pg_catalog.=) h.b '
			'CROSS JOIN LATERAL (VALUES (h.ka, i.k), (i.k, h.ka)) AS u(x, y)', scratch);
		GET DIAGNOSTICS npairs = ROW_COUNT;
		EXECUTE pg_catalog.format('DROP TABLE %1$s_pairs, %1$s_half', scratch);
	ELSE
		EXECUTE pg_catalog.format('INSERT INTO %1$s_cand SELECT u.x, u.y, p.d FROM (%2$s) AS p CROSS JOIN LATERAL (VALUES (p.a, p.b), (p.b, p.a)) AS u(x, y)',
			scratch, pairs_query);
		GET DIAGNOSTICS npairs = ROW_COUNT;
	END IF;
	RAISE DEBUG 'simhash_mark_duplicates: % candidates within % bits, % in % s', npairs OPERATOR(pg_catalog./) 2, radius,
		CASE WHEN nrows OPERATOR(pg_catalog.>=) 1000 THEN 'bands at recall 0.99' ELSE 'exact' END,
		pg_catalog.round(pg_catalog.date_part('epoch', pg_catalog.clock_timestamp() OPERATOR(pg_catalog.-) phase)::pg_catalog.numeric, 1);
	-- 3.-5. the shingle sets, sent and verified on the workers; the verified pairs with their ranks to the coordinator
	phase := pg_catalog.clock_timestamp();
	EXECUTE pg_catalog.format('CREATE TEMPORARY TABLE simhash_mark_pairs AS SELECT v.ka, v.ra, v.kb, v.rb FROM (%s) AS v',
		@extschema@.simhash_dist_verify(scratch, copies, rows_query, '@extschema@.shingle_set(t.b, 3, ''auto''::pg_catalog.text)', key_ops, min_similarity));
	GET DIAGNOSTICS npairs = ROW_COUNT;
	EXECUTE pg_catalog.format('DROP TABLE %1$s_fps, %1$s_cand, %1$s_sets, %1$s_verify, %1$s_need', scratch);
	IF mapped THEN
		EXECUTE pg_catalog.format('DROP TABLE %1$s_ids', scratch);
		IF nshared OPERATOR(pg_catalog.>) 0 THEN
			EXECUTE pg_catalog.format('DROP TABLE %1$s_shared', scratch);
		END IF;
	END IF;
	RAISE DEBUG 'simhash_mark_duplicates: % verified pairs at similarity % in % s', npairs, min_similarity,
		pg_catalog.round(pg_catalog.date_part('epoch', pg_catalog.clock_timestamp() OPERATOR(pg_catalog.-) phase)::pg_catalog.numeric, 1);

	-- 6. 'center': the rows of the pairs numbered in (rank, key) order; in
	-- the order of (later, earlier) row, a later row not yet dropped is
	-- dropped for the earliest kept row it pairs with
	phase := pg_catalog.clock_timestamp();
	EXECUTE pg_catalog.format(
		'CREATE TEMPORARY TABLE simhash_mark_nodes AS '
		'SELECT pg_catalog.row_number() OVER (ORDER BY s.r NULLS LAST, s.k USING %1$s) AS n, s.k FROM ('
		'  SELECT DISTINCT ON (u.k) u.k, u.r FROM (SELECT p.ka AS k, p.ra AS r FROM pg_temp.simhash_mark_pairs AS p'
		'                                          UNION ALL SELECT p.kb, p.rb FROM pg_temp.simhash_mark_pairs AS p) AS u'
		'  ORDER BY u.k USING %1$s) AS s',
		key_ops[1]);
	GET DIAGNOSTICS nnodes = ROW_COUNT;
	dropped := pg_catalog.array_fill(false, ARRAY[nnodes::pg_catalog.int4]);
	kept := pg_catalog.array_fill(NULL::pg_catalog.int8, ARRAY[nnodes::pg_catalog.int4]);
	FOR lo, hi IN EXECUTE pg_catalog.format(
		'SELECT LEAST(a.n, b.n), GREATEST(a.n, b.n) FROM pg_temp.simhash_mark_pairs AS p '
		'  JOIN pg_temp.simhash_mark_nodes AS a ON a.k %1$s p.ka '
		'  JOIN pg_temp.simhash_mark_nodes AS b ON b.k %1$s p.kb '
		' ORDER BY 2, 1',
		key_ops[2])
	LOOP
		CONTINUE WHEN dropped[hi] OR dropped[lo];
		dropped[hi] := true;
		kept[hi] := lo;
	END LOOP;
	CREATE TEMPORARY TABLE simhash_mark_dups AS
	SELECT a.k, b.k AS kept FROM pg_catalog.unnest(kept) WITH ORDINALITY AS d(kept, n)
	  JOIN pg_temp.simhash_mark_nodes AS a ON a.n OPERATOR(pg_catalog.=) d.n
	  JOIN pg_temp.simhash_mark_nodes AS b ON b.n OPERATOR(pg_catalog.=) d.kept;
	GET DIAGNOSTICS marked = ROW_COUNT;
	DROP TABLE pg_temp.simhash_mark_pairs, pg_temp.simhash_mark_nodes;
	RAISE DEBUG 'simhash_mark_duplicates: % duplicates linked on the coordinator in % s', marked,
		pg_catalog.round(pg_catalog.date_part('epoch', pg_catalog.clock_timestamp() OPERATOR(pg_catalog.-) phase)::pg_catalog.numeric, 1);
	RETURN marked;
END
$$;
COMMENT ON FUNCTION simhash_mark_distributed(regclass, name, name, float8, integer, text, integer) IS
	'the step of simhash_mark_duplicates() that finds the duplicates of a Citus table distributed by its primary key on the workers, into pg_temp.simhash_mark_dups (k, kept), the table locked against writes for the transaction, the rows enumerated by their integer key or by a hash of id_bits bits of the key (its type''s extended hash, or its text''s; 63 bits, fewer only to test keys that share a hash); not for calling directly';

-- simhash_mark_duplicates(tbl, body_column, mark_column, min_similarity,
-- rank) sets mark_column to the primary key of the kept row for every row
-- whose text is a near-duplicate of a kept row, and to NULL on every other
-- row (a rerun clears the marks of rows that are no longer duplicates).  It
-- runs with the caller's privileges: PostgreSQL checks SELECT on the key, the
-- body, the mark and what rank reads, UPDATE on the mark, and TEMP on the
-- database (two temporary tables, dropped at the end).
--   fingerprint  256 bits: shingle_simhash256(body, 3, 'auto'), that is
--                shingle_simhash128(body, 3, 'auto', 0) and (..., 1)
--   candidates   within simhash_similarity_radius(min_similarity) bits (the
--                least distance within which 99.5% of the pairs with a
--                Jaccard similarity of at least min_similarity lie on the
--                public corpus, at steps of 0.05; between steps the radius of
--                the step below); the exact tables below 1,000 rows, bands
--                (simhash.pairs_recall = 0.99) from 1,000 rows on
--   verified     shingle_similarity(a, b, 3, 'auto') >= min_similarity
--   linkage      'center' in the order of rank (lowest first, NULL last),
--                then of the key: the engine of simhash_dedup, on the rows
--                numbered in that order
-- NULL bodies and bodies without shingles (no letter or digit) are never
-- marked and never kept for another row.  work_mem is maintenance_work_mem
-- for the call (the SET clauses make the settings the call changes its
-- own); the engines spill to temporary files beyond it.
CREATE FUNCTION simhash_mark_duplicates(tbl regclass, body_column name, mark_column name,
										min_similarity float8 DEFAULT 0.8, rank text DEFAULT NULL)
	RETURNS bigint
	LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
	SET simhash.pairs_recall = 1 SET work_mem = '64MB'
AS $$
DECLARE
	radius pg_catalog.int4;
	key_column name;
	key_type pg_catalog.regtype;
	key_eq pg_catalog.text;
	key_opclass pg_catalog.text;
	body_type pg_catalog.regtype;
	base_type pg_catalog.oid;
	next_type pg_catalog.oid;
	mark_type pg_catalog.regtype;
	mark_generated boolean;
	nkeys pg_catalog.int4;
	nrows pg_catalog.int8;
	marked pg_catalog.int8;
	changed pg_catalog.int8;
	cleared pg_catalog.int8;
	started pg_catalog.timestamptz := pg_catalog.clock_timestamp();
	phase pg_catalog.timestamptz;
	distributed boolean := pg_catalog.to_regclass('pg_catalog.pg_dist_partition') IS NOT NULL;
	fingerprint_plan pg_catalog.jsonb;
BEGIN
	IF tbl IS NULL OR body_column IS NULL OR mark_column IS NULL OR min_similarity IS NULL THEN
		RAISE EXCEPTION 'tbl, body_column, mark_column and min_similarity must not be NULL'
			USING ERRCODE = 'null_value_not_allowed';
	END IF;
	IF NOT (min_similarity OPERATOR(pg_catalog.>=) 0.5 AND min_similarity OPERATOR(pg_catalog.<=) 1) THEN
		RAISE EXCEPTION 'min_similarity must be between 0.5 and 1, not %', min_similarity
			USING ERRCODE = 'invalid_parameter_value',
				  HINT = 'min_similarity is the least shingle_similarity of a duplicate to its kept row; 0.8 is the default.';
	END IF;
	IF rank IS NOT NULL AND pg_catalog.strpos(rank, ';') OPERATOR(pg_catalog.>) 0 THEN
		RAISE EXCEPTION 'rank must be one expression, without a semicolon'
			USING ERRCODE = 'syntax_error',
				  HINT = 'rank is an expression over the table''s columns, such as created_at or -length(body); write a semicolon in a string as chr(59).';
	END IF;

	-- the primary key: one column, and the equality of its index's operator family
	SELECT pg_catalog.count(*) OVER (), a.attname, a.atttypid::pg_catalog.regtype,
		   pg_catalog.format('%I.%s', n.nspname, o.oprname), pg_catalog.format('%I.%I', cn.nspname, c.opcname)
	  INTO nkeys, key_column, key_type, key_eq, key_opclass
	  FROM pg_catalog.pg_index i
	  JOIN pg_catalog.pg_attribute a ON a.attrelid OPERATOR(pg_catalog.=) i.indrelid
		AND a.attnum OPERATOR(pg_catalog.=) ANY (i.indkey::pg_catalog.int2[])
	  JOIN pg_catalog.pg_opclass c ON c.oid OPERATOR(pg_catalog.=) i.indclass[0]
	  JOIN pg_catalog.pg_amop p ON p.amopfamily OPERATOR(pg_catalog.=) c.opcfamily
		AND p.amoplefttype OPERATOR(pg_catalog.=) c.opcintype AND p.amoprighttype OPERATOR(pg_catalog.=) c.opcintype
		AND p.amopstrategy OPERATOR(pg_catalog.=) 3
	  JOIN pg_catalog.pg_operator o ON o.oid OPERATOR(pg_catalog.=) p.amopopr
	  JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) o.oprnamespace
	  JOIN pg_catalog.pg_namespace cn ON cn.oid OPERATOR(pg_catalog.=) c.opcnamespace
	 WHERE i.indrelid OPERATOR(pg_catalog.=) tbl AND i.indisprimary
	 LIMIT 1;
	IF key_column IS NULL THEN
		RAISE EXCEPTION 'table % has no primary key', tbl
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  HINT = 'The mark of a duplicate is the primary key of its kept row: add a primary key of one column (ALTER TABLE ... ADD PRIMARY KEY, or ADD COLUMN id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY).';
	END IF;
	IF nkeys OPERATOR(pg_catalog.>) 1 THEN
		RAISE EXCEPTION 'the primary key of table % has % columns', tbl, nkeys
			USING ERRCODE = 'feature_not_supported',
				  DETAIL = 'The mark of a duplicate is the primary key of its kept row, in one column of the key''s type.',
				  HINT = 'Add a key of one column (ADD COLUMN id bigint GENERATED ALWAYS AS IDENTITY UNIQUE, made the primary key), or run simhash_dedup_keyed on a query of the table with the key as one row value.';
	END IF;

	SELECT a.atttypid::pg_catalog.regtype INTO body_type FROM pg_catalog.pg_attribute a
	 WHERE a.attrelid OPERATOR(pg_catalog.=) tbl AND a.attname OPERATOR(pg_catalog.=) body_column
	   AND a.attnum OPERATOR(pg_catalog.>) 0 AND NOT a.attisdropped;
	IF body_type IS NULL THEN
		RAISE EXCEPTION 'column % of relation % does not exist', pg_catalog.quote_ident(body_column), tbl
			USING ERRCODE = 'undefined_column';
	END IF;
	base_type := body_type;
	LOOP
		SELECT y.typbasetype INTO next_type FROM pg_catalog.pg_type y WHERE y.oid OPERATOR(pg_catalog.=) base_type;
		EXIT WHEN next_type OPERATOR(pg_catalog.=) 0;
		base_type := next_type;
	END LOOP;
	IF NOT base_type OPERATOR(pg_catalog.=) ANY ('{text,varchar,bpchar}'::pg_catalog.regtype[]) THEN
		RAISE EXCEPTION 'column % of relation % has type %, not text', pg_catalog.quote_ident(body_column), tbl, body_type
			USING ERRCODE = 'datatype_mismatch',
				  HINT = 'The body column is text, varchar or char; store a text column of what to compare.';
	END IF;
	SELECT a.atttypid::pg_catalog.regtype, a.attgenerated OPERATOR(pg_catalog.<>) '' INTO mark_type, mark_generated
	  FROM pg_catalog.pg_attribute a
	 WHERE a.attrelid OPERATOR(pg_catalog.=) tbl AND a.attname OPERATOR(pg_catalog.=) mark_column
	   AND a.attnum OPERATOR(pg_catalog.>) 0 AND NOT a.attisdropped;
	IF mark_type IS NULL THEN
		RAISE EXCEPTION 'column % of relation % does not exist', pg_catalog.quote_ident(mark_column), tbl
			USING ERRCODE = 'undefined_column',
				  HINT = pg_catalog.format('Add it with ALTER TABLE %s ADD COLUMN %I %s.', tbl, mark_column, key_type);
	END IF;
	IF mark_type OPERATOR(pg_catalog.<>) key_type THEN
		RAISE EXCEPTION 'column % of relation % has type %, the primary key % has type %',
			pg_catalog.quote_ident(mark_column), tbl, mark_type, pg_catalog.quote_ident(key_column), key_type
			USING ERRCODE = 'datatype_mismatch',
				  HINT = pg_catalog.format('The mark is the key of the kept row: make it a column of type %s.', key_type);
	END IF;
	IF mark_column OPERATOR(pg_catalog.=) key_column OR mark_column OPERATOR(pg_catalog.=) body_column OR mark_generated THEN
		RAISE EXCEPTION 'column % of relation % cannot be the mark', pg_catalog.quote_ident(mark_column), tbl
			USING ERRCODE = 'invalid_parameter_value',
				  HINT = 'The mark is a column of its own, neither the key, nor the body, nor a generated column.';
	END IF;

	radius := @extschema@.simhash_similarity_radius(min_similarity);
	PERFORM pg_catalog.set_config('work_mem', pg_catalog.current_setting('maintenance_work_mem'), true);

	-- a table that Citus distributes by its key: the duplicates found on the workers
	IF distributed THEN
		EXECUTE 'SELECT pg_catalog.bool_or(p.partmethod OPERATOR(pg_catalog.=) ''h'') FROM pg_catalog.pg_dist_partition AS p '
				'WHERE p.logicalrelid OPERATOR(pg_catalog.=) $1' INTO distributed USING tbl;
	END IF;
	IF distributed THEN
		phase := pg_catalog.clock_timestamp();
		marked := @extschema@.simhash_mark_distributed(tbl, key_column, body_column, min_similarity, radius, rank);
	ELSE
		-- the rows with content, numbered in (rank,) key order, with their fingerprints
		-- (OFFSET 0: each text's fingerprint computed once, not once per reference),
		-- by parallel workers when the planner chooses them; run under EXPLAIN
		-- ANALYZE to learn how many ran
		phase := pg_catalog.clock_timestamp();
		EXECUTE 'EXPLAIN (ANALYZE, TIMING OFF, SUMMARY OFF, FORMAT JSON) ' OPERATOR(pg_catalog.||) pg_catalog.format(
			'CREATE TEMPORARY TABLE simhash_mark_rows AS '
			'SELECT pg_catalog.row_number() OVER (ORDER BY s.r NULLS LAST, s.k) AS n, s.k, s.f[1] AS fp0, s.f[2] AS fp1 FROM ('
			'  SELECT t.%1$I AS k, %2$s AS r, t.%3$I::pg_catalog.text AS b,'
			'         @extschema@.shingle_simhash256(t.%3$I::pg_catalog.text, 3, ''auto''::pg_catalog.text) AS f'
			'  FROM %4$s AS t WHERE t.%3$I IS NOT NULL OFFSET 0) AS s '
			'WHERE CASE WHEN s.f[1] OPERATOR(@extschema@.=) ''00000000000000000000000000000000''::@extschema@.simhash128 '
			'            AND s.f[2] OPERATOR(@extschema@.=) ''00000000000000000000000000000000''::@extschema@.simhash128 '
			'       THEN pg_catalog.cardinality(@extschema@.shingle_set(s.b, 3, ''auto''::pg_catalog.text)) OPERATOR(pg_catalog.>) 0 ELSE true END',
			key_column, CASE WHEN rank IS NULL THEN 'NULL::pg_catalog.int4' ELSE '(' OPERATOR(pg_catalog.||) rank OPERATOR(pg_catalog.||) ')' END,
			body_column, tbl) INTO fingerprint_plan;
		nrows := (fingerprint_plan OPERATOR(pg_catalog.->) 0 OPERATOR(pg_catalog.->) 'Plan' OPERATOR(pg_catalog.->>) 'Actual Rows')::pg_catalog.numeric::pg_catalog.int8;
		ANALYZE pg_temp.simhash_mark_rows;
		RAISE DEBUG 'simhash_mark_duplicates: fingerprints of % rows with content in % s, % parallel workers', nrows,
			pg_catalog.round(pg_catalog.date_part('epoch', pg_catalog.clock_timestamp() OPERATOR(pg_catalog.-) phase)::pg_catalog.numeric, 1),
			COALESCE(pg_catalog.jsonb_path_query_first(fingerprint_plan, 'strict $.**."Workers Launched"')::pg_catalog.int4, 0);

		-- the duplicates: the verified 'center' engine on the numbers
		phase := pg_catalog.clock_timestamp();
		IF nrows OPERATOR(pg_catalog.>=) 1000 THEN
			PERFORM pg_catalog.set_config('simhash.pairs_recall', '0.99', true);
		END IF;
		IF nrows OPERATOR(pg_catalog.<) 2 THEN
			CREATE TEMPORARY TABLE simhash_mark_dups AS SELECT r.k, r.k AS kept FROM pg_temp.simhash_mark_rows AS r WHERE false;
		ELSE
			EXECUTE pg_catalog.format(
				'CREATE TEMPORARY TABLE simhash_mark_dups AS '
				'SELECT a.k, b.k AS kept FROM @extschema@.simhash_dedup(%1$L::pg_catalog.text, %2$s::pg_catalog.int4, %3$s::pg_catalog.float8, 3, ''auto''::pg_catalog.text) AS d '
				'JOIN pg_temp.simhash_mark_rows AS a ON a.n OPERATOR(pg_catalog.=) d.id '
				'JOIN pg_temp.simhash_mark_rows AS b ON b.n OPERATOR(pg_catalog.=) d.duplicate_of '
				'WHERE d.duplicate_of IS NOT NULL',
				pg_catalog.format('SELECT r.n, r.fp0, r.fp1, t.%I::pg_catalog.text FROM pg_temp.simhash_mark_rows AS r '
								  'JOIN %s AS t ON t.%I OPERATOR(%s) r.k', body_column, tbl, key_column, key_eq),
				radius, min_similarity);
		END IF;
		GET DIAGNOSTICS marked = ROW_COUNT;
		DROP TABLE pg_temp.simhash_mark_rows;
	END IF;
	-- indexed by the key's operator class: the marks to clear are found by
	-- lookups whatever the table's statistics say of the mark column
	EXECUTE pg_catalog.format('CREATE INDEX ON pg_temp.simhash_mark_dups (k %s)', key_opclass);
	ANALYZE pg_temp.simhash_mark_dups;
	RAISE DEBUG 'simhash_mark_duplicates: % duplicates within % bits and at similarity %, % in % s', marked, radius, min_similarity,
		CASE WHEN distributed THEN 'on the workers' WHEN nrows OPERATOR(pg_catalog.>=) 1000 THEN 'bands at recall 0.99' ELSE 'exact' END,
		pg_catalog.round(pg_catalog.date_part('epoch', pg_catalog.clock_timestamp() OPERATOR(pg_catalog.-) phase)::pg_catalog.numeric, 1);

	-- the marks: set where they change, cleared where a row is no longer a duplicate
	phase := pg_catalog.clock_timestamp();
	EXECUTE pg_catalog.format(
		'UPDATE %1$s AS t SET %2$I = d.kept FROM pg_temp.simhash_mark_dups AS d '
		'WHERE t.%3$I OPERATOR(%4$s) d.k AND (t.%2$I IS NULL OR NOT t.%2$I OPERATOR(%4$s) d.kept)',
		tbl, mark_column, key_column, key_eq);
	GET DIAGNOSTICS changed = ROW_COUNT;
	-- (on a distributed table, the keys go to the workers as one list)
	EXECUTE pg_catalog.format(
		'UPDATE %1$s AS t SET %2$I = NULL WHERE t.%2$I IS NOT NULL AND '
		OPERATOR(pg_catalog.||) CASE WHEN distributed THEN 'NOT t.%3$I OPERATOR(%4$s) ANY (SELECT d.k FROM pg_temp.simhash_mark_dups AS d)'
				ELSE 'NOT EXISTS (SELECT FROM pg_temp.simhash_mark_dups AS d WHERE d.k OPERATOR(%4$s) t.%3$I)' END,
		tbl, mark_column, key_column, key_eq);
	GET DIAGNOSTICS cleared = ROW_COUNT;
	DROP TABLE pg_temp.simhash_mark_dups;
	RAISE DEBUG 'simhash_mark_duplicates: % marks set, % cleared in % s; % s in all', changed, cleared,
		pg_catalog.round(pg_catalog.date_part('epoch', pg_catalog.clock_timestamp() OPERATOR(pg_catalog.-) phase)::pg_catalog.numeric, 1),
		pg_catalog.round(pg_catalog.date_part('epoch', pg_catalog.clock_timestamp() OPERATOR(pg_catalog.-) started)::pg_catalog.numeric, 1);
	RETURN marked;
END
$$;
COMMENT ON FUNCTION simhash_mark_duplicates(regclass, name, name, float8, text) IS
	'sets mark_column to the primary key of the kept row for every row of tbl whose body_column is a near-duplicate of it (shingle_similarity(..., 3, ''auto'') >= min_similarity, 0.5..1, found by the 256-bit shingle fingerprint), and to NULL on every other row; the kept row of each group is the lowest of the expression rank (NULL last), then of the key, and every duplicate is similar to it (linkage ''center''); NULL bodies and bodies without letters or digits are never marked nor kept for another; returns the number of rows marked; run it again after changes';
