#!/usr/bin/env bash
# test/bench/quality128.sh: how simhash128 separates near-duplicates from unrelated
# documents on the public corpus, beside simhash, at several radii.
#
# For each of the four sets (edited and natural, English and Chinese), every
# pair of documents of the set: the recall of the pairs with 3-shingle
# Jaccard >= 0.8 (the corpus's truth.tsv), and the pairs not in truth.tsv
# (Jaccard < 0.5) within k bits -- as a count, and as unrelated candidates
# per document of a table of 1M such documents (count / pairs * 10^6).
# Fingerprints: simhash(body) and simhash128(body) with the default options
# (or the weighting given as the first argument), and, for comparison,
# shingle_simhash128(body, 3, 'auto') ("A + B"): two independent 64-bit
# SimHashes A and B of each document's 3-shingle set (every distinct shingle
# one vote), whose distance is d(A) + d(B).  Uses the installed
# extension (PG_CONFIG selects it); SIMHASH_DATA: the corpus directory
# (default: <repo>/../shared/data).
#
#   bash test/bench/quality128.sh [sublinear|binary|tf]
set -euo pipefail
cd "$(dirname "$0")/../.."
source test/cluster.sh
weighting=${1:-sublinear}
data=$(realpath "${SIMHASH_DATA:-$(dirname "$(pwd)")/shared/data}")
dir=$(mktemp -d "${TMPDIR:-/tmp}/simhash-quality128.XXXXXX")
trap 'stop_cluster "$dir"; rm -rf "$dir"' EXIT
PGPORT_WANTED=5498 start_cluster "$dir"
psql -X -q -v ON_ERROR_STOP=1 <<EOF2
CREATE EXTENSION simhash;
CREATE TABLE qd (id text, body text);
\copy qd FROM PROGRAM 'xzcat $data/edited/docs.en.tsv.xz'
\copy qd FROM PROGRAM 'xzcat $data/edited/docs.zh.tsv.xz'
\copy qd FROM PROGRAM 'xzcat $data/natural/docs.en.tsv.xz'
\copy qd FROM PROGRAM 'xzcat $data/natural/docs.zh.tsv.xz'
CREATE TABLE qt (id_a text, id_b text, jaccard float8);
\copy qt FROM PROGRAM 'xzcat $data/edited/truth.tsv.xz | grep -v "^#" | cut -f1-3'
\copy qt FROM PROGRAM 'xzcat $data/natural/truth.tsv.xz | grep -v "^#" | cut -f1-3'
ALTER TABLE qd ADD COLUMN set text, ADD COLUMN f64 simhash, ADD COLUMN f128 simhash128,
	ADD COLUMN fab simhash128;
UPDATE qd SET set = substr(id, 1, 4), f64 = simhash(body, 3, '$weighting'), f128 = simhash128(body, 3, '$weighting'),
	fab = shingle_simhash128(body, 3, 'auto');
CREATE TABLE near AS
SELECT a.set, a.id AS id_a, b.id AS id_b, (a.f128 <~> b.f128)::int AS d128, (a.f64 <~> b.f64)::int AS d64,
	   (a.fab <~> b.fab)::int AS dab
FROM qd a JOIN qd b ON a.set = b.set AND a.id < b.id
WHERE (a.f128 <~> b.f128)::int <= 32 OR (a.f64 <~> b.f64)::int <= 16 OR (a.fab <~> b.fab)::int <= 32;
CREATE TABLE nj AS
SELECT n.*, t.jaccard FROM near n
LEFT JOIN (SELECT least(id_a, id_b) AS id_a, greatest(id_a, id_b) AS id_b, jaccard FROM qt) t USING (id_a, id_b);
CREATE TABLE cfg (label text, bits int, k int);
INSERT INTO cfg VALUES ('simhash, k = 14', 64, 14), ('simhash, k = 16', 64, 16), ('simhash128, k = 24', 128, 24),
	('simhash128, k = 26', 128, 26), ('simhash128, k = 28', 128, 28), ('simhash128, k = 30', 128, 30),
	('simhash128, k = 32', 128, 32), ('A + B, k = 24', 129, 24), ('A + B, k = 26', 129, 26),
	('A + B, k = 28', 129, 28), ('A + B, k = 30', 129, 30), ('A + B, k = 32', 129, 32);
SELECT c.label AS candidates, s.set,
       round((SELECT count(*) FROM nj WHERE nj.set = s.set AND nj.jaccard >= 0.8 AND CASE c.bits WHEN 64 THEN d64 WHEN 128 THEN d128 ELSE dab END <= c.k)::numeric
             / (SELECT count(*) FROM qt WHERE substr(qt.id_a, 1, 4) = s.set AND qt.jaccard >= 0.8), 4) AS recall_j08,
       (SELECT count(*) FROM nj WHERE nj.set = s.set AND nj.jaccard IS NULL AND CASE c.bits WHEN 64 THEN d64 WHEN 128 THEN d128 ELSE dab END <= c.k) AS unrelated_pairs,
       round(((SELECT count(*) FROM nj WHERE nj.set = s.set AND nj.jaccard IS NULL AND CASE c.bits WHEN 64 THEN d64 WHEN 128 THEN d128 ELSE dab END <= c.k)
             / (s.n::float8 * (s.n - 1) / 2) * 1e6)::numeric, 1) AS unrelated_per_doc_at_1m
FROM cfg c, (SELECT set, count(*) AS n FROM qd GROUP BY set) s
ORDER BY c.bits, c.k, s.set;
EOF2
