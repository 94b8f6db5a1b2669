#!/usr/bin/env bash
# test/cross-version.sh: a database with hamming, GIN and GiST indexes moved
# from one PostgreSQL major version to another by pg_dump and pg_restore.
#   sudo bash test/cross-version.sh dump FILE       (on the old version)
#   sudo bash test/cross-version.sh restore FILE    (on the new version)
# Both install what is missing and build and install simhash (test/deps.sh;
# SIMHASH_PG_MAJOR or PG_CONFIG chooses the version), then use a throwaway
# cluster.  dump: fingerprints test/data/sample.tsv's texts and 6000 random
# fingerprints with planted neighbours, indexes them (a table each for the
# hamming, GIN and GiST indexes), stores the sequential scan's answers to 40
# query fingerprints (every row within k bits for k in 0..16, and the distances
# of the 10 nearest) and writes `pg_dump -Fc` to FILE.  restore: restores FILE
# into a new database and checks, with the planner forced onto each index
# (EXPLAIN must name it), that every index gives the stored answers, that a
# sequential scan on this version gives them too, and that every fingerprint
# the old version computed is computed again: the sample's texts, and
# test/crosscheck.sh's texts and fingerprints (which the dump step checks
# against the Python reference first; that reference needs Debian 12's Python).  VACUUM and inserts after the restore
# are checked the same way.  Ends with "cross-version: N passed, M failed".
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-} file=${2:-}
if [ "$mode" != dump ] && [ "$mode" != restore ] || [ -z "$file" ]; then
	echo "usage: $0 dump|restore FILE" >&2
	exit 2
fi
file=$(realpath "$file")
source test/cluster.sh
source test/deps.sh
prepare_machine xv
if [ "$mode" = dump ]; then
	# the cross-check's texts and its fingerprints, checked against the reference
	mkdir -m 777 "$work/crosscheck"
	SIMHASH_KEEP="$work/crosscheck" bash test/crosscheck.sh --sample
fi
PGPORT_WANTED=54333 start_cluster "$work/xv"
psql=(psql -X -q -v ON_ERROR_STOP=1 -d simhash_xv)

if [ "$mode" = dump ]; then
	createdb simhash_xv
	"${psql[@]}" -f - <<'SQL'
CREATE EXTENSION simhash;
SELECT setseed(0.21) \g /dev/null
CREATE TABLE texts (n int PRIMARY KEY, corpus_id text, lang text, role text, original text,
                    edit_rate text, source text, package text, body text);
SQL
	"${psql[@]}" -c "\\copy texts FROM 'test/data/sample.tsv'"
	"${psql[@]}" -c "CREATE TABLE crosscheck_texts (id text PRIMARY KEY, body text)" \
		-c "\\copy crosscheck_texts FROM '$work/crosscheck/bodies.tsv'" \
		-c "CREATE TABLE crosscheck_results (id text, config text, fp text)" \
		-c "\\copy crosscheck_results FROM '$work/crosscheck/results.tsv'"
	"${psql[@]}" -f - <<'SQL'
