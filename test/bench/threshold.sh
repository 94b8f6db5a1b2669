#!/usr/bin/env bash
# test/bench/threshold.sh: which Hamming threshold for which text length, measured
# on the evaluation corpus (real English and Chinese documents from Debian
# packages, and edited copies, with the exact Jaccard similarity of every
# pair at 0.5 or more).
#
# For each set (natural, edited) and language, every document is
# fingerprinted with simhash(body) and every pair within 24 bits is found
# (simhash_pairs); a pair is a near-duplicate when its Jaccard similarity of
# 3-shingles (the corpus's definition: words for English, characters for
# Chinese) is at least 0.8.  Pairs are put in bands by the number of shingles
# of the shorter document, and for each band and threshold k = 0..24 the
# script counts precision, recall and F1 of "distance <= k", pooled over the
# two sets.  Reported per language and band: the near-duplicate pairs, the
# k of the best F1 (fingerprints alone), the largest k whose precision is
# still at least 0.9 (high precision), and the smallest k that finds 95%
# and 99% of the near-duplicates (the candidate radius when candidates are
# verified with shingle_similarity).
#
#     bash test/bench/threshold.sh      # about 2 minutes on 2 cores; extension installed
# Environment: SIMHASH_DATA = corpus directory (required unless ../shared/data
# exists beside the repository).  Starts a throwaway cluster on port 5497.
# Prints the table (markdown) and writes it to test/out/threshold.md.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
data=${SIMHASH_DATA:-$root/../shared/data}
data=$(cd "$data" && pwd)
source test/cluster.sh
dir=$(mktemp -d /tmp/simhash-threshold.XXXXXX)
chmod 755 "$dir"
trap 'stop_cluster "$dir"; rm -rf "$dir"' EXIT
PGPORT_WANTED=5497 start_cluster "$dir" "jit = off" "shared_buffers = 256MB" "work_mem = 64MB"

psql -X -q -v ON_ERROR_STOP=1 -c 'CREATE EXTENSION simhash' \
	-c 'CREATE TABLE docs (set text, lang text, id text, body text NOT NULL, PRIMARY KEY (set, id))' \
	-c 'CREATE TABLE truth (set text, id_a text, id_b text, jaccard float8, inter int, size_a int, size_b int)'
for s in natural edited; do
	for l in en zh; do
		psql -X -q -v ON_ERROR_STOP=1 \
			-c "CREATE TEMP TABLE d (id text, body text)" \
			-c "\\copy d FROM PROGRAM 'xzcat $data/$s/docs.$l.tsv.xz'" \
			-c "INSERT INTO docs SELECT '$s', '$l', id, body FROM d"
	done
	psql -X -q -v ON_ERROR_STOP=1 \
		-c "CREATE TEMP TABLE t (id_a text, id_b text, jaccard float8, inter int, size_a int, size_b int)" \
		-c "\\copy t FROM PROGRAM 'xzcat $data/$s/truth.tsv.xz | grep -v ^# | cut -f1-6'" \
		-c "INSERT INTO truth SELECT '$s', * FROM t"
done

