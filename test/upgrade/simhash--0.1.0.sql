/* simhash 0.1.0: the simhash type, fingerprints and the Hamming distance */

\echo Use "CREATE EXTENSION simhash" to load this file. \quit

-- ---------------------------------------------------------------------------
-- the type
-- ---------------------------------------------------------------------------

CREATE TYPE simhash;

CREATE FUNCTION simhash_in(cstring) RETURNS simhash
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_out(simhash) RETURNS cstring
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_recv(internal) RETURNS simhash
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_send(simhash) RETURNS bytea
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE TYPE simhash (
	INPUT = simhash_in,
	OUTPUT = simhash_out,
	RECEIVE = simhash_recv,
	SEND = simhash_send,
	INTERNALLENGTH = 8,
	PASSEDBYVALUE,
	ALIGNMENT = double,
	STORAGE = plain
);

COMMENT ON TYPE simhash IS '64-bit SimHash fingerprint, written as 16 hexadecimal digits';
COMMENT ON FUNCTION simhash_in(cstring) IS 'reads a simhash from 16 hexadecimal digits';
COMMENT ON FUNCTION simhash_out(simhash) IS 'writes a simhash as 16 lower-case hexadecimal digits';
COMMENT ON FUNCTION simhash_recv(internal) IS 'reads a simhash in binary form (8 bytes, big-endian)';
COMMENT ON FUNCTION simhash_send(simhash) IS 'writes a simhash in binary form (8 bytes, big-endian)';

-- ---------------------------------------------------------------------------
-- casts: all explicit and bit-for-bit
-- ---------------------------------------------------------------------------

CREATE CAST (bigint AS simhash) WITHOUT FUNCTION;
CREATE CAST (simhash AS bigint) WITHOUT FUNCTION;

CREATE FUNCTION simhash_to_bit(simhash, integer, boolean) RETURNS bit
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_from_bit(bit) RETURNS simhash
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_from_bit(varbit) RETURNS simhash
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_to_bytea(simhash) RETURNS bytea
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_from_bytea(bytea) RETURNS simhash
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE CAST (simhash AS bit) WITH FUNCTION simhash_to_bit(simhash, integer, boolean);
CREATE CAST (bit AS simhash) WITH FUNCTION simhash_from_bit(bit);
CREATE CAST (varbit AS simhash) WITH FUNCTION simhash_from_bit(varbit);
CREATE CAST (simhash AS bytea) WITH FUNCTION simhash_to_bytea(simhash);
CREATE CAST (bytea AS simhash) WITH FUNCTION simhash_from_bytea(bytea);

COMMENT ON FUNCTION simhash_to_bit(simhash, integer, boolean) IS 'cast simhash to bit(64), most significant bit first';
COMMENT ON FUNCTION simhash_from_bit(bit) IS 'cast bit(64) to simhash; other lengths are an error';
COMMENT ON FUNCTION simhash_from_bit(varbit) IS 'cast a 64-bit varbit to simhash; other lengths are an error';
COMMENT ON FUNCTION simhash_to_bytea(simhash) IS 'cast simhash to 8 bytes, big-endian';
COMMENT ON FUNCTION simhash_from_bytea(bytea) IS 'cast 8 big-endian bytes to simhash; other lengths are an error';

-- ---------------------------------------------------------------------------
-- comparison: unsigned order of the 64-bit value (= order of the hex text)
-- ---------------------------------------------------------------------------

CREATE FUNCTION simhash_eq(simhash, simhash) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION simhash_ne(simhash, simhash) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION simhash_lt(simhash, simhash) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION simhash_le(simhash, simhash) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION simhash_gt(simhash, simhash) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION simhash_ge(simhash, simhash) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION simhash_cmp(simhash, simhash) RETURNS integer
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION simhash_hash(simhash) RETURNS integer
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION simhash_hash_extended(simhash, bigint) RETURNS bigint
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE OPERATOR = (LEFTARG = simhash, RIGHTARG = simhash, FUNCTION = simhash_eq,
	COMMUTATOR = =, NEGATOR = <>, RESTRICT = eqsel, JOIN = eqjoinsel, HASHES, MERGES);
