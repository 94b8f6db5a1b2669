-- simhash is a trusted extension: a role without superuser that may create
-- schemas in a database installs and upgrades it there.  The functions that
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
-- every script of the chain runs: install the first version and upgrade
CREATE EXTENSION simhash SCHEMA low VERSION '0.1.0';
ALTER EXTENSION simhash UPDATE;
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

-- the owner may drop it again
SET client_min_messages = warning;
DROP EXTENSION simhash CASCADE;
RESET client_min_messages;
RESET ROLE;
\c contrib_regression
DROP DATABASE regress_simhash_trusted;
DROP ROLE regress_simhash_low;
