#!/usr/bin/python3
"""Verified near-duplicates benchmark driver, run by test/bench/bench_similarity.sh
(which starts the cluster, creates the extension and loads the tables
natural_en, natural_zh, edited_en, edited_zh, truth_natural, truth_edited).
Standard library only.

1. Agreement of shingle_similarity() with the corpus's exact Jaccard
   (shingle.py's definition): on every truth pair (J >= 0.5) and every other
   pair within 16 bits (J < 0.5 by the truth's completeness), how many pairs
   change side of 0.8, with units 'words' for en and 'characters' for zh (the
   corpus's units), and with 'words' for zh too (simhash's default).
2. Cost of one verification: shingle_similarity(text, text) against
   shingle_similarity(bigint[], bigint[]) on stored shingle_set()s.
3. The whole-table pipeline: the verified simhash_pairs(query, 16, 0.8), from
   the texts and from stored shingle sets, against simhash_pairs(query, 16)
   alone plus one read of the text.
Medians of RUNS runs, side by side.
"""
import statistics
import subprocess
import sys
import time

RUNS = 5
SETS = [('natural', 'en'), ('natural', 'zh'), ('edited', 'en'), ('edited', 'zh')]
UNITS = {'en': 'words', 'zh': 'characters'}


def psql(sql):
    p = subprocess.run(['psql', '-X', '-q', '-A', '-t', '-F', '\t', '-v', 'ON_ERROR_STOP=1', '-c', sql],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, check=False)
    if p.returncode != 0:
        sys.exit('psql failed: %s\n%s' % (p.stderr.strip(), sql))
    return [line.split('\t') for line in p.stdout.splitlines() if line]


def timed(sql):
    """Server-side time of one statement (EXPLAIN ANALYZE would add overhead
    per row): wall time of a psql call minus that of an empty one."""
    t0 = time.perf_counter()
    psql(sql)
    return time.perf_counter() - t0


def median_times(stmts):
    """Runs the statements in turn RUNS times (side by side); medians."""
    empty = statistics.median(timed('SELECT 1') for _ in range(RUNS))
    times = {name: [] for name in stmts}
    for _ in range(RUNS):
        for name, sql in stmts.items():
            times[name].append(timed(sql) - empty)
    return {name: statistics.median(t) for name, t in times.items()}


