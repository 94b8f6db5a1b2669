-- What a role without privileges can reach through the extension, which is
-- trusted: such a role installs it into a schema of its own, may create
-- functions and operators there and in any schema on a search_path, owns
-- tables whose indexes a superuser checks, and passes queries of its own.
-- Each section is one point of doc/security.md.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS simhash;
DROP DATABASE IF EXISTS regress_simhash_security;
DROP ROLE IF EXISTS regress_simhash_sec_low;
RESET client_min_messages;
-- the errors without the lines of the functions that raise them
\set SHOW_CONTEXT never
CREATE ROLE regress_simhash_sec_low NOSUPERUSER NOCREATEDB NOCREATEROLE;
CREATE DATABASE regress_simhash_security;
GRANT CREATE ON DATABASE regress_simhash_security TO regress_simhash_sec_low;
\c regress_simhash_security
SET ROLE regress_simhash_sec_low;
CREATE SCHEMA low;
CREATE EXTENSION simhash SCHEMA low;
CREATE TABLE low.docs (id bigint, fp low.simhash, body text);
INSERT INTO low.docs SELECT v.id, low.simhash(v.body), v.body
FROM (VALUES (1, 'near copies of a text'), (2, 'near copies of a text!'), (3, 'something else entirely'),
             (4, 'something else entirely.')) AS v(id, body);
RESET ROLE;
-- a table of the superuser's that the low role may not read, with a hamming index
CREATE TABLE secret (id bigint, fp low.simhash);
INSERT INTO secret SELECT i, low.simhash('secret ' || i) FROM generate_series(1, 42) i;
CREATE INDEX secret_fp ON secret USING hamming (fp);
SET ROLE regress_simhash_sec_low;
SET search_path = low, public;

-- 1. A body column is read only when it is text, varchar or char (or a
-- stored shingle set, bigint[]): a name (64 bytes, not a text) was read as a
-- text and crashed the server.
\set VERBOSITY default
SELECT * FROM simhash_pairs($q$SELECT 1::bigint, simhash('a b c d'::text), 'dddddddd'::name
  UNION ALL SELECT 2, simhash('a b c d'::text), 'dddddddddd'::name$q$, 3, 0.5);
SELECT * FROM shingle_verify_pairs('SELECT 1::bigint, 2::bigint, 0',
  $q$SELECT 1::bigint, 'dddddddd'::name UNION ALL SELECT 2, 'dddddddddd'::name$q$, 0.5);
SELECT * FROM simhash_lineage($q$SELECT 1::bigint, simhash('a b c d'::text), 'dddddddd'::name
  UNION ALL SELECT 2, simhash('a b c d'::text), 'dddddddddd'::name$q$, 3, 0.5);
-- cast, it is read as the text it is
SELECT * FROM simhash_pairs($q$SELECT 1::bigint, simhash('a b c d'::text), 'dddddddd'::name::text
  UNION ALL SELECT 2, simhash('a b c d'::text), 'dddddddddd'::name::text$q$, 3, 0.5);
-- every type of the database in each column the whole-table readers take:
-- the types accepted (all others are refused with 42804, any other error
-- stops the test)
CREATE TEMP TABLE accepted (reader text, type text);
DO $$
DECLARE
	t regtype;
	readers text[] := ARRAY[
		'simhash_pairs id|SELECT * FROM low.simhash_pairs(''SELECT NULL::%s, low.simhash(''''a''''::text) LIMIT 0'', 3)',
		'simhash_pairs fingerprint|SELECT * FROM low.simhash_pairs(''SELECT 1::bigint, NULL::%s LIMIT 0'', 3)',
		'simhash_pairs body|SELECT * FROM low.simhash_pairs(''SELECT 1::bigint, low.simhash(''''a''''::text), NULL::%s LIMIT 0'', 3, 0.5)',
		'shingle_verify_pairs body|SELECT * FROM low.shingle_verify_pairs(''SELECT 1::bigint, 2::bigint, 0'', ''SELECT 1::bigint, NULL::%s LIMIT 0'', 0.5)'];
	r text;
BEGIN
	FOR t IN SELECT oid::regtype FROM pg_type WHERE typtype IN ('b', 'c', 'd', 'e', 'm', 'r') ORDER BY oid LOOP
		FOREACH r IN ARRAY readers LOOP
			BEGIN
				EXECUTE format(split_part(r, '|', 2), t);
				INSERT INTO accepted VALUES (split_part(r, '|', 1), t::text);
			EXCEPTION WHEN datatype_mismatch THEN
				NULL;
			END;
		END LOOP;
	END LOOP;