ALTER TABLE texts ADD COLUMN fp simhash;
UPDATE texts SET fp = simhash(body);
CREATE FUNCTION random_simhash() RETURNS simhash LANGUAGE sql VOLATILE AS
$$ SELECT (((random() * 4294967296)::bigint << 32) | (random() * 4294967296)::bigint)::simhash $$;
CREATE TABLE docs (id int PRIMARY KEY, fp simhash);
INSERT INTO docs SELECT i, random_simhash() FROM generate_series(1, 6000) i;
INSERT INTO docs SELECT 10000 + n, fp FROM texts;
INSERT INTO docs VALUES (20001, NULL), (20002, NULL);
-- 40 queries: 20 rows of docs with up to 8 bits flipped, 20 random values
CREATE TABLE queries (qid int PRIMARY KEY, q simhash);
INSERT INTO queries SELECT row_number() OVER (), (fp::bigint # (random() * 255)::bigint)::simhash
  FROM (SELECT fp FROM docs WHERE fp IS NOT NULL ORDER BY random() LIMIT 20) s;
INSERT INTO queries SELECT 20 + i, random_simhash() FROM generate_series(1, 20) i;
-- the same rows under each kind of index
CREATE TABLE docs_hamming AS SELECT * FROM docs;
CREATE TABLE docs_gin AS SELECT * FROM docs;
CREATE TABLE docs_gist AS SELECT * FROM docs;
CREATE INDEX docs_hamming_fp ON docs_hamming USING hamming (fp);
CREATE INDEX docs_gin_fp ON docs_gin USING gin (fp);
CREATE INDEX docs_gist_fp ON docs_gist USING gist (fp);
-- the answers of sequential scans on the old version
SET enable_indexscan = off; SET enable_bitmapscan = off;
CREATE TABLE within_answers AS
  SELECT qid, k, array(SELECT id FROM docs WHERE fp <~> q <= k ORDER BY id) AS ids
  FROM queries, generate_series(0, 16) k;
CREATE TABLE nearest_answers AS
  SELECT qid, array(SELECT fp <~> q FROM docs WHERE fp IS NOT NULL ORDER BY fp <~> q LIMIT 10) AS dists
  FROM queries;
SQL
	pg_dump -Fc -d simhash_xv >"$file"
	echo "cross-version: dumped on PostgreSQL $(psql -X -At -c 'SHOW server_version') to $file"
	echo "cross-version: 1 passed, 0 failed"
	exit 0
fi

passed=0 failed=0
check() {	# check NAME SQL: SQL returns one boolean
	local got
	got=$("${psql[@]}" -At -c "$2" 2>&1) || true
	if [ "$got" = t ]; then
		passed=$(( passed + 1 ))
		echo "PASS $1"
	else
		failed=$(( failed + 1 ))
		echo "FAIL $1: $got"
	fi
}
# plan_uses NAME INDEX QUERY: EXPLAIN of QUERY (with only index scans allowed) names INDEX
plan_uses() {
	if "${psql[@]}" -At -c "SET enable_seqscan = off; EXPLAIN (COSTS OFF) $3" | grep -q "$2"; then
		passed=$(( passed + 1 ))
		echo "PASS $1"
	else
		failed=$(( failed + 1 ))
		echo "FAIL $1: the plan does not use $2"
	fi
}
# every index and a sequential scan give the stored answers
check_answers() {
	local when=$1 t
	for t in hamming gin; do
		plan_uses "$when: docs_$t answers fp <~> q <= k from its index" "docs_${t}_fp" \
			"SELECT id FROM docs_$t WHERE fp <~> '0123456789abcdef' <= 3"
		check "$when: docs_$t, fp <~> q <= k for 40 queries and k = 0..16" "SET enable_seqscan = off;
			SELECT bool_and(w.ids = array(SELECT id FROM docs_$t d WHERE d.fp <~> q.q <= w.k ORDER BY id))
			FROM within_answers w JOIN queries q USING (qid)"
	done
	for t in hamming gist; do
		plan_uses "$when: docs_$t answers ORDER BY fp <~> q LIMIT 10 from its index" "docs_${t}_fp" \
			"SELECT id FROM docs_$t ORDER BY fp <~> '0123456789abcdef' LIMIT 10"
		check "$when: docs_$t, the distances of the 10 nearest for 40 queries" "SET enable_seqscan = off;
			SELECT bool_and(a.dists = array(SELECT d.fp <~> q.q FROM docs_$t d WHERE d.fp IS NOT NULL ORDER BY d.fp <~> q.q LIMIT 10))
			FROM nearest_answers a JOIN queries q USING (qid)"
	done
	check "$when: a sequential scan gives the stored answers" "SET enable_indexscan = off; SET enable_bitmapscan = off;
		SELECT bool_and(w.ids = array(SELECT id FROM docs d WHERE d.fp <~> q.q <= w.k ORDER BY id))
		FROM within_answers w JOIN queries q USING (qid)"
}

createdb simhash_xv
pg_restore --exit-on-error -d simhash_xv "$file"
echo "cross-version: restored on PostgreSQL $(psql -X -At -c 'SHOW server_version')"
check "simhash() of the 268 texts gives the fingerprints stored by the old version" \
	"SELECT count(*) = 268 AND bool_and(fp = simhash(body)) FROM texts"
# (a configuration is FUNCTION/N/WEIGHTING; an unknown function fails)
check "the cross-check's fingerprints (every function and configuration it uses) are the old version's" \
	"SELECT count(*) > 20000 AND bool_and(r.fp = CASE split_part(config, '/', 1)
		WHEN 'simhash' THEN simhash(t.body, split_part(config, '/', 2)::int, split_part(config, '/', 3))::text
		WHEN 'simhash_ngram' THEN simhash_ngram(t.body, split_part(config, '/', 2)::int, split_part(config, '/', 3))::text
		WHEN 'simhash128' THEN simhash128(t.body, split_part(config, '/', 2)::int, split_part(config, '/', 3))::text
		WHEN 'simhash128_ngram' THEN simhash128_ngram(t.body, split_part(config, '/', 2)::int, split_part(config, '/', 3))::text END)
	FROM crosscheck_results r JOIN crosscheck_texts t USING (id)"
check_answers "restored"
# changes after the restore: deletes, VACUUM, and inserts at distance 1 from
# each query; the answers are recomputed by a sequential scan of docs, which
# gets the same changes
"${psql[@]}" -f - <<'SQL'
DELETE FROM docs WHERE id % 7 = 0;
INSERT INTO docs SELECT 30000 + qid, (q::bigint # 1)::simhash FROM queries;
SET enable_indexscan = off; SET enable_bitmapscan = off;
UPDATE within_answers w SET ids = array(SELECT id FROM docs d, queries q WHERE q.qid = w.qid AND d.fp <~> q.q <= w.k ORDER BY id);
UPDATE nearest_answers a SET dists = array(SELECT d.fp <~> q.q FROM docs d, queries q WHERE q.qid = a.qid AND d.fp IS NOT NULL ORDER BY d.fp <~> q.q LIMIT 10);
DELETE FROM docs_hamming WHERE id % 7 = 0; DELETE FROM docs_gin WHERE id % 7 = 0; DELETE FROM docs_gist WHERE id % 7 = 0;
VACUUM docs_hamming; VACUUM docs_gin; VACUUM docs_gist;
INSERT INTO docs_hamming SELECT * FROM docs WHERE id > 30000;
INSERT INTO docs_gin SELECT * FROM docs WHERE id > 30000;
INSERT INTO docs_gist SELECT * FROM docs WHERE id > 30000;
SQL
check_answers "after deletes, VACUUM and inserts"
echo "cross-version: $passed passed, $failed failed"
[ "$failed" = 0 ]
