/* simhash 0.1.0 -> 0.2.0: near-duplicate queries from an index */

\echo Use "ALTER EXTENSION simhash UPDATE TO '0.2.0'" to load this file. \quit

-- ---------------------------------------------------------------------------
-- simhash_ball: every fingerprint within radius bits of a center
-- ---------------------------------------------------------------------------

CREATE TYPE simhash_ball;

CREATE FUNCTION simhash_ball_in(cstring) RETURNS simhash_ball
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_ball_out(simhash_ball) RETURNS cstring
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE TYPE simhash_ball (
	INPUT = simhash_ball_in,
	OUTPUT = simhash_ball_out,
	INTERNALLENGTH = 16,
	ALIGNMENT = double,
	STORAGE = plain
);
COMMENT ON TYPE simhash_ball IS 'all fingerprints within a Hamming radius of a center, written (center,radius)';
COMMENT ON FUNCTION simhash_ball_in(cstring) IS 'reads a simhash_ball written (center,radius)';
COMMENT ON FUNCTION simhash_ball_out(simhash_ball) IS 'writes a simhash_ball as (center,radius)';

CREATE FUNCTION simhash_ball(center simhash, radius integer) RETURNS simhash_ball
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash_ball(simhash, integer) IS 'the ball of fingerprints within radius bits of center (radius clamped to -1..64; -1 is empty)';
CREATE FUNCTION simhash_ball_center(simhash_ball) RETURNS simhash
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash_ball_center(simhash_ball) IS 'center of a simhash_ball';
CREATE FUNCTION simhash_ball_radius(simhash_ball) RETURNS integer
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash_ball_radius(simhash_ball) IS 'radius of a simhash_ball';

-- ---------------------------------------------------------------------------
-- estimators and planner support
-- ---------------------------------------------------------------------------

CREATE FUNCTION simhash_ball_sel(internal, oid, internal, integer) RETURNS float8
	AS 'MODULE_PATHNAME' LANGUAGE C STABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_ball_joinsel(internal, oid, internal, smallint, internal) RETURNS float8
	AS 'MODULE_PATHNAME', 'simhash_ball_sel' LANGUAGE C STABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_similar_sel(internal, oid, internal, integer) RETURNS float8
	AS 'MODULE_PATHNAME' LANGUAGE C STABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_similar_joinsel(internal, oid, internal, smallint, internal) RETURNS float8
	AS 'MODULE_PATHNAME', 'simhash_similar_sel' LANGUAGE C STABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_within_support(internal) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C STRICT;
CREATE FUNCTION simhash_distance_support(internal) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C STRICT;

COMMENT ON FUNCTION simhash_ball_sel(internal, oid, internal, integer) IS 'restriction selectivity of <@ and @>';
COMMENT ON FUNCTION simhash_ball_joinsel(internal, oid, internal, smallint, internal) IS 'join selectivity of <@ and @>';
COMMENT ON FUNCTION simhash_similar_sel(internal, oid, internal, integer) IS 'restriction selectivity of %';
COMMENT ON FUNCTION simhash_similar_joinsel(internal, oid, internal, smallint, internal) IS 'join selectivity of %';
COMMENT ON FUNCTION simhash_within_support(internal) IS 'planner support of simhash_within: index condition and selectivity';
COMMENT ON FUNCTION simhash_distance_support(internal) IS 'planner support of distance comparisons: rewrites a <~> b <= k into simhash_within(a, b, k)';

-- ---------------------------------------------------------------------------
-- predicates
-- ---------------------------------------------------------------------------

CREATE FUNCTION simhash_in_ball(simhash, simhash_ball) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION simhash_ball_contains(simhash_ball, simhash) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
COMMENT ON FUNCTION simhash_in_ball(simhash, simhash_ball) IS 'implementation of <@: is the fingerprint in the ball';
COMMENT ON FUNCTION simhash_ball_contains(simhash_ball, simhash) IS 'implementation of @>: does the ball contain the fingerprint';

CREATE OPERATOR <@ (LEFTARG = simhash, RIGHTARG = simhash_ball, FUNCTION = simhash_in_ball,
	COMMUTATOR = @>, RESTRICT = simhash_ball_sel, JOIN = simhash_ball_joinsel);
CREATE OPERATOR @> (LEFTARG = simhash_ball, RIGHTARG = simhash, FUNCTION = simhash_ball_contains,
	COMMUTATOR = <@, RESTRICT = simhash_ball_sel, JOIN = simhash_ball_joinsel);
COMMENT ON OPERATOR <@ (simhash, simhash_ball) IS 'is within the ball (indexable)';
COMMENT ON OPERATOR @> (simhash_ball, simhash) IS 'ball contains the fingerprint (indexable)';

