#!/usr/bin/python3
"""The quality of simhash_mark_duplicates on the public evaluation corpus.

  mark_quality.py [--data DIR] [--thresholds 0.6,0.8,0.9]

Runs against the server of the PG* environment variables, in which the
extension is installed.  Each set and language of the corpus (natural en,
natural zh, edited en, edited zh) is loaded into a table keyed by the
corpus's own text ids, and for each threshold t:

- simhash_mark_duplicates(table, 'body', 'dup', t) marks the table;
- the reference is a brute-force Jaccard de-duplication by the same rule
  ('center' in key order: a document is removed when an earlier kept
  document has a Jaccard similarity >= t with it, and is marked with the
  first such), computed from the corpus's truth, which lists every pair with
  a Jaccard similarity of 0.5 or more with its exact intersection and sizes;
- precision: the share of the removals (rows marked) whose Jaccard
  similarity with the kept row they are marked with is >= t by the truth;
  recall: the share of the reference's removals that are removed;
  same mark: the share of the reference's removals marked with the same
  kept row.

A second table gives the radius of each threshold: the least Hamming
distance of the 256-bit fingerprint (shingle_simhash128(body, 3, 'auto', 0)
and (..., 1)) within which 99.5% of the truth's pairs at that threshold or
above lie, all four sets pooled: the table simhash_mark_duplicates uses.
Writes Markdown to stdout.
"""
import argparse
import os
import subprocess
import sys
import time
from fractions import Fraction

HERE = os.path.dirname(os.path.abspath(__file__))
SETS = [('natural', 'en'), ('natural', 'zh'), ('edited', 'en'), ('edited', 'zh')]


def psql(sql, *args):
    out = subprocess.run(['psql', '-X', '-q', '-At', '-F', '\t', '-v', 'ON_ERROR_STOP=1', *args],
                         input=sql, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(out.stderr)
    return [line.split('\t') for line in out.stdout.splitlines() if line]


def read_truth(data, set_name):
    """(a, b) -> Fraction Jaccard for every listed pair (a < b)."""
    truth = {}
    with subprocess.Popen(['xzcat', os.path.join(data, set_name, 'truth.tsv.xz')], stdout=subprocess.PIPE, text=True) as p:
        for line in p.stdout:
            if line.startswith('#'):
                continue
            f = line.rstrip('\n').split('\t')
            inter, sa, sb = int(f[3]), int(f[4]), int(f[5])
            truth[(f[0], f[1])] = Fraction(inter, sa + sb - inter)
    return truth


def center(ids, truth, t):
    """id -> kept id for every removal, in key order (ids as sorted)."""
    near = {}
    for (a, b), j in truth.items():
        if j >= t:
            near.setdefault(a, set()).add(b)
            near.setdefault(b, set()).add(a)
    kept, removed = [], {}
    rank = {i: n for n, i in enumerate(ids)}
    kept_set = set()
    for i in ids:
        cands = [k for k in near.get(i, ()) if k in kept_set]
        if cands:
            removed[i] = min(cands, key=rank.__getitem__)
        else:
            kept.append(i)
            kept_set.add(i)
    return removed


def default_data():
    """The public corpus: $SIMHASH_DATA, else <repo>/../shared/data."""
    return os.environ.get('SIMHASH_DATA') or os.path.normpath(os.path.join(HERE, '..', '..', '..', 'shared', 'data'))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--data', default=default_data())
    ap.add_argument('--thresholds', default='0.6,0.8,0.9')
    a = ap.parse_args()
    thresholds = [Fraction(x) for x in a.thresholds.split(',')]

    print('| set | lang | documents | t | removed | reference removed | precision | recall | same mark | seconds |')
    print('|---|---|---:|---:|---:|---:|---:|---:|---:|---:|')
    radius_rows = []
    for set_name, lang in SETS:
        table = 'q_%s_%s' % (set_name, lang)
        docs = os.path.join(a.data, set_name, 'docs.%s.tsv.xz' % lang)
        psql("DROP TABLE IF EXISTS %s; CREATE TABLE %s (id text PRIMARY KEY, body text, dup text);\n"
             "\\copy %s (id, body) FROM PROGRAM 'xzcat %s'\n" % (table, table, table, docs))
        # the order of the keys as the server sorts them
        ids = [r[0] for r in psql('SELECT id FROM %s ORDER BY id' % table)]
        truth = {k: v for k, v in read_truth(a.data, set_name).items() if k[0].startswith(lang)}
        for t in thresholds:
            start = time.time()
            psql("SELECT simhash_mark_duplicates('%s', 'body', 'dup', %s)" % (table, float(t)))
            seconds = time.time() - start
            marks = dict(psql('SELECT id, dup FROM %s WHERE dup IS NOT NULL' % table))
            ref = center(ids, truth, t)
            good = sum(1 for i, k in marks.items() if truth.get((min(i, k), max(i, k)), 0) >= t)
            both = sum(1 for i in ref if i in marks)
            same = sum(1 for i, k in ref.items() if marks.get(i) == k)
            print('| %s | %s | %d | %s | %d | %d | %.4f | %.4f | %.4f | %.1f |' % (
                set_name, lang, len(ids), float(t), len(marks), len(ref),
                good / len(marks) if marks else 1.0, both / len(ref) if ref else 1.0,
                same / len(ref) if ref else 1.0, seconds))
        radius_rows.append((table, truth))

    # the radius table: every set's truth pairs, pooled
    psql('DROP TABLE IF EXISTS mark_radius; CREATE TABLE mark_radius (j float8, d int);')
    for table, truth in radius_rows:
        lines = ''.join('%s\t%s\t%r\n' % (x, y, float(j)) for (x, y), j in truth.items())
        psql("CREATE TEMP TABLE tp (a text, b text, j float8);\nCOPY tp FROM STDIN;\n" + lines + "\\.\n"
             "INSERT INTO mark_radius SELECT tp.j, (shingle_simhash128(x.body, 3, 'auto', 0) <~> shingle_simhash128(y.body, 3, 'auto', 0))"
             " + (shingle_simhash128(x.body, 3, 'auto', 1) <~> shingle_simhash128(y.body, 3, 'auto', 1))"
             " FROM tp JOIN %s x ON x.id = tp.a JOIN %s y ON y.id = tp.b;\n" % (table, table))
    print()
    print('| threshold t | pairs with J >= t | distance within which 99% lie | 99.5% (the radius) | 99.9% | all |')
    print('|---:|---:|---:|---:|---:|---:|')
    for row in psql("SELECT th, count(*), percentile_disc(0.99) WITHIN GROUP (ORDER BY d),"
                    " percentile_disc(0.995) WITHIN GROUP (ORDER BY d), percentile_disc(0.999) WITHIN GROUP (ORDER BY d), max(d)"
                    " FROM mark_radius, unnest('{0.5,0.55,0.6,0.65,0.7,0.75,0.8,0.85,0.9,0.95}'::float8[]) th"
                    " WHERE j >= th - 1e-9 GROUP BY th ORDER BY th"):
        print('| %s |' % ' | '.join(row))


if __name__ == '__main__':
    main()
