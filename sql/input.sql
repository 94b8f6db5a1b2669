-- Input hygiene of simhash and simhash_ball: what each parser accepts and
-- rejects (white space, signs, overflow, trailing garbage), with SQLSTATEs,
-- and the binary forms (COPY BINARY, the binary protocol).
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS simhash;
RESET client_min_messages;

-- simhash: 16 hex digits; white space (space, tab, newline, CR, VT, FF) is
-- allowed before and after them, as int8in allows it
SELECT ' 0123456789abcdef'::simhash AS lead, E'0123456789ABCDEF \t\n'::simhash AS trail,
       (chr(13) || chr(11) || chr(12) || '0123456789abcdef' || chr(12))::simhash AS cr_vt_ff;
SELECT '{ 0123456789abcdef , fedcba9876543210 }'::simhash[] AS array_elements;
SELECT ' 00000000000000ff '::simhash = '00000000000000ff'::simhash AS same_value;
\set VERBOSITY default
SELECT '0123456789abcdef x'::simhash;
SELECT '01234567 89abcdef'::simhash;
SELECT '   '::simhash;
SELECT '00000000000000000000000000000001'::simhash;  -- no overflow into 64 bits
SELECT '+123456789abcdef'::simhash;
SELECT '-123456789abcdef'::simhash;
SELECT '0123456789abcdéf'::simhash;
SELECT E'0123456789abcdef\u00a0'::simhash;          -- only ASCII white space
\set VERBOSITY terse
-- every rejection is 22P02, also through a text cast (I/O conversion)
DO $$
DECLARE
	bad text;
BEGIN
	FOREACH bad IN ARRAY ARRAY['', 'x', '0123456789abcdef0', '0123456789abcdeg', '0x23456789abcdef', '01234567 89abcdef'] LOOP
		BEGIN
			PERFORM bad::simhash;
			RAISE NOTICE '% accepted', quote_literal(bad);
		EXCEPTION WHEN invalid_text_representation THEN
			NULL;
		END;
	END LOOP;
	RAISE NOTICE 'all rejected with 22P02';
END $$;

-- simhash_ball: (center,radius), radius -1 (empty) to 64, white space around parts
SELECT ' ( 0123456789abcdef , 3 ) '::simhash_ball AS spaced, '(0123456789ABCDEF,+07)'::simhash_ball AS plus_sign,
       '(0123456789abcdef,-1)'::simhash_ball AS empty_ball, '(0123456789abcdef,64)'::simhash_ball AS whole_space,
       '(0123456789abcdef,-0)'::simhash_ball AS minus_zero;
-- every value simhash_ball() can make reads back
SELECT r, simhash_ball('0123456789abcdef', r)::text::simhash_ball::text = simhash_ball('0123456789abcdef', r)::text AS round_trip
FROM (VALUES (0), (3), (64)) v(r);
SELECT '0123456789abcdef'::simhash <@ '(0123456789abcdef,-1)' AS in_empty_ball,
       'fedcba9876543210'::simhash <@ '(0123456789abcdef,64)' AS in_whole_space;
\set VERBOSITY default
-- the radius does not wrap around: 4294967299 is not 3
SELECT '(0123456789abcdef,4294967299)'::simhash_ball;
SELECT '(0123456789abcdef,99999999999999999999999999999999)'::simhash_ball;
SELECT '(0123456789abcdef,65)'::simhash_ball;
SELECT '(0123456789abcdef,-2)'::simhash_ball;
SELECT '0123456789abcdef,3'::simhash_ball;
SELECT '(0123456789abcde,3)'::simhash_ball;
SELECT '(0123456789abcdef0,3)'::simhash_ball;
SELECT '(0123456789abcdef;3)'::simhash_ball;
SELECT '(0123456789abcdef,)'::simhash_ball;
SELECT '(0123456789abcdef,3.5)'::simhash_ball;
SELECT '(0123456789abcdef,0x3)'::simhash_ball;
SELECT '(0123456789abcdef,3'::simhash_ball;
SELECT '(0123456789abcdef,3) x'::simhash_ball;
SELECT '(0123456789abcdef,3)(0123456789abcdef,3)'::simhash_ball;
SELECT '(0123456789abcdef,- 3)'::simhash_ball;
\set VERBOSITY terse

-- binary forms: 8 bytes for simhash; 8 + 4 for simhash_ball, big-endian
SELECT simhash_ball_send('(0123456789abcdef,3)'), simhash_ball_send('(ffffffffffffffff,-1)');
CREATE TEMP TABLE balls (b simhash_ball);
INSERT INTO balls VALUES ('(0123456789abcdef,3)'), ('(8000000000000001,-1)'), ('(ffffffffffffffff,64)'), (NULL);
CREATE TEMP TABLE balls2 (b simhash_ball);
CREATE TEMP TABLE raw (b bytea);
-- COPY BINARY out and back in (a file name of this backend's own); errors
-- are reported as SQLSTATE and message, without the file name
CREATE FUNCTION pg_temp.copy_through_file(source text, target text) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
	f text := '/tmp/simhash_input_' || pg_backend_pid() || '.bin';
BEGIN
	EXECUTE format('COPY %s TO %L WITH (FORMAT binary)', source, f);
	BEGIN
		EXECUTE format('COPY %s FROM %L WITH (FORMAT binary)', target, f);
	EXCEPTION WHEN OTHERS THEN
		RAISE NOTICE '%: %', SQLSTATE, SQLERRM;
	END;
END $$;
SELECT pg_temp.copy_through_file('balls', 'balls2');
SELECT (SELECT array_agg(b::text ORDER BY b::text) FROM balls) IS NOT DISTINCT FROM
       (SELECT array_agg(b::text ORDER BY b::text) FROM balls2) AS binary_round_trip;
SELECT count(*) AS rows_read FROM balls2;
-- a bytea field read as a simhash_ball: its bytes are the binary form
TRUNCATE balls2;
INSERT INTO raw VALUES ('\x0123456789abcdef00000009');
SELECT pg_temp.copy_through_file('raw', 'balls2');
SELECT b FROM balls2;
-- malformed binary forms are rejected
TRUNCATE raw; INSERT INTO raw VALUES ('\x0123456789abcdef00000041');    -- radius 65
SELECT pg_temp.copy_through_file('raw', 'balls2');
TRUNCATE raw; INSERT INTO raw VALUES ('\x0123456789abcdeffffffffe');    -- radius -2
SELECT pg_temp.copy_through_file('raw', 'balls2');
TRUNCATE raw; INSERT INTO raw VALUES ('\x0123456789abcdef000000');      -- 11 bytes
SELECT pg_temp.copy_through_file('raw', 'balls2');
TRUNCATE raw; INSERT INTO raw VALUES ('\x0123456789abcdef0000000300');  -- 13 bytes
SELECT pg_temp.copy_through_file('raw', 'balls2');
SELECT count(*) AS malformed_rows_read FROM balls2 WHERE b::text <> '(0123456789abcdef,9)';
CREATE TEMP TABLE fps (fp simhash);
TRUNCATE raw; INSERT INTO raw VALUES ('\x0123456789abcd');              -- 7 bytes
SELECT pg_temp.copy_through_file('raw', 'fps');
TRUNCATE raw; INSERT INTO raw VALUES ('\x0123456789abcdef01');          -- 9 bytes
SELECT pg_temp.copy_through_file('raw', 'fps');
SELECT count(*) AS malformed_rows_read FROM fps;
