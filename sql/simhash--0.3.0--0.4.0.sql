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


-- ---------------------------------------------------------------------------
-- fingerprint speed
-- ---------------------------------------------------------------------------