CREATE FUNCTION simhash_within(a simhash, b simhash, max_distance integer) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF
	SUPPORT simhash_within_support;
COMMENT ON FUNCTION simhash_within(simhash, simhash, integer) IS 'true when a and b differ in at most max_distance bits (indexable on a or b)';

CREATE FUNCTION simhash_at_distance(a simhash, b simhash, distance integer) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF
	SUPPORT simhash_within_support;
COMMENT ON FUNCTION simhash_at_distance(simhash, simhash, integer) IS 'true when a and b differ in exactly distance bits (indexable on a or b)';

-- the pg_trgm-style boolean operator, thresholded by simhash.max_distance
CREATE FUNCTION simhash_similar(simhash, simhash) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C STABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash_similar(simhash, simhash) IS 'implementation of %: distance <= simhash.max_distance';
CREATE OPERATOR % (LEFTARG = simhash, RIGHTARG = simhash, FUNCTION = simhash_similar,
	COMMUTATOR = %, RESTRICT = simhash_similar_sel, JOIN = simhash_similar_joinsel);
COMMENT ON OPERATOR % (simhash, simhash) IS 'near-duplicates: distance <= simhash.max_distance (indexable)';

-- comparisons of a distance with an integer: the planner support rewrites
-- "a <~> b <= k" into simhash_within(a, b, k), which an index can answer
CREATE FUNCTION simhash_distance_lt(simhash_distance, integer) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF
	SUPPORT simhash_distance_support;
CREATE FUNCTION simhash_distance_le(simhash_distance, integer) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF
	SUPPORT simhash_distance_support;
CREATE FUNCTION simhash_distance_eq(simhash_distance, integer) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF
	SUPPORT simhash_distance_support;
CREATE FUNCTION simhash_distance_gt(integer, simhash_distance) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF
	SUPPORT simhash_distance_support;
CREATE FUNCTION simhash_distance_ge(integer, simhash_distance) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF
	SUPPORT simhash_distance_support;
CREATE FUNCTION simhash_distance_eq(integer, simhash_distance) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF
	SUPPORT simhash_distance_support;
COMMENT ON FUNCTION simhash_distance_lt(simhash_distance, integer) IS 'distance < integer (rewritten for indexes)';
COMMENT ON FUNCTION simhash_distance_le(simhash_distance, integer) IS 'distance <= integer (rewritten for indexes)';
COMMENT ON FUNCTION simhash_distance_eq(simhash_distance, integer) IS 'distance = integer (rewritten for indexes)';
COMMENT ON FUNCTION simhash_distance_gt(integer, simhash_distance) IS 'integer > distance (rewritten for indexes)';
COMMENT ON FUNCTION simhash_distance_ge(integer, simhash_distance) IS 'integer >= distance (rewritten for indexes)';
COMMENT ON FUNCTION simhash_distance_eq(integer, simhash_distance) IS 'integer = distance (rewritten for indexes)';

CREATE OPERATOR < (LEFTARG = simhash_distance, RIGHTARG = integer, FUNCTION = simhash_distance_lt,
	COMMUTATOR = >, RESTRICT = scalarltsel, JOIN = scalarltjoinsel);
CREATE OPERATOR <= (LEFTARG = simhash_distance, RIGHTARG = integer, FUNCTION = simhash_distance_le,
	COMMUTATOR = >=, RESTRICT = scalarlesel, JOIN = scalarlejoinsel);
CREATE OPERATOR = (LEFTARG = simhash_distance, RIGHTARG = integer, FUNCTION = simhash_distance_eq,
	COMMUTATOR = =, RESTRICT = eqsel, JOIN = eqjoinsel);
CREATE OPERATOR > (LEFTARG = integer, RIGHTARG = simhash_distance, FUNCTION = simhash_distance_gt,
	COMMUTATOR = <, RESTRICT = scalargtsel, JOIN = scalargtjoinsel);
CREATE OPERATOR >= (LEFTARG = integer, RIGHTARG = simhash_distance, FUNCTION = simhash_distance_ge,
	COMMUTATOR = <=, RESTRICT = scalargesel, JOIN = scalargejoinsel);
CREATE OPERATOR = (LEFTARG = integer, RIGHTARG = simhash_distance, FUNCTION = simhash_distance_eq,
	COMMUTATOR = =, RESTRICT = eqsel, JOIN = eqjoinsel);
