-- Soft input errors (PostgreSQL 16 and later): the simhash, simhash128 and
-- simhash_ball parsers report a bad value to pg_input_is_valid and
-- pg_input_error_info instead of raising it.  On 15, which has no soft errors, the test says so
-- (expected/input_soft_1.out).
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS simhash;
RESET client_min_messages;

SELECT current_setting('server_version_num')::int >= 160000 AS soft_errors \gset
\if :soft_errors
SELECT v, pg_input_is_valid(v, 'simhash') AS valid
FROM (VALUES ('0123456789abcdef'), (' 0123456789ABCDEF '), ('0123456789abcdeg'),
             ('123'), ('0123 456789abcdef'), (''), ('00123456789abcdef')) t(v);
SELECT v, pg_input_is_valid(v, 'simhash_ball') AS valid
FROM (VALUES ('(0123456789abcdef,3)'), ('( 0123456789abcdef , -1 )'), ('(0123456789abcdef,65)'),
             ('(0123456789abcdef,3'), ('0123456789abcdef,3'), ('(0123456789abcdef,99999999999)')) t(v);
-- the message, detail, hint and SQLSTATE a hard error would have had
SELECT * FROM pg_input_error_info('0123456789abcdeg', 'simhash');
SELECT * FROM pg_input_error_info('0123 456789abcdef', 'simhash');
SELECT * FROM pg_input_error_info('123', 'simhash');
SELECT * FROM pg_input_error_info('(0123456789abcdef,65)', 'simhash_ball');
SELECT * FROM pg_input_error_info('(0123456789abcdef;3)', 'simhash_ball');
SELECT pg_input_is_valid('0123456789abcdef0123456789abcdef', 'simhash128') AS valid128,
       pg_input_is_valid('0123456789abcdef0123456789abcdeg', 'simhash128') AS invalid128,
       pg_input_is_valid('0123456789abcdef', 'simhash128') AS short128;
-- arrays pass the soft error up
SELECT pg_input_is_valid('{0123456789abcdef,xyz}', 'simhash[]') AS bad_array,
       pg_input_is_valid('{"(0123456789abcdef,3)","(0123456789abcdef,x)"}', 'simhash_ball[]') AS bad_ball_array,
       pg_input_is_valid('{0123456789abcdef,fedcba9876543210}', 'simhash[]') AS good_array;
-- a hard error where no one asked for a soft one
SELECT '0123456789abcdeg'::simhash;
\else
\echo soft input errors need PostgreSQL 16 or later
\endif
