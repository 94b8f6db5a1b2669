-- The upgrade chain from the first version reaches the current one, and an
-- upgraded installation has the same objects as a fresh one.
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS simhash CASCADE;
RESET client_min_messages;
CREATE EXTENSION simhash VERSION '0.1.0';
SELECT extversion FROM pg_extension WHERE extname = 'simhash';
-- fingerprints of 0.1.0 survive an upgrade unchanged
CREATE TABLE upgrade_docs (body text, fp simhash);
INSERT INTO upgrade_docs VALUES ('The quick brown fox jumps over the lazy dog', simhash('The quick brown fox jumps over the lazy dog'::text));
ALTER EXTENSION simhash UPDATE;
SELECT extversion = (SELECT default_version FROM pg_available_extensions WHERE name = 'simhash') AS at_default_version
FROM pg_extension WHERE extname = 'simhash';
SELECT fp = simhash(body) AS fingerprint_unchanged FROM upgrade_docs;
CREATE TEMP TABLE upgraded_objects AS
SELECT pg_describe_object(classid, objid, 0) AS object
FROM pg_depend WHERE refobjid = (SELECT oid FROM pg_extension WHERE extname = 'simhash') AND deptype = 'e';
DROP TABLE upgrade_docs;
DROP EXTENSION simhash;
CREATE EXTENSION simhash;
SELECT count(*) AS objects,
       count(*) FILTER (WHERE object NOT IN (SELECT object FROM upgraded_objects)) AS only_in_fresh,
       (SELECT count(*) FROM upgraded_objects WHERE object NOT IN
          (SELECT pg_describe_object(classid, objid, 0) FROM pg_depend
           WHERE refobjid = (SELECT oid FROM pg_extension WHERE extname = 'simhash') AND deptype = 'e')) AS only_in_upgraded
FROM (SELECT pg_describe_object(classid, objid, 0) AS object FROM pg_depend
      WHERE refobjid = (SELECT oid FROM pg_extension WHERE extname = 'simhash') AND deptype = 'e') fresh;