COMMENT ON OPERATOR < (simhash_distance, integer) IS 'less than; "a <~> b < k" can use a simhash_ops index';
COMMENT ON OPERATOR <= (simhash_distance, integer) IS 'less than or equal; "a <~> b <= k" can use a simhash_ops index';
COMMENT ON OPERATOR = (simhash_distance, integer) IS 'equal; "a <~> b = k" can use a simhash_ops index';
COMMENT ON OPERATOR > (integer, simhash_distance) IS 'greater than; "k > a <~> b" can use a simhash_ops index';
COMMENT ON OPERATOR >= (integer, simhash_distance) IS 'greater than or equal; "k >= a <~> b" can use a simhash_ops index';
COMMENT ON OPERATOR = (integer, simhash_distance) IS 'equal; "k = a <~> b" can use a simhash_ops index';

-- ---------------------------------------------------------------------------
-- blocks (Manku et al.): block 1 holds the most significant bits
-- ---------------------------------------------------------------------------

CREATE FUNCTION simhash_block(fp simhash, block integer, nblocks integer) RETURNS bigint
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash_block(simhash, integer, integer) IS 'value of block number block (1..nblocks) when the 64 bits are split into nblocks blocks';
CREATE FUNCTION simhash_blocks(fp simhash, nblocks integer) RETURNS bigint[]
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash_blocks(simhash, integer) IS 'values of all nblocks blocks, most significant first';
CREATE FUNCTION simhash_block_bits(block integer, nblocks integer) RETURNS integer
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash_block_bits(integer, integer) IS 'width in bits of block number block of nblocks (the first 64 % nblocks blocks are one bit wider)';

-- ---------------------------------------------------------------------------
-- the GIN operator class
-- ---------------------------------------------------------------------------

CREATE FUNCTION simhash_gin_extract_value(simhash, internal, internal) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_gin_extract_query(simhash, internal, smallint, internal, internal, internal, internal) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_gin_consistent(internal, smallint, simhash, integer, internal, internal, internal, internal) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_gin_triconsistent(internal, smallint, simhash, integer, internal, internal, internal) RETURNS "char"
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_gin_options(internal) RETURNS void
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION simhash_gin_extract_value(simhash, internal, internal) IS 'GIN support: one key per block';
COMMENT ON FUNCTION simhash_gin_extract_query(simhash, internal, smallint, internal, internal, internal, internal) IS 'GIN support: the probes of a query';
COMMENT ON FUNCTION simhash_gin_consistent(internal, smallint, simhash, integer, internal, internal, internal, internal) IS 'GIN support: distance bound of a candidate';
COMMENT ON FUNCTION simhash_gin_triconsistent(internal, smallint, simhash, integer, internal, internal, internal) IS 'GIN support: ternary distance bound of a candidate';
COMMENT ON FUNCTION simhash_gin_options(internal) IS 'GIN support: the blocks option';

CREATE OPERATOR CLASS simhash_ops
	DEFAULT FOR TYPE simhash USING gin AS
	OPERATOR 1 <@ (simhash, simhash_ball),
	OPERATOR 2 % (simhash, simhash),
	OPERATOR 3 = (simhash, simhash),
	FUNCTION 1 btint8cmp(bigint, bigint),
	FUNCTION 2 simhash_gin_extract_value(simhash, internal, internal),
	FUNCTION 3 simhash_gin_extract_query(simhash, internal, smallint, internal, internal, internal, internal),
	FUNCTION 4 simhash_gin_consistent(internal, smallint, simhash, integer, internal, internal, internal, internal),
	FUNCTION 6 simhash_gin_triconsistent(internal, smallint, simhash, integer, internal, internal, internal),
	FUNCTION 7 simhash_gin_options(internal),
	STORAGE bigint;
COMMENT ON OPERATOR CLASS simhash_ops USING gin IS 'exact Hamming-radius search: fp <~> q <= k, fp <@ simhash_ball(q, k), fp % q';
COMMENT ON OPERATOR FAMILY simhash_ops USING gin IS 'GIN operator family for exact Hamming-radius search';

-- ---------------------------------------------------------------------------
-- nearest first: the distance as a plain integer, for ORDER BY through GiST
-- ---------------------------------------------------------------------------

CREATE FUNCTION hamming_distance_integer(simhash, simhash) RETURNS integer
	AS 'MODULE_PATHNAME', 'hamming_distance' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
COMMENT ON FUNCTION hamming_distance_integer(simhash, simhash) IS 'Hamming distance as a plain integer (the ordering operator <->)';
CREATE OPERATOR <-> (LEFTARG = simhash, RIGHTARG = simhash, FUNCTION = hamming_distance_integer,
	COMMUTATOR = <->);
COMMENT ON OPERATOR <-> (simhash, simhash) IS 'Hamming distance as integer; ORDER BY fp <-> q (and fp <~> q) can use a simhash_gist_ops index';