END
$$;
SELECT reader, string_agg(type, ', ' ORDER BY type) AS accepted FROM accepted GROUP BY reader ORDER BY reader;

-- 2. hamming_index_check runs the index's expressions as the table's owner,
-- restricted: an index function that makes its owner a superuser when a
-- superuser runs it does nothing when a superuser checks the index.
CREATE TABLE low.calls (who text, superuser boolean);
CREATE FUNCTION low.escalate(t text) RETURNS low.simhash LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO low.calls SELECT current_user, rolsuper FROM pg_roles WHERE rolname = current_user;
	IF (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
		ALTER ROLE regress_simhash_sec_low SUPERUSER;
	END IF;
	RETURN low.simhash(t);
END $$;
CREATE FUNCTION low.idxfn(t text) RETURNS low.simhash LANGUAGE sql IMMUTABLE AS $$ SELECT low.escalate(t) $$;
CREATE TABLE low.indexed (body text);
INSERT INTO low.indexed VALUES ('one text'), ('another text');
CREATE INDEX indexed_fp ON low.indexed USING hamming (low.idxfn(body));
RESET ROLE;
DELETE FROM low.calls;
SELECT low.hamming_index_check('low.indexed_fp');
SELECT count(*) AS calls, bool_and(who = 'regress_simhash_sec_low') AS as_owner, bool_or(superuser) AS as_superuser FROM low.calls;
SELECT rolsuper FROM pg_roles WHERE rolname = 'regress_simhash_sec_low';
-- (the rest of the test without superuser, whatever happened here)
ALTER ROLE regress_simhash_sec_low NOSUPERUSER;
SET ROLE regress_simhash_sec_low;

-- 3. The forms with a linkage or a key, and simhash_nearest, call no
-- function or operator planted beside them: in the extension's schema (its
-- owner, the low role, may create functions there) and in schemas before and
-- after pg_catalog on the search_path of a superuser who calls them.  Each
-- planted function raises an error when called.
CREATE FUNCTION low.simhash_keyed(key bigint, what text, query text, max_distance integer, min_similarity float8,
                                  linkage text, shingle integer, units text, ordered boolean)
	RETURNS TABLE (id bigint, other_id bigint, distance integer, similarity float8, cluster_size bigint)
	LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'planted low.simhash_keyed(bigint, ...) called by %', current_user; END $$;
CREATE FUNCTION low.simhash_keyed(key text, what text, query text, max_distance integer, min_similarity float8,
                                  linkage text, shingle integer, units text, ordered boolean)
	RETURNS TABLE (id text, other_id text, distance integer, similarity float8, cluster_size bigint)
	LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'planted low.simhash_keyed(text, ...) called by %', current_user; END $$;
CREATE SCHEMA first;
CREATE SCHEMA last;
DO $$
DECLARE
	s text;
	op text;
	t text;
BEGIN
	FOREACH s IN ARRAY ARRAY['low', 'first', 'last'] LOOP
		FOREACH t IN ARRAY ARRAY['integer', 'text', 'bigint'] LOOP
			FOREACH op IN ARRAY ARRAY['=', '<>', '<', '<=', '>', '>='] LOOP
				EXECUTE format('CREATE FUNCTION %I.planted_%s_%s(%s, %s) RETURNS boolean LANGUAGE plpgsql AS '
							   '$f$ BEGIN RAISE EXCEPTION ''planted %s.%s(%s, %s) called''; END $f$',
							   s, t, md5(op), t, t, s, op, t, t);
				EXECUTE format('CREATE OPERATOR %I.%s (LEFTARG = %s, RIGHTARG = %s, FUNCTION = %I.planted_%s_%s)',
							   s, op, t, t, s, t, md5(op));
			END LOOP;
		END LOOP;
		IF s <> 'low' THEN
			EXECUTE format('CREATE FUNCTION %I.simhash_keyed(key bigint, what text, query text, max_distance integer, min_similarity float8, '
						   'linkage text, shingle integer, units text, ordered boolean) '
						   'RETURNS TABLE (id bigint, other_id bigint, distance integer, similarity float8, cluster_size bigint) '
						   'LANGUAGE plpgsql AS $f$ BEGIN RAISE EXCEPTION ''planted %s.simhash_keyed called''; END $f$', s, s);
		END IF;
	END LOOP;
