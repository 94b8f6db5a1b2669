/* simhash 0.3.0 -> 0.4.0 */

\echo Use "ALTER EXTENSION simhash UPDATE TO '0.4.0'" to load this file. \quit

-- ---------------------------------------------------------------------------
-- hardening (input hygiene, trust, memory bounds)
-- ---------------------------------------------------------------------------



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



-- ---------------------------------------------------------------------------
-- verified near-duplicates (shingle similarity)
-- ---------------------------------------------------------------------------



-- ---------------------------------------------------------------------------
-- scaling out (Citus)
-- ---------------------------------------------------------------------------



-- ---------------------------------------------------------------------------
-- fingerprint speed
-- ---------------------------------------------------------------------------

