#!/usr/bin/env bash
# test/bench/compare_old.sh: the fingerprints of the installed extension against
# those of an earlier revision, bit for bit, on random texts and the corpus.
#
#   bash test/bench/compare_old.sh [REV]        (after make install)
#
# REV (default 636edec, the last revision before the fast tokenizer) is
# built from git into a temporary directory as simhash_old.so (linked with
# -Bsymbolic, its _PG_init renamed, so that it calls only its own code next
# to the installed simhash.so, which the server preloads).  A throwaway
# cluster then compares, on COMPARE_TEXTS random texts (default 1000000,
# made by test/bench/compare_old.py with seed COMPARE_SEED, default 1) and on the
# corpus in SIMHASH_DATA when it is there:
#   every text: simhash(body) (3, sublinear), simhash(body, 1, 'tf'),
#     simhash(body, 2, 'binary'), simhash_ngram(body) (3, tf)
#   the first COMPARE_FULL random texts (default 50000), also:
#     simhash(body, n, w)        n in 1, 2, 3, 5, 16; w in tf, binary, sublinear
#     simhash_ngram(body, n, w)  n in 1, 2, 3, 4, 16; the same weightings
#     simhash(text[]), simhash(text[], float8[]), simhash(tsvector), stripped
#   the texts over 4 kB with work_mem = 64kB (the distinct-feature tables
#     spill to a tuplesort): both kinds, n in 1, 3, 16, binary and sublinear.
# Prints the number of compared values and of mismatches; exits 1 on any
# mismatch (the first ones are listed).
set -euo pipefail

cd "$(dirname "$0")/../.."
root=$(pwd)
rev=${1:-636edec}
count=${COMPARE_TEXTS:-1000000}
full=${COMPARE_FULL:-50000}
seed=${COMPARE_SEED:-1}
data=${SIMHASH_DATA:-$root/../shared/data}
PG_CONFIG=${PG_CONFIG:-pg_config}

dir=$(mktemp -d "${TMPDIR:-/tmp}/simhash-compare.XXXXXX")
source test/cluster.sh
cleanup() {
	stop_cluster "$dir"
	rm -rf "$dir"
}
trap cleanup EXIT
chmod 755 "$dir"

echo "== building $rev as simhash_old.so"
build_revision "$rev" simhash_old "$dir/old"
old=$dir/old/simhash_old.so

echo "== $count random texts (seed $seed)"
python3 test/bench/compare_old.py "$count" "$seed" >"$dir/texts.tsv"
chmod 644 "$dir/texts.tsv"

PGPORT_WANTED=${COMPARE_PORT:-5495} start_cluster "$dir/cluster" "shared_preload_libraries = 'simhash'" \
	"max_parallel_workers_per_gather = 0" "jit = off"

corpus=""
for f in natural/docs.en.tsv.xz natural/docs.zh.tsv.xz edited/docs.en.tsv.xz edited/docs.zh.tsv.xz; do
	[ -r "$data/$f" ] && corpus+="\\copy t(id, body) FROM PROGRAM 'xzcat $(realpath "$data/$f")'"$'\n'
done

echo "== comparing"
psql -X -q -v ON_ERROR_STOP=1 <<EOF
SET client_min_messages = warning;
CREATE EXTENSION simhash;
CREATE FUNCTION old_text(text, int, text) RETURNS simhash
	AS '$old', 'simhash_text' LANGUAGE C IMMUTABLE STRICT;
CREATE FUNCTION old_ngram(text, int, text) RETURNS simhash
	AS '$old', 'simhash_ngram' LANGUAGE C IMMUTABLE STRICT;
CREATE FUNCTION old_tsvector(tsvector) RETURNS simhash
	AS '$old', 'simhash_tsvector' LANGUAGE C IMMUTABLE STRICT;
CREATE FUNCTION old_features(text[]) RETURNS simhash
	AS '$old', 'simhash_features' LANGUAGE C IMMUTABLE STRICT;
CREATE FUNCTION old_weighted(text[], float8[]) RETURNS simhash
	AS '$old', 'simhash_weighted_features' LANGUAGE C IMMUTABLE STRICT;
