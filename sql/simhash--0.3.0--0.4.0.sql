/* simhash 0.3.0 -> 0.4.0 */

\echo Use "ALTER EXTENSION simhash UPDATE TO '0.4.0'" to load this file. \quit

-- ---------------------------------------------------------------------------
-- hardening (input hygiene, trust, memory bounds)
-- ---------------------------------------------------------------------------


-- (harden helper)

-- binary I/O of simhash_ball (COPY BINARY, binary protocol, Citus)
CREATE FUNCTION simhash_ball_recv(internal) RETURNS simhash_ball
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_ball_send(simhash_ball) RETURNS bytea
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
ALTER TYPE simhash_ball SET (RECEIVE = simhash_ball_recv, SEND = simhash_ball_send);
COMMENT ON FUNCTION simhash_ball_recv(internal) IS 'reads a simhash_ball in binary form (center 8 bytes, radius 4 bytes, big-endian)';
COMMENT ON FUNCTION simhash_ball_send(simhash_ball) IS 'writes a simhash_ball in binary form (center 8 bytes, radius 4 bytes, big-endian)';
COMMENT ON FUNCTION simhash_ball_in(cstring) IS 'reads a simhash_ball written (center,radius), radius -1 (empty) to 64';


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