END
$$;
RESET ROLE;
-- the planted operators win the name resolution of a plain query
SET search_path = first, low, pg_catalog, last;
\set VERBOSITY terse
SELECT 1 = 1;
SELECT 'a'::text NOT IN ('b', 'c');
\set VERBOSITY default
-- but not in the extension's functions
SELECT * FROM simhash_clusters('SELECT id, fp FROM low.docs', 3, 'single') ORDER BY id;
SELECT * FROM simhash_clusters('SELECT id, fp, body FROM low.docs', 3, 0.5, 'center') ORDER BY id;
SELECT * FROM simhash_dedup('SELECT id, fp FROM low.docs', 3, 'center') ORDER BY id;
SELECT * FROM simhash_dedup('SELECT id, fp, body FROM low.docs', 3, 0.5, 'single') ORDER BY id;
SELECT * FROM simhash_lineage('SELECT id, fp FROM low.docs', 3) ORDER BY id;
SELECT * FROM simhash_lineage('SELECT id, fp, body FROM low.docs', 3, 0.5) ORDER BY id;
SELECT * FROM simhash_pairs_keyed(NULL::bigint, 'SELECT id, fp FROM low.docs', 3);
SELECT * FROM simhash_pairs_keyed(NULL::text, 'SELECT id::text, fp, body FROM low.docs', 3, 0.5);
SELECT * FROM simhash_clusters_keyed(NULL::text, 'SELECT id::text, fp FROM low.docs', 3);
SELECT * FROM simhash_dedup_keyed(NULL::text, 'SELECT id::text, fp, body FROM low.docs', 3, 0.5);
SELECT * FROM simhash_lineage_keyed(NULL::bigint, 'SELECT id, fp FROM low.docs', 3, 'single');
SELECT * FROM simhash_nearest('SELECT id, fp FROM low.docs', low.simhash('near copies of a text'::text), 2);
-- an unknown linkage is refused by the extension, not by a planted <>
SELECT * FROM simhash_dedup('SELECT id, fp FROM low.docs', 3, 'none');
RESET search_path;
SET ROLE regress_simhash_sec_low;
SET search_path = low, public;

-- 4. (hamming_merge_tail, hamming_index_check and hamming_index_info check
-- ownership or privilege before they lock: test/isolation/specs/security_locks.spec.)

-- 5. hamming_index_info needs SELECT on the table: it tells the number of rows
\set VERBOSITY terse
SELECT table_entries + tail_entries AS entries FROM hamming_index_info('public.secret_fp');
SELECT hamming_index_check('public.secret_fp');
SELECT hamming_merge_tail('public.secret_fp');
\set VERBOSITY default

-- 6. The caller's query is only read: a statement that changes data, a WITH
-- that does, or row locks are refused, and the rows stay.
SELECT * FROM simhash_pairs('DELETE FROM low.docs RETURNING id, fp', 3);
\set VERBOSITY terse
SELECT * FROM simhash_clusters('WITH d AS (DELETE FROM low.docs RETURNING id, fp) SELECT * FROM d', 3);
SELECT * FROM simhash_dedup('UPDATE low.docs SET body = body RETURNING id, fp, body', 3, 0.5);
SELECT * FROM simhash_pairs('SELECT id, fp FROM low.docs FOR UPDATE', 3);
-- (the forms with a linkage read it as a subquery, where a DELETE is no query)
SELECT * FROM simhash_dedup('DELETE FROM low.docs RETURNING id, fp', 3, 'center');
SELECT * FROM shingle_verify_pairs('DELETE FROM low.docs RETURNING id, id, 0', 'SELECT id, body FROM low.docs', 0.5);
SELECT * FROM shingle_verify_pairs('SELECT 1::bigint, 2::bigint, 0', 'DELETE FROM low.docs RETURNING id, body', 0.5);
SELECT * FROM simhash_pairs('EXPLAIN ANALYZE DELETE FROM low.docs', 3);
\set VERBOSITY default
SELECT count(*) AS rows_kept FROM low.docs;

-- 7. A shingle set is built within maintenance_work_mem: 100,000 distinct
-- shingles need more than 1MB, and are refused with a clear error
CREATE TEMP TABLE big AS SELECT string_agg(md5(i::text), ' ') AS body FROM generate_series(1, 100000) i;
SET maintenance_work_mem = '1MB';
SELECT cardinality(shingle_set(body, 1, 'words')) FROM big;
SELECT shingle_simhash128(body, 1, 'words') IS NOT NULL FROM big;
SELECT cardinality(shingle_set(left(body, 30000 * 33), 1, 'words')) FROM big;
RESET maintenance_work_mem;
SELECT cardinality(shingle_set(body, 1, 'words')) FROM big;

RESET ROLE;
\c contrib_regression
DROP DATABASE regress_simhash_security;
DROP ROLE regress_simhash_sec_low;
