-- Versions before the current one are not installed fresh: only the current
-- version has a full script (0.3.0's, made of 0.1.0's and the update scripts,
-- had a simhash_nearest that called format() by the caller's search_path).
-- The update scripts from every earlier version stay, for the installations
-- of them; test/t/006_upgrade.pl runs them from the test's own copy of
-- 0.1.0's script, and compares the result with a fresh installation.
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS simhash CASCADE;
RESET client_min_messages;
SELECT version FROM pg_available_extension_versions WHERE name = 'simhash' ORDER BY version;
\set VERBOSITY terse
CREATE EXTENSION simhash VERSION '0.1.0';
CREATE EXTENSION simhash VERSION '0.2.0';
CREATE EXTENSION simhash VERSION '0.3.0';
\set VERBOSITY default
SELECT source, path FROM pg_extension_update_paths('simhash')
WHERE target = (SELECT default_version FROM pg_available_extensions WHERE name = 'simhash') AND path IS NOT NULL
ORDER BY source;
CREATE EXTENSION simhash;
SELECT extversion = (SELECT default_version FROM pg_available_extensions WHERE name = 'simhash') AS at_default_version
FROM pg_extension WHERE extname = 'simhash';