mkdir -p test/out
psql -X -q -v ON_ERROR_STOP=1 -At <<'EOF' | tee test/out/threshold.md
-- one row per document: an integer id for simhash_pairs, its fingerprint,
-- its number of distinct shingles (the corpus's units)
CREATE TABLE fps AS
SELECT row_number() OVER (ORDER BY set, id) AS n, set, lang, id, simhash(body) AS fp,
       cardinality(shingle_set(body, 3, CASE lang WHEN 'zh' THEN 'characters' ELSE 'words' END)) AS shingles
FROM docs;
CREATE INDEX ON fps (set, id);
ANALYZE fps;
-- the length band of a pair: the shorter document's shingles
CREATE FUNCTION band(int) RETURNS int LANGUAGE sql IMMUTABLE AS
$$ SELECT CASE WHEN $1 < 50 THEN 1 WHEN $1 < 100 THEN 2 WHEN $1 < 200 THEN 3
               WHEN $1 < 400 THEN 4 WHEN $1 < 800 THEN 5 ELSE 6 END $$;
CREATE TABLE band_names (band int, name text);
INSERT INTO band_names VALUES (1, 'under 50'), (2, '50-99'), (3, '100-199'), (4, '200-399'),
                              (5, '400-799'), (6, '800 and more');
-- the near-duplicates (J >= 0.8) with their distances
CREATE TABLE pos AS
SELECT a.lang, band(least(a.shingles, b.shingles)) AS band, a.fp <~> b.fp AS distance
FROM truth t JOIN fps a ON a.set = t.set AND a.id = t.id_a JOIN fps b ON b.set = t.set AND b.id = t.id_b
WHERE t.jaccard >= 0.8;
-- every pair within 24 bits, near-duplicate or not (pairs are within one set and language)
CREATE TABLE cand AS
SELECT a.lang, band(least(a.shingles, b.shingles)) AS band, p.distance,
       EXISTS (SELECT 1 FROM truth t WHERE t.set = a.set AND t.jaccard >= 0.8
               AND t.id_a = least(a.id, b.id) AND t.id_b = greatest(a.id, b.id)) AS near
FROM (SELECT s.set || s.lang AS part FROM (SELECT DISTINCT set, lang FROM fps) s) parts
CROSS JOIN LATERAL simhash_pairs(format('SELECT n, fp FROM fps WHERE set || lang = %L', parts.part), 24) p
JOIN fps a ON a.n = p.id_a JOIN fps b ON b.n = p.id_b;
CREATE TABLE perk AS
SELECT l.lang, b.band, k,
       (SELECT count(*) FROM pos WHERE pos.lang = l.lang AND pos.band = b.band) AS npos,
       (SELECT count(*) FROM pos WHERE pos.lang = l.lang AND pos.band = b.band AND distance <= k) AS tp,
       (SELECT count(*) FROM cand c WHERE c.lang = l.lang AND c.band = b.band AND distance <= k) AS pred
FROM (VALUES ('en'), ('zh')) l(lang), generate_series(1, 6) b(band), generate_series(0, 24) k;
CREATE TABLE prf AS
SELECT lang, band, k, npos, tp, pred,
       CASE WHEN pred > 0 THEN tp::float8 / pred END AS p,
       CASE WHEN npos > 0 THEN tp::float8 / npos END AS r,
       CASE WHEN tp > 0 THEN 2.0 * tp / (pred + npos) END AS f1
FROM perk;

SELECT '| language | shorter text, shingles | near-duplicate pairs | best F1 (k: P / R / F1) | high precision (k: P / R) | finds 95% (k) | finds 99% (k) |';
SELECT '|---|---|---:|---|---|---:|---:|';
SELECT format('| %s | %s | %s | %s | %s | %s | %s |', x.lang, n.name, x.npos,
       coalesce((SELECT format('%s: %s / %s / %s', k, round(p::numeric, 2), round(r::numeric, 2), round(f1::numeric, 3))
                 FROM prf WHERE prf.lang = x.lang AND prf.band = x.band AND f1 IS NOT NULL
                 ORDER BY f1 DESC, k LIMIT 1), '-'),
       coalesce((SELECT format('%s: %s / %s', k, round(p::numeric, 2), round(r::numeric, 2))
                 FROM prf WHERE prf.lang = x.lang AND prf.band = x.band AND p >= 0.9
                 ORDER BY k DESC LIMIT 1), 'none'),
       coalesce((SELECT min(k)::text FROM prf WHERE prf.lang = x.lang AND prf.band = x.band AND r >= 0.95), 'over 24'),
       coalesce((SELECT min(k)::text FROM prf WHERE prf.lang = x.lang AND prf.band = x.band AND r >= 0.99), 'over 24'))
FROM (SELECT DISTINCT lang, band, npos FROM prf WHERE npos > 0) x JOIN band_names n USING (band)
ORDER BY x.lang, x.band;
EOF