def main():
    out = []
    # one table of every document with an integer id, a fingerprint and its units
    psql("DROP TABLE IF EXISTS bench_docs; CREATE TABLE bench_docs AS "
         "SELECT row_number() OVER (ORDER BY id)::int AS n, id, lang, body, simhash(body) AS fp, "
         "NULL::bigint[] AS shingles, NULL::bigint[] AS shingles_words FROM ("
         + ' UNION ALL '.join("SELECT id, '%s' AS lang, body FROM %s_%s" % (l, s, l) for s, l in SETS)
         + ") d; UPDATE bench_docs SET shingles = shingle_set(body, 3, CASE lang WHEN 'zh' THEN "
         "'characters' ELSE 'words' END), shingles_words = shingle_set(body); ANALYZE bench_docs")

    # ---- 1. agreement ----
    out += ['## Agreement with the corpus definition (shingle.py) at J >= 0.8', '',
            '| set | lang | units | truth pairs (J >= 0.5) | other candidates (k <= 16) | differ at all '
            '| change side of 0.8 | share of truth pairs |', '|---|---|---|---:|---:|---:|---:|---:|']
    total_truth = total_cross = 0
    for s, l in SETS:
        for units in ([UNITS[l]] if l == 'en' else [UNITS[l], 'words']):
            r = psql("""
WITH d AS (SELECT * FROM bench_docs WHERE lang = '{l}' AND id LIKE '{l}-{c}-%'),
truth AS (SELECT id_a, id_b, inter::float8 / (size_a + size_b - inter) AS j,
                 5 * inter >= 4 * (size_a + size_b - inter) AS pos
          FROM truth_{s} WHERE left(id_a, 2) = '{l}'),
cand AS (SELECT least(a.id, b.id) AS id_a, greatest(a.id, b.id) AS id_b
         FROM simhash_pairs('SELECT n, fp FROM bench_docs WHERE lang = ''{l}'' AND id LIKE ''{l}-{c}-%''', 16) p
         JOIN d a ON a.n = p.id_a JOIN d b ON b.n = p.id_b),
pairs AS (SELECT coalesce(t.id_a, c.id_a) AS id_a, coalesce(t.id_b, c.id_b) AS id_b, t.j, coalesce(t.pos, false) AS pos
          FROM truth t FULL JOIN cand c USING (id_a, id_b)),
sim AS (SELECT p.*, shingle_similarity(a.body, b.body, 3, '{u}') AS ours
        FROM pairs p JOIN d a ON a.id = p.id_a JOIN d b ON b.id = p.id_b)
SELECT count(j), count(*) - count(j),
       count(*) FILTER (WHERE j IS NULL AND ours >= 0.5 OR abs(ours - j) > 1e-9),
       count(*) FILTER (WHERE pos <> (ours >= 0.8))
FROM sim""".format(s=s, l=l, c=s[0], u=units))[0]
            truth, other, differ, cross = map(int, r)
            if units == UNITS[l]:
                total_truth += truth
                total_cross += cross
            out.append('| %s | %s | %s | %d | %d | %d | %d | %.3f%% |' % (
                s, l, units, truth, other, differ, cross, 100.0 * cross / truth))
    out += ['', 'With the corpus units: %d of %d truth pairs change side of 0.8 (%.3f%%).'
            % (total_cross, total_truth, 100.0 * total_cross / total_truth), '']

    # ---- 2. one verification ----
    psql("DROP TABLE IF EXISTS bench_cand; CREATE TABLE bench_cand AS "
         "SELECT p.id_a, p.id_b FROM simhash_pairs('SELECT n, fp FROM bench_docs', 16) p; ANALYZE bench_cand")
    ncand = int(psql('SELECT count(*) FROM bench_cand')[0][0])
    t = median_times({
        'texts': "SELECT sum(shingle_similarity(a.body, b.body, 3, CASE a.lang WHEN 'zh' THEN 'characters' "
                 "ELSE 'words' END)) FROM bench_cand c JOIN bench_docs a ON a.n = c.id_a "
                 "JOIN bench_docs b ON b.n = c.id_b",
        'sets': "SELECT sum(shingle_similarity(a.shingles, b.shingles)) FROM bench_cand c "
                "JOIN bench_docs a ON a.n = c.id_a JOIN bench_docs b ON b.n = c.id_b",
        'join only': "SELECT count(a.body) + count(b.body) FROM bench_cand c "
                     "JOIN bench_docs a ON a.n = c.id_a JOIN bench_docs b ON b.n = c.id_b"})
    out += ['## One verification (%d candidate pairs within 16 bits, all four sets)' % ncand, '',
            '| check | median time | per pair | ratio |', '|---|---:|---:|---:|']
    for name in ('texts', 'sets', 'join only'):
        out.append('| %s | %.1f ms | %.1f us | %.2f |' % (
            {'texts': '`shingle_similarity(text, text)`', 'sets': '`shingle_similarity(bigint[], bigint[])` '
             'on stored `shingle_set()`s', 'join only': 'the join alone, no check'}[name],
            1000 * t[name], 1e6 * t[name] / ncand, t[name] / t['texts']))
    out.append('')

    # ---- 3. whole table ----
    ndocs = int(psql('SELECT count(*) FROM bench_docs')[0][0])
    t = median_times({
        'pairs': "SELECT count(*) FROM simhash_pairs('SELECT n, fp FROM bench_docs', 16)",
        'read': "SELECT sum(length(body)) FROM bench_docs",
        'tokenize': "SELECT sum(cardinality(shingle_set(body))) FROM bench_docs",
        'verified': "SELECT count(*) FROM simhash_pairs('SELECT n, fp, body FROM bench_docs', 16, 0.8)",
        'stored': "SELECT count(*) FROM simhash_pairs('SELECT n, fp, shingles_words FROM bench_docs', 16, 0.8)",
        'clusters': "SELECT count(DISTINCT cluster_id) FROM simhash_clusters('SELECT n, fp, body FROM bench_docs', 16, 0.8)",
        'dedup': "SELECT count(duplicate_of) FROM simhash_dedup('SELECT n, fp, body FROM bench_docs', 16, 0.8)",
    })
    base = t['pairs'] + t['read']
    out += ['## Whole table (%d documents, k = 16, J >= 0.8; units words for every document here)' % ndocs, '',
            '| statement | median time | / (simhash_pairs + one read) |', '|---|---:|---:|']
    for name, label in (('pairs', '`simhash_pairs(q, 16)`'), ('read', 'one read of the text: `sum(length(body))`'),
                        ('tokenize', 'tokenizing every text once: `shingle_set(body)`'),
                        ('verified', '`simhash_pairs(q, 16, 0.8)` (verified)'),
                        ('stored', 'the same from stored `shingle_set(body)` instead of body'),
                        ('clusters', '`simhash_clusters(q, 16, 0.8)`'), ('dedup', '`simhash_dedup(q, 16, 0.8)`')):
        out.append('| %s | %.1f ms | %.2f |' % (label, 1000 * t[name], t[name] / base))
    out.append('')
    text = '\n'.join(out) + '\n'
    sys.stdout.write(text)
    with open(sys.argv[1], 'w', encoding='utf-8') as f:
        f.write('# Verified near-duplicates benchmark\n\n' + text)


if __name__ == '__main__':
    main()