CREATE OPERATOR <> (LEFTARG = simhash, RIGHTARG = simhash, FUNCTION = simhash_ne,
	COMMUTATOR = <>, NEGATOR = =, RESTRICT = neqsel, JOIN = neqjoinsel);
CREATE OPERATOR < (LEFTARG = simhash, RIGHTARG = simhash, FUNCTION = simhash_lt,
	COMMUTATOR = >, NEGATOR = >=, RESTRICT = scalarltsel, JOIN = scalarltjoinsel);
CREATE OPERATOR <= (LEFTARG = simhash, RIGHTARG = simhash, FUNCTION = simhash_le,
	COMMUTATOR = >=, NEGATOR = >, RESTRICT = scalarlesel, JOIN = scalarlejoinsel);
CREATE OPERATOR > (LEFTARG = simhash, RIGHTARG = simhash, FUNCTION = simhash_gt,
	COMMUTATOR = <, NEGATOR = <=, RESTRICT = scalargtsel, JOIN = scalargtjoinsel);
CREATE OPERATOR >= (LEFTARG = simhash, RIGHTARG = simhash, FUNCTION = simhash_ge,
	COMMUTATOR = <=, NEGATOR = <, RESTRICT = scalargesel, JOIN = scalargejoinsel);

CREATE OPERATOR CLASS simhash_btree_ops
	DEFAULT FOR TYPE simhash USING btree AS
	OPERATOR 1 <,
	OPERATOR 2 <=,
	OPERATOR 3 =,
	OPERATOR 4 >=,
	OPERATOR 5 >,
	FUNCTION 1 simhash_cmp(simhash, simhash);

CREATE OPERATOR CLASS simhash_hash_ops
	DEFAULT FOR TYPE simhash USING hash AS
	OPERATOR 1 =,
	FUNCTION 1 simhash_hash(simhash),
	FUNCTION 2 simhash_hash_extended(simhash, bigint);

COMMENT ON FUNCTION simhash_eq(simhash, simhash) IS 'implementation of = for simhash';
COMMENT ON FUNCTION simhash_ne(simhash, simhash) IS 'implementation of <> for simhash';
COMMENT ON FUNCTION simhash_lt(simhash, simhash) IS 'implementation of < for simhash (unsigned order)';
COMMENT ON FUNCTION simhash_le(simhash, simhash) IS 'implementation of <= for simhash (unsigned order)';
COMMENT ON FUNCTION simhash_gt(simhash, simhash) IS 'implementation of > for simhash (unsigned order)';
COMMENT ON FUNCTION simhash_ge(simhash, simhash) IS 'implementation of >= for simhash (unsigned order)';
COMMENT ON FUNCTION simhash_cmp(simhash, simhash) IS 'btree comparison support for simhash';
COMMENT ON FUNCTION simhash_hash(simhash) IS 'hash support for simhash';
COMMENT ON FUNCTION simhash_hash_extended(simhash, bigint) IS 'seeded 64-bit hash support for simhash';
COMMENT ON OPERATOR = (simhash, simhash) IS 'equal';
COMMENT ON OPERATOR <> (simhash, simhash) IS 'not equal';
COMMENT ON OPERATOR < (simhash, simhash) IS 'less than (unsigned order)';
COMMENT ON OPERATOR <= (simhash, simhash) IS 'less than or equal (unsigned order)';
COMMENT ON OPERATOR > (simhash, simhash) IS 'greater than (unsigned order)';
COMMENT ON OPERATOR >= (simhash, simhash) IS 'greater than or equal (unsigned order)';
COMMENT ON OPERATOR CLASS simhash_btree_ops USING btree IS 'default btree operator class for simhash';
COMMENT ON OPERATOR CLASS simhash_hash_ops USING hash IS 'default hash operator class for simhash';

-- ---------------------------------------------------------------------------
-- the distance
-- ---------------------------------------------------------------------------

-- A domain over integer: it behaves as an integer everywhere (arithmetic,
-- aggregates, drivers see int4), and gives the extension its own comparison
-- operators, which can rewrite "fp <~> q <= k" into an indexable predicate.
CREATE DOMAIN simhash_distance AS integer;
COMMENT ON DOMAIN simhash_distance IS 'a Hamming distance between two simhash values (0..64); an integer';

