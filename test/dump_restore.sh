#!/usr/bin/env bash
# test/dump_restore.sh: near-duplicate exclusion constraints survive
# pg_dump and restore, whatever simhash.max_distance and
# simhash.similarity_threshold the databases have.
#   bash test/dump_restore.sh   (run by test/run-tests.sh on its cluster)
# Needs a running server with simhash installed (PGHOST, PGPORT, PGUSER of
# the environment) and pg_dump on the PATH.  The source database sets
# simhash.max_distance = 0, the target 64; the constraint's threshold is the
# index option max_distance = 3, so the dump restores without error, the
# restored constraint keeps its option, rejects a row within 3 bits and
# accepts one 4 bits away in both databases.  Likewise the gate on texts,
# EXCLUDE USING hamming (simhash_doc(body, 0.8) WITH ~=), with
# simhash.similarity_threshold 0.5 in the source and 0.99 in the target:
# in both it rejects a copy of similarity 0.93 and takes one of 0.5 to 0.8.
# Ends with
# "dump_restore: N passed, M failed".
set -uo pipefail

src=simhash_dump_src dst=simhash_dump_dst
passed=0 failed=0
check() {	# check NAME EXPECTED ACTUAL
	if [ "$2" = "$3" ]; then
		passed=$((passed + 1))
		echo "ok: $1"
	else
		failed=$((failed + 1))
		echo "FAILED: $1: expected [$2], got [$3]"
	fi
}
q() {	# q DB SQL: one value, or the error's SQLSTATE as "error SQLSTATE"
	local out
	if out=$(psql -X -q -At -d "$1" -v ON_ERROR_STOP=1 -v VERBOSITY=verbose -c "$2" 2>&1); then
		echo "$out"
	else
		echo "error $(echo "$out" | sed -n 's/^ERROR:  \([0-9A-Z]\{5\}\):.*/\1/p' | head -n 1)"
	fi
}

for db in $src $dst; do
	psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db" >/dev/null 2>&1
done
psql -X -q -d postgres -c "ALTER DATABASE $src SET simhash.max_distance = 0" \
	-c "ALTER DATABASE $dst SET simhash.max_distance = 64" \
	-c "ALTER DATABASE $src SET simhash.similarity_threshold = 0.5" \
	-c "ALTER DATABASE $dst SET simhash.similarity_threshold = 0.99" >/dev/null

# rows 5 and more bits apart: a constraint read with the default 9 (or 64)
# would not take them
psql -X -q -d $src -v ON_ERROR_STOP=1 >/dev/null <<'EOF'
CREATE EXTENSION simhash;
CREATE TABLE posts (id bigint PRIMARY KEY, fp simhash,
                    EXCLUDE USING hamming (fp WITH %) WITH (max_distance = 3));
INSERT INTO posts VALUES (1, '0000000000000000'), (2, '000000000000001f'), (3, '00000000000003e0'),
                         (4, 'ffffffffffffffff');
CREATE TABLE articles (id bigint PRIMARY KEY, body text,
                       EXCLUDE USING hamming (simhash_doc(body, 0.8) WITH ~=));
INSERT INTO articles VALUES
	(1, 'alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu one two three four'),
	(2, 'a second text about the harbour, its ferries and the weather of the week in the north');
EOF
orig="alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu one two three four"
near="${orig% four} five"
mid=$(echo "$orig" | sed 's/echo/ECHO1/; s/lima/LIMA1/; s/sierra/SIERRA1/')
check "the copies' similarities: 0.8 .. 0.99, and 0.5 .. 0.8 (near at 0.5)" "t|t|t" \
	"$(q $src "SELECT shingle_similarity('$orig', '$near', 3, 'auto') BETWEEN 0.8 AND 0.99, shingle_similarity('$orig', '$mid', 3, 'auto') BETWEEN 0.5 AND 0.8, '$orig' ~= '$mid'")"
check "rows in the source" 4 "$(q $src 'SELECT count(*) FROM posts')"

dump=$(mktemp /tmp/simhash-dump.XXXXXX)
trap 'rm -f "$dump"' EXIT
pg_dump -d $src >"$dump" 2>&1
check "pg_dump" 0 $?
restore_out=$(psql -X -q -d $dst -v ON_ERROR_STOP=1 -f "$dump" 2>&1 >/dev/null)
check "restore without error" 0 $?
[ -z "$restore_out" ] || echo "$restore_out" | sed 's/^/    /'

check "rows in the restored table" 4 "$(q $dst 'SELECT count(*) FROM posts')"
want="EXCLUDE USING hamming (fp WITH %) WITH (max_distance='3')"
check "the restored constraint" "$want" \
	"$(q $dst "SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = 'posts'::regclass AND contype = 'x'")"
# in_both NAME_REJECTED SQL_REJECTED NAME_ACCEPTED SQL_ACCEPTED: in each database
# the first insert is rejected by the constraint (whatever the database's
# settings), the second goes in
in_both() {
	local db
	for db in $src $dst; do
		check "$db: $1" "error 23P01" "$(q $db "$2")"
		check "$db: $3" "1" "$(q $db "WITH i AS ($4 RETURNING 1) SELECT count(*) FROM i")"
	done
}
# 3 bits from row 4, and 4 bits from row 4 (more from the others)
in_both "a row 3 bits from another is rejected" "INSERT INTO posts VALUES (10, 'fffffffffffffff8')" \
	"a row 4 bits from the nearest goes in" "INSERT INTO posts VALUES (11, 'fffffffffffffff0')"
for db in $src $dst; do
	check "$db: ON CONFLICT DO NOTHING skips a row 3 bits from another" "0" \
		"$(q $db "WITH i AS (INSERT INTO posts VALUES (10, 'fffffffffffffff8') ON CONFLICT DO NOTHING RETURNING 1) SELECT count(*) FROM i")"
done

check "rows of the gated table restored" 2 "$(q $dst 'SELECT count(*) FROM articles')"
check "the restored gate" "EXCLUDE USING hamming (simhash_doc(body, (0.8)::double precision) WITH ~=)" \
	"$(q $dst "SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = 'articles'::regclass AND contype = 'x'")"
in_both "a copy of similarity 0.93 is rejected" "INSERT INTO articles VALUES (10, '$near')" \
	"a copy of similarity 0.5 .. 0.8 goes in" "INSERT INTO articles VALUES (11, '$mid')"

for db in $src $dst; do
	psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $db" >/dev/null 2>&1
done
echo "dump_restore: $passed passed, $failed failed"
[ "$failed" = 0 ]