CREATE TABLE t (id text, body text, full_check bool DEFAULT false);
\\copy t(id, body) FROM '$dir/texts.tsv'
UPDATE t SET full_check = true WHERE substr(id, 2)::int < $full;
$corpus
CREATE TABLE cfg (kind text, n int, w text, core bool DEFAULT false);
INSERT INTO cfg SELECT 'words', n, w FROM unnest('{1,2,3,5,16}'::int[]) n, unnest('{tf,binary,sublinear}'::text[]) w;
INSERT INTO cfg SELECT 'chars', n, w FROM unnest('{1,2,3,4,16}'::int[]) n, unnest('{tf,binary,sublinear}'::text[]) w;
UPDATE cfg SET core = true WHERE (kind, n, w) IN (('words', 3, 'sublinear'), ('words', 1, 'tf'),
	('words', 2, 'binary'), ('chars', 3, 'tf'));
CREATE TABLE bad (id text, what text, new simhash, old simhash);
CREATE TABLE tally (what text, compared bigint);

-- word and character features
INSERT INTO tally SELECT 'text', count(*) FROM t JOIN cfg c ON c.core OR t.full_check;
INSERT INTO bad
SELECT id, kind || '/' || n || '/' || w, new, old FROM (
	SELECT t.id, c.kind, c.n, c.w,
		CASE c.kind WHEN 'words' THEN simhash(t.body, c.n, c.w) ELSE simhash_ngram(t.body, c.n, c.w) END AS new,
		CASE c.kind WHEN 'words' THEN old_text(t.body, c.n, c.w) ELSE old_ngram(t.body, c.n, c.w) END AS old
	FROM t JOIN cfg c ON c.core OR t.full_check) x
WHERE new IS DISTINCT FROM old;

-- given features: arrays, weighted arrays, tsvectors
CREATE TABLE g AS
	SELECT id, a, (SELECT array_agg(((k * 37) % 11 - 5) / 4.0::float8) FROM generate_series(1, cardinality(a)) k) AS wt,
		to_tsvector('simple', body) AS v
	FROM (SELECT id, body, regexp_split_to_array(body, '\s+') AS a FROM t WHERE full_check) s;
INSERT INTO tally SELECT 'given', count(*) * 4 FROM g;
INSERT INTO bad SELECT id, 'text[]', simhash(a), old_features(a) FROM g WHERE simhash(a) IS DISTINCT FROM old_features(a);
INSERT INTO bad SELECT id, 'text[], float8[]', simhash(a, wt), old_weighted(a, wt) FROM g
	WHERE simhash(a, wt) IS DISTINCT FROM old_weighted(a, wt);
INSERT INTO bad SELECT id, 'tsvector', simhash(v), old_tsvector(v) FROM g WHERE simhash(v) IS DISTINCT FROM old_tsvector(v);
INSERT INTO bad SELECT id, 'tsvector stripped', simhash(strip(v)), old_tsvector(strip(v)) FROM g
	WHERE simhash(strip(v)) IS DISTINCT FROM old_tsvector(strip(v));

-- tables past work_mem: the tuplesort path
SET work_mem = '64kB';
INSERT INTO tally SELECT 'spill', count(*) * (SELECT count(*) FROM cfg WHERE w <> 'tf' AND n IN (1, 3, 16)) FROM t WHERE octet_length(body) > 4096;
INSERT INTO bad
SELECT id, 'work_mem 64kB ' || kind || '/' || n || '/' || w, new, old FROM (
	SELECT t.id, c.kind, c.n, c.w,
		CASE c.kind WHEN 'words' THEN simhash(t.body, c.n, c.w) ELSE simhash_ngram(t.body, c.n, c.w) END AS new,
		CASE c.kind WHEN 'words' THEN old_text(t.body, c.n, c.w) ELSE old_ngram(t.body, c.n, c.w) END AS old
	FROM t CROSS JOIN cfg c
	WHERE octet_length(t.body) > 4096 AND c.w <> 'tf' AND c.n IN (1, 3, 16)) x
WHERE new IS DISTINCT FROM old;
RESET work_mem;
EOF

psql -X -At -c "SELECT 'texts: ' || count(*) || ' (' || count(*) FILTER (WHERE id LIKE 'r%') || ' random, ' ||
	count(*) FILTER (WHERE id NOT LIKE 'r%') || ' corpus), ' || round(sum(octet_length(body)) / 1e6, 1) || ' MB' FROM t"
psql -X -At -c "SELECT 'compared: ' || sum(compared) || ' values (' ||
	string_agg(what || ' ' || compared, ', ') || '), mismatches: ' || (SELECT count(*) FROM bad) FROM tally"
nbad=$(psql -X -At -c "SELECT count(*) FROM bad")
if [ "$nbad" != 0 ]; then
	psql -X -c "SELECT b.id, b.what, b.new, b.old, left(t.body, 60) AS body FROM bad b JOIN t USING (id) LIMIT 20"
	exit 1
fi
echo "old ($rev) and new agree on every value"
