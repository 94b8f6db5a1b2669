-- simhash is a trusted extension: a role without superuser that may create
-- schemas in a database installs it there.  The functions that
-- run a query given as text run it with the caller's privileges.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS simhash;
DROP DATABASE IF EXISTS regress_simhash_trusted;
DROP ROLE IF EXISTS regress_simhash_low;
RESET client_min_messages;

-- nothing in the extension runs with its owner's rights
SELECT count(*) AS security_definer_functions
FROM pg_proc p JOIN pg_depend d ON d.objid = p.oid AND d.classid = 'pg_proc'::regclass AND d.deptype = 'e'
JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'simhash'
WHERE p.prosecdef;
SELECT trusted, superuser FROM pg_available_extension_versions WHERE name = 'simhash' AND version = '0.4.0';

CREATE ROLE regress_simhash_low NOSUPERUSER NOCREATEDB NOCREATEROLE;
CREATE DATABASE regress_simhash_trusted;
GRANT CREATE ON DATABASE regress_simhash_trusted TO regress_simhash_low;
\c regress_simhash_trusted
-- a table the low role may not read
CREATE TABLE secret (id bigint, body text);
INSERT INTO secret VALUES (1, 'the launch codes'), (2, 'the launch codes!');

SET ROLE regress_simhash_low;
CREATE SCHEMA low;
-- it installs the current version (earlier versions are not installed
-- fresh; test/upgrade/sql/upgrade_chain.sql updates one as such a role)
CREATE EXTENSION simhash SCHEMA low;
SELECT e.extversion = v.default_version AS at_default_version, pg_get_userbyid(e.extowner) AS owner
FROM pg_extension e JOIN pg_available_extensions v ON v.name = e.extname WHERE e.extname = 'simhash';
SET search_path = low, public;

-- its own data works
CREATE TABLE mine (id bigint, fp simhash);
INSERT INTO mine VALUES (1, simhash('near copies of a text'::text)), (2, simhash('near copies of a text!'::text)),
                        (3, simhash('something else entirely'::text));
SELECT * FROM simhash_pairs('SELECT id, fp FROM mine', 9);
SELECT id, distance FROM simhash_nearest('SELECT id, fp FROM mine', simhash('near copies of a text'::text), 1);
CREATE INDEX ON mine USING gin (fp);
CREATE INDEX ON mine USING gist (fp);

-- another role's table: permission denied, through every function
\set VERBOSITY terse
SELECT count(*) FROM secret;
SELECT * FROM simhash_pairs('SELECT id, simhash(body) FROM secret', 64);
SELECT * FROM simhash_clusters('SELECT id, simhash(body) FROM secret', 64);
SELECT * FROM simhash_dedup('SELECT id, simhash(body) FROM secret', 64);
SELECT * FROM simhash_nearest('SELECT id, simhash(body) FROM secret', '0000000000000000', 1);
-- nor by a detour through a function of its own
CREATE FUNCTION low.peek() RETURNS TABLE (id bigint, fp simhash) LANGUAGE sql AS $$ SELECT id, simhash(body) FROM public.secret $$;
SELECT * FROM simhash_pairs('SELECT * FROM low.peek()', 64);
\set VERBOSITY default

-- search_path safety (CVE-2018-1058): the low role puts hostile twins of the
-- names the functions' bodies use in a schema of its own; a superuser calls
-- the functions with that schema first on the search_path.  Each twin raises
-- an error when called: none is.
CREATE TABLE low.docs (id bigint, fp low.simhash, body text);
INSERT INTO low.docs SELECT v.id, low.simhash(v.body), v.body
FROM (VALUES (1, 'near copies of a text'), (2, 'near copies of a text!'), (3, 'something else entirely')) AS v(id, body);
CREATE SCHEMA evil;
CREATE FUNCTION evil.format(text, text) RETURNS text
	LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'hostile format(text, text) called'; END $$;
CREATE FUNCTION evil.cardinality(bigint[]) RETURNS integer
	LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'hostile cardinality(bigint[]) called'; END $$;
CREATE FUNCTION evil.simhash_pairs(text, integer) RETURNS TABLE (id_a bigint, id_b bigint, distance integer)
	LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'hostile simhash_pairs(text, integer) called'; END $$;
CREATE FUNCTION evil.distance(low.simhash, low.simhash) RETURNS low.simhash_distance
	LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'hostile <~> called'; END $$;
CREATE OPERATOR evil.<~> (LEFTARG = low.simhash, RIGHTARG = low.simhash, FUNCTION = evil.distance);
CREATE FUNCTION evil.distance_le(low.simhash_distance, integer) RETURNS boolean
	LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'hostile <= (simhash_distance, integer) called'; END $$;
CREATE OPERATOR evil.<= (LEFTARG = low.simhash_distance, RIGHTARG = integer, FUNCTION = evil.distance_le);
CREATE FUNCTION evil.regtype_eq(regtype, regtype) RETURNS boolean
	LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'hostile = (regtype, regtype) called'; END $$;
CREATE OPERATOR evil.= (LEFTARG = regtype, RIGHTARG = regtype, FUNCTION = evil.regtype_eq);
RESET ROLE;
SET search_path = evil, low, public;
-- the twins do win the name resolution of plain queries (pg_catalog first)
\set VERBOSITY terse
SELECT format('%s', 'x'::text);
SELECT cardinality(ARRAY[1::bigint]);
SELECT count(*) FROM low.docs d WHERE d.fp <~> d.fp <= 3;
SELECT count(*) FROM low.docs d WHERE d.fp OPERATOR(low.<~>) d.fp <= 3;
SELECT pg_typeof(1) = 'integer'::regtype;
\set VERBOSITY default
-- but not inside the extension's functions
SELECT * FROM simhash_nearest('SELECT id, fp FROM low.docs', low.simhash('near copies of a text'::text), 2);
SELECT * FROM simhash_pairs('SELECT id, fp, body FROM low.docs', 3, 0.5);
SELECT * FROM simhash_clusters('SELECT id, fp, body FROM low.docs', 3, 0.5) ORDER BY id;
SELECT * FROM simhash_dedup('SELECT id, fp, body FROM low.docs', 3, 0.5) ORDER BY id;
RESET search_path;
SET ROLE regress_simhash_low;

-- the owner may drop it again
SET client_min_messages = warning;
DROP EXTENSION simhash CASCADE;
RESET client_min_messages;
RESET ROLE;
\c contrib_regression
DROP DATABASE regress_simhash_trusted;
DROP ROLE regress_simhash_low;