CREATE FUNCTION hamming_distance(simhash, simhash) RETURNS simhash_distance
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
COMMENT ON FUNCTION hamming_distance(simhash, simhash) IS 'number of bits in which two fingerprints differ (0..64)';

CREATE OPERATOR <~> (LEFTARG = simhash, RIGHTARG = simhash, FUNCTION = hamming_distance,
	COMMUTATOR = <~>);
COMMENT ON OPERATOR <~> (simhash, simhash) IS 'Hamming distance';

-- ---------------------------------------------------------------------------
-- fingerprints
-- ---------------------------------------------------------------------------

CREATE FUNCTION simhash(body text, shingle integer DEFAULT 3, weighting text DEFAULT 'sublinear')
	RETURNS simhash AS 'MODULE_PATHNAME', 'simhash_text'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash(text, integer, text) IS
	'fingerprint of a text: NFKC, lower case, words and CJK bigrams, shingles of "shingle" tokens (default 3), weighting tf, binary or sublinear (default)';

-- varchar columns need their own entry: without it, simhash(varchar_column)
-- would be read as a cast to the simhash type
CREATE FUNCTION simhash(body varchar, shingle integer DEFAULT 3, weighting text DEFAULT 'sublinear')
	RETURNS simhash AS 'MODULE_PATHNAME', 'simhash_text'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash(varchar, integer, text) IS 'fingerprint of a varchar; same as simhash(text)';

CREATE FUNCTION simhash_ngram(body text, n integer DEFAULT 3, weighting text DEFAULT 'tf')
	RETURNS simhash AS 'MODULE_PATHNAME', 'simhash_ngram'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash_ngram(text, integer, text) IS
	'fingerprint of a text from its character n-grams (NFKC, lower case, letters and digits)';

CREATE FUNCTION simhash(tsvector) RETURNS simhash
	AS 'MODULE_PATHNAME', 'simhash_tsvector'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash(tsvector) IS 'fingerprint of a tsvector: lexemes are features, weight = number of positions (1 if stripped)';

CREATE FUNCTION simhash(features text[]) RETURNS simhash
	AS 'MODULE_PATHNAME', 'simhash_features'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash(text[]) IS 'fingerprint of a list of features, each element one feature of weight 1 (repeats add up)';

CREATE FUNCTION simhash(features text[], weights float8[]) RETURNS simhash
	AS 'MODULE_PATHNAME', 'simhash_weighted_features'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash(text[], float8[]) IS 'fingerprint of features with explicit weights';

CREATE FUNCTION simhash_agg_transfn(internal, text, float8) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION simhash_agg_combinefn(internal, internal) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION simhash_agg_serialfn(internal) RETURNS bytea
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_agg_deserialfn(bytea, internal) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_agg_finalfn(internal) RETURNS simhash
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE AGGREGATE simhash_agg(feature text, weight float8) (
	SFUNC = simhash_agg_transfn,
	STYPE = internal,
	FINALFUNC = simhash_agg_finalfn,
	COMBINEFUNC = simhash_agg_combinefn,
	SERIALFUNC = simhash_agg_serialfn,
	DESERIALFUNC = simhash_agg_deserialfn,
	PARALLEL = SAFE
);

COMMENT ON FUNCTION simhash_agg_transfn(internal, text, float8) IS 'simhash_agg transition function';
COMMENT ON FUNCTION simhash_agg_combinefn(internal, internal) IS 'simhash_agg combine function';
COMMENT ON FUNCTION simhash_agg_serialfn(internal) IS 'simhash_agg serialization function';
COMMENT ON FUNCTION simhash_agg_deserialfn(bytea, internal) IS 'simhash_agg deserialization function';
COMMENT ON FUNCTION simhash_agg_finalfn(internal) IS 'simhash_agg final function';
COMMENT ON AGGREGATE simhash_agg(text, float8) IS 'fingerprint of the features of a group of rows, one feature and weight per row (NULLs skipped)';
COMMENT ON OPERATOR FAMILY simhash_btree_ops USING btree IS 'btree operator family for simhash';
COMMENT ON OPERATOR FAMILY simhash_hash_ops USING hash IS 'hash operator family for simhash';
