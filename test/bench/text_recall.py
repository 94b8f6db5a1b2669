#!/usr/bin/python3
"""The recall of the ~= operator on the public evaluation corpus.

  text_recall.py [--data DIR] [--thresholds 0.5,0.8,0.9] [--pairs DIR]

Runs against the server of the PG* environment variables, in which the
extension is installed.  Each set and language of the corpus (natural en,
natural zh, edited en, edited zh) is loaded into a table keyed by the
corpus's own text ids, with a hamming index on its text; for each threshold
t (simhash.similarity_threshold), every row is looked up through the index
(body ~= q) and every pair found is scored against the corpus's truth, which
lists every pair with a Jaccard similarity of 0.5 or more:

- recall: the share of the truth's pairs with J >= t that ~= finds;
- precision: the share of the pairs found with J >= t by the truth (the
  truth's shingles and the extension's differ in a few texts, so this may be
  a little below 1);
- missed beyond the radius: the truth's pairs with J >= t and a
  shingle_similarity >= t that ~= does not find, because their 256-bit
  fingerprints lie beyond simhash_similarity_radius(t).

--pairs DIR also writes each set's pairs found at each threshold as
DIR/SET.LANG.T.tsv, one `id_a<TAB>id_b` a line, for the corpus's own scorer:
`python3 DATA/eval.py DIR/edited.en.0.8.tsv DATA/edited --lang en`.
Writes Markdown to stdout.
"""
import argparse
import os
from fractions import Fraction

from mark_quality import SETS, default_data, psql, read_truth


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--data', default=default_data())
    ap.add_argument('--thresholds', default='0.5,0.8,0.9')
    ap.add_argument('--pairs')
    a = ap.parse_args()
    thresholds = a.thresholds.split(',')

    print('| set | lang | documents | t | pairs with J >= t | found | recall | precision | missed beyond the radius |')
    print('|---|---|---:|---:|---:|---:|---:|---:|---:|')
    for set_name, lang in SETS:
        table = 'r_%s_%s' % (set_name, lang)
        docs = os.path.join(a.data, set_name, 'docs.%s.tsv.xz' % lang)
        psql("DROP TABLE IF EXISTS %s; CREATE TABLE %s (id text PRIMARY KEY, body text);\n"
             "\\copy %s FROM PROGRAM 'xzcat %s'\n"
             "CREATE INDEX ON %s USING hamming (body); ANALYZE %s;\n" % (table, table, table, docs, table, table))
        ndocs = int(psql('SELECT count(*) FROM %s' % table)[0][0])
        truth = {k: v for k, v in read_truth(a.data, set_name).items() if k[0].startswith(lang)}
        for ts in thresholds:
            t = Fraction(ts)
            # each row a lookup through the index (OFFSET 0: the key comparison stays
            # out of the lookup, which the index answers)
            found = {(x, y) for x, y in psql(
                "SET simhash.similarity_threshold = %s;\n"
                "SELECT q.id, d.id FROM %s q CROSS JOIN LATERAL "
                "(SELECT id FROM %s d WHERE d.body ~= q.body OFFSET 0) d WHERE q.id < d.id" % (ts, table, table))}
            positives = {k for k, j in truth.items() if j >= t}
            hit = positives & found
            good = sum(1 for k in found if truth.get(k, 0) >= t)
            # the positives missed although the extension's own similarity is >= t
            missed = sorted(positives - found)
            beyond = 0
            if missed:
                values = ','.join("('%s','%s')" % k for k in missed)
                beyond = int(psql(
                    "SELECT count(*) FROM (VALUES %s) m(a, b) JOIN %s x ON x.id = m.a JOIN %s y ON y.id = m.b "
                    "WHERE shingle_similarity(x.body, y.body, 3, 'auto') >= %s" % (values, table, table, ts))[0][0])
            if a.pairs:
                os.makedirs(a.pairs, exist_ok=True)
                with open(os.path.join(a.pairs, '%s.%s.%s.tsv' % (set_name, lang, ts)), 'w') as f:
                    f.writelines('%s\t%s\n' % k for k in sorted(found))
            print('| %s | %s | %d | %s | %d | %d | %.4f | %.4f | %d |' % (
                set_name, lang, ndocs, ts, len(positives), len(found),
                len(hit) / len(positives) if positives else 1.0,
                good / len(found) if found else 1.0, beyond))
        psql('DROP TABLE %s' % table)


if __name__ == '__main__':
    main()