-- "a <~> b" is planned as "a <-> b" seen as a simhash_distance, so that
-- ORDER BY a <~> b matches the GiST ordering operator
CREATE FUNCTION simhash_hamming_support(internal) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C STRICT;
COMMENT ON FUNCTION simhash_hamming_support(internal) IS 'planner support of hamming_distance: plans a <~> b as a <-> b for nearest-first index scans';
ALTER FUNCTION hamming_distance(simhash, simhash) SUPPORT simhash_hamming_support;

-- ---------------------------------------------------------------------------
-- the GiST operator class: nearest first
-- ---------------------------------------------------------------------------

CREATE TYPE simhash_gist_key;
CREATE FUNCTION simhash_gist_key_in(cstring) RETURNS simhash_gist_key
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_gist_key_out(simhash_gist_key) RETURNS cstring
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE TYPE simhash_gist_key (
	INPUT = simhash_gist_key_in,
	OUTPUT = simhash_gist_key_out,
	INTERNALLENGTH = 16,
	ALIGNMENT = double,
	STORAGE = plain
);
COMMENT ON TYPE simhash_gist_key IS 'GiST-internal summary of fingerprints: the AND and the OR of their bits';
COMMENT ON FUNCTION simhash_gist_key_in(cstring) IS 'simhash_gist_key has no input form';
COMMENT ON FUNCTION simhash_gist_key_out(simhash_gist_key) IS 'writes a simhash_gist_key';

CREATE FUNCTION simhash_gist_consistent(internal, simhash, smallint, oid, internal) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_gist_union(internal, internal) RETURNS simhash_gist_key
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_gist_compress(internal) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_gist_penalty(internal, internal, internal) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_gist_picksplit(internal, internal) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_gist_same(simhash_gist_key, simhash_gist_key, internal) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_gist_distance(internal, simhash, smallint, oid, internal) RETURNS float8
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_gist_fetch(internal) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_gist_sortsupport(internal) RETURNS void
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash_gist_consistent(internal, simhash, smallint, oid, internal) IS 'GiST support: can the subtree hold a match';
COMMENT ON FUNCTION simhash_gist_union(internal, internal) IS 'GiST support: summary of a set of keys';
COMMENT ON FUNCTION simhash_gist_compress(internal) IS 'GiST support: a fingerprint as a leaf key';
COMMENT ON FUNCTION simhash_gist_penalty(internal, internal, internal) IS 'GiST support: bits no longer shared after an insertion';
COMMENT ON FUNCTION simhash_gist_picksplit(internal, internal) IS 'GiST support: split a page on its most balanced bit';
COMMENT ON FUNCTION simhash_gist_same(simhash_gist_key, simhash_gist_key, internal) IS 'GiST support: key equality';
COMMENT ON FUNCTION simhash_gist_distance(internal, simhash, smallint, oid, internal) IS 'GiST support: distance lower bound, exact at leaves';
COMMENT ON FUNCTION simhash_gist_fetch(internal) IS 'GiST support: the fingerprint of a leaf key (index-only scans)';
COMMENT ON FUNCTION simhash_gist_sortsupport(internal) IS 'GiST support: sort order for sorted index builds';

CREATE OPERATOR CLASS simhash_gist_ops
	DEFAULT FOR TYPE simhash USING gist AS
	OPERATOR 3 = (simhash, simhash),
	OPERATOR 4 <-> (simhash, simhash) FOR ORDER BY pg_catalog.integer_ops,
	FUNCTION 1 simhash_gist_consistent(internal, simhash, smallint, oid, internal),
	FUNCTION 2 simhash_gist_union(internal, internal),
	FUNCTION 3 simhash_gist_compress(internal),
	FUNCTION 5 simhash_gist_penalty(internal, internal, internal),
	FUNCTION 6 simhash_gist_picksplit(internal, internal),
	FUNCTION 7 simhash_gist_same(simhash_gist_key, simhash_gist_key, internal),
	FUNCTION 8 simhash_gist_distance(internal, simhash, smallint, oid, internal),
	FUNCTION 9 simhash_gist_fetch(internal),
	STORAGE simhash_gist_key;
COMMENT ON OPERATOR CLASS simhash_gist_ops USING gist IS 'nearest first: ORDER BY fp <~> q LIMIT n (radius searches belong to the GIN simhash_ops)';
COMMENT ON OPERATOR FAMILY simhash_gist_ops USING gist IS 'GiST operator family for simhash';

-- sorted GiST builds need PostgreSQL 14
DO $$
BEGIN
	IF pg_catalog.current_setting('server_version_num')::pg_catalog.int4 OPERATOR(pg_catalog.>=) 140000 THEN
		ALTER OPERATOR FAMILY simhash_gist_ops USING gist
			ADD FUNCTION 11 (simhash) simhash_gist_sortsupport(internal);
	END IF;
END $$;
