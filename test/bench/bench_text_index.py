#!/usr/bin/python3
"""Helpers of test/bench/bench_text_index.sh: the text index's quality on
the public evaluation corpus, and datasketch's MinHashLSH for reference.

  bench_text_index.py quality [--data DIR] [--threshold 0.8]
  bench_text_index.py lsh TABLE.tsv QUERIES.tsv [--perm 128] [--threshold 0.8]
  bench_text_index.py report RESULT.txt LSH.txt QUALITY.md --n N ...

quality runs against the server of the PG* environment variables, in which
the extension is installed.  Each set and language of the corpus (natural
en, natural zh, edited en, edited zh) is loaded into a table keyed by the
corpus's text ids, with a hamming index on the text; every document is
looked up through the index,

  SELECT b.id FROM docs b WHERE simhash_similar(b.body, a.body, 0.8)

(the plan is checked to read the index), and the pairs found are compared
with the corpus's truth, which lists every pair with a Jaccard similarity of
0.5 or more with its exact intersection and sizes: precision (the pairs
found whose Jaccard is >= the threshold), recall (the truth's pairs at or
above the threshold that are found).  Writes a Markdown table to stdout.

lsh indexes the documents of TABLE.tsv (id <TAB> body, COPY text format) in
datasketch's MinHashLSH (the corpus's shingles: 3 words, or 3 characters of
a Chinese text, as the truth's shingle.py makes them; hashed by xxh64), then
times each query of QUERIES.tsv (j <TAB> kind <TAB> body): its MinHash and
the LSH query, candidates not verified.  datasketch comes from PYTHONPATH
(else ../shared/vendor/datasketch beside the repository).  Prints one line
of tab-separated fields: LSH, documents, index seconds, queries, median ms,
90th percentile ms, candidates per query, bands, rows.

report writes the Markdown of bench_text_index.sh from its three results.
"""
import argparse
import os
import subprocess
import sys
import time
from fractions import Fraction

HERE = os.path.dirname(os.path.abspath(__file__))
SETS = [('natural', 'en'), ('natural', 'zh'), ('edited', 'en'), ('edited', 'zh')]


def default_data():
    return os.environ.get('SIMHASH_DATA') or os.path.normpath(os.path.join(HERE, '..', '..', '..', 'shared', 'data'))


def psql(sql):
    out = subprocess.run(['psql', '-X', '-q', '-At', '-F', '\t', '-v', 'ON_ERROR_STOP=1'],
                         input=sql, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(out.stderr)
    return [line.split('\t') for line in out.stdout.splitlines() if line]


def read_truth(data, set_name, lang):
    """(a, b) -> exact Jaccard of every listed pair (a < b) of one language."""
    truth = {}
    with subprocess.Popen(['xzcat', os.path.join(data, set_name, 'truth.tsv.xz')],
                          stdout=subprocess.PIPE, text=True) as p:
        for line in p.stdout:
            if line.startswith('#'):
                continue
            f = line.rstrip('\n').split('\t')
            if not f[0].startswith(lang + '-'):
                continue
            inter, sa, sb = int(f[3]), int(f[4]), int(f[5])
            truth[(f[0], f[1])] = Fraction(inter, sa + sb - inter)
    return truth


def quality(args):
    t = Fraction(args.threshold).limit_denominator(1000)
    print('| set | documents | pairs with J >= %s | found | precision | recall | seconds |' % args.threshold)
    print('|---|---:|---:|---:|---:|---:|---:|')
    for set_name, lang in SETS:
        path = os.path.join(args.data, set_name, 'docs.%s.tsv.xz' % lang)
        lookup = ("SELECT a.id, b.id FROM qdocs a CROSS JOIN LATERAL "
                  "(SELECT id FROM qdocs b WHERE simhash_similar(b.body, a.body, %s)) b WHERE a.id <> b.id"
                  % args.threshold)
        rows = psql(f"""
DROP TABLE IF EXISTS qdocs;
CREATE TABLE qdocs (id text PRIMARY KEY, body text);
\\copy qdocs FROM PROGRAM 'xzcat {path}'
CREATE INDEX qdocs_body ON qdocs USING hamming (body);
ANALYZE qdocs;
CREATE FUNCTION pg_temp.plan(q text) RETURNS SETOF text LANGUAGE plpgsql
	AS $f$ BEGIN RETURN QUERY EXECUTE 'EXPLAIN (COSTS OFF) ' || q; END $f$;
SET enable_seqscan = off;
SELECT 'PLAN', string_agg(p, ' ') FROM pg_temp.plan($q${lookup}$q$) p;
SELECT 'DOCS', count(*) FROM qdocs;
SELECT 'START', extract(epoch FROM clock_timestamp());
{lookup};
SELECT 'END', extract(epoch FROM clock_timestamp());
""")
        plan = next(r[1] for r in rows if r[0] == 'PLAN')
        if 'qdocs_body' not in plan:
            sys.exit('bench_text_index.py: the lookup does not read the index: ' + plan)
        ndocs = next(r[1] for r in rows if r[0] == 'DOCS')
        seconds = float(next(r[1] for r in rows if r[0] == 'END')) - float(next(r[1] for r in rows if r[0] == 'START'))
        found = {tuple(sorted(r)) for r in rows if r[0] not in ('PLAN', 'DOCS', 'START', 'END')}
        truth = read_truth(args.data, set_name, lang)
        want = {p for p, j in truth.items() if j >= t}
        right = sum(1 for p in found if truth.get(p, 0) >= t)
        precision = right / len(found) if found else 1.0
        recall = len(want & found) / len(want) if want else 1.0
        print('| %s %s | %s | %d | %d | %.4f | %.4f | %.1f |'
              % (set_name, lang, ndocs, len(want), len(found), precision, recall, seconds))
        sys.stdout.flush()


def unescape(field):
    """COPY text format to the text."""
    if '\\' not in field:
        return field
    out, i = [], 0
    while i < len(field):
        c = field[i]
        if c == '\\' and i + 1 < len(field):
            n = field[i + 1]
            out.append({'n': '\n', 't': '\t', 'r': '\r', 'b': '\b', 'f': '\f', 'v': '\v'}.get(n, n))
            i += 2
        else:
            out.append(c)
            i += 1
    return ''.join(out)


def lsh(args):
    sys.path.insert(0, os.path.normpath(os.path.join(HERE, '..', '..', '..', 'shared', 'vendor', 'datasketch')))
    sys.path.insert(0, args.data)
    import numpy as np
    import xxhash
    from datasketch import MinHash, MinHashLSH
    import shingle

    def lang(text):
        cjk = sum(1 for c in text[:200] if '\u4e00' <= c <= '\u9fff')
        return 'zh' if cjk * 5 > min(len(text), 200) else 'en'

    def hashes(text):
        return [s.encode() for s in shingle.shingles(text, lang(text))]

    template = MinHash(num_perm=args.perm, hashfunc=xxhash.xxh64_intdigest)

    def minhash(text):
        m = MinHash(num_perm=args.perm, hashfunc=xxhash.xxh64_intdigest, permutations=template.permutations)
        m.update_batch(hashes(text))
        return m

    index = MinHashLSH(threshold=args.threshold, num_perm=args.perm)
    t0 = time.time()
    n = 0
    with open(args.table, encoding='utf-8') as f:
        for line in f:
            key, body = line.rstrip('\n').split('\t', 1)
            index.insert(key, minhash(unescape(body)), check_duplication=False)
            n += 1
    index_s = time.time() - t0
    times, candidates = [], []
    with open(args.queries, encoding='utf-8') as f:
        queries = [unescape(line.rstrip('\n').split('\t', 2)[2]) for line in f]
    for _ in range(2):                  # the second pass timed, as in the server
        times, candidates = [], []
        for q in queries:
            t0 = time.perf_counter()
            found = index.query(minhash(q))
            times.append((time.perf_counter() - t0) * 1000)
            candidates.append(len(found))
    print('LSH\t%d\t%.1f\t%d\t%.3f\t%.3f\t%.2f\t%d\t%d'
          % (n, index_s, len(queries), np.percentile(times, 50), np.percentile(times, 90),
             sum(candidates) / len(candidates), index.b, index.r))


def report(args):
    res, lookup, same, planted = {}, {}, {}, []
    with open(args.result) as f:
        for line in f:
            r = line.rstrip('\n').split('\t')
            if r[0] == 'RES':
                res[r[1]] = float(r[2])
            elif r[0] == 'LOOKUP':
                lookup[(r[1], r[2])] = r[3:]
            elif r[0] == 'SAME':
                same[r[1]] = (int(r[2]), int(r[3]))
            elif r[0] == 'PLANTED':
                planted.append(r[1:])
    with open(args.lsh) as f:
        lsh = f.read().split()
    cpu = next((line.split(':', 1)[1].strip() for line in open('/proc/cpuinfo') if line.startswith('model name')), '?')
    rows = res['rows']
    print('## The text index on %d generated documents' % args.n)
    print()
    print('%d cores, %s; load average %s at the start, %s at the end; %d s in all.'
          % (os.cpu_count(), cpu, args.load_start, args.load_end, args.seconds))
    print()
    print('### Lookup (the whole statement: the query\'s fingerprint, the scan, the verification)')
    print()
    print('| form | queries | median ms | 90th percentile ms | median ms, planted copies | median ms, unrelated | rows found / query | candidates / query |')
    print('|---|---:|---:|---:|---:|---:|---:|---:|')
    names = [('function', '`simhash_similar(body, $1, 0.8)`, text index'),
             ('operator', '`body ~= $1`, text index'),
             ('probe tables off', '`body ~= $1`, text index `WITH (probe_tables = off)`'),
             ('sequential scan', '`body ~= $1`, sequential scan'),
             ('half indexes', 'four half indexes at 12, 256 bits within 49, verified')]
    for m, name in names:
        if (m, '') not in lookup:
            continue
        a = lookup[(m, '')]
        cp = lookup.get((m, 'copy'), ['', ''])
        un = lookup.get((m, 'unrelated'), ['', ''])
        print('| %s | %s | %.3f | %.3f | %.3f | %.3f | %.2f | %s |'
              % (name, a[0], float(a[1]), float(a[2]), float(cp[1]), float(un[1]), float(a[3]),
                 '%.2f' % float(a[4]) if a[4] else ''))
    print('| datasketch MinHashLSH, 128 permutations, threshold 0.8 (Python; %s bands of %s rows; not verified) '
          '| %s | %s | %s | | | | %s |' % (lsh[7], lsh[8], lsh[3], lsh[4], lsh[5], lsh[6]))
    print()
    med = {m: float(lookup[(m, '')][1]) for m, _ in names if (m, '') in lookup}
    print('The sequential scan takes %.0fx the time of the text index (medians, operator); the function form\'s '
          'median is %.3f ms.' % (med['sequential scan'] / med['operator'], med['function']))
    print('Answers equal to the function form\'s: %s.'
          % '; '.join('%s %d of %d' % (m, same[m][1], same[m][0]) for m in sorted(same)))
    print('MinHashLSH indexed the %s rows in %s s.' % (lsh[1], lsh[2]))
    print()
    print('| planted copies at edit rate | queries | shingle similarity >= 0.8 to the original | original found | of those >= 0.8 |')
    print('|---|---:|---:|---:|---:|')
    for r in planted:
        print('| %s | %s | %s | %s | %s |' % tuple(r))
    print()
    print('### Index size and build (one core: max_parallel_maintenance_workers = 0)')
    print()
    print('| index | CREATE INDEX s | bytes / row | MB |')
    print('|---|---:|---:|---:|')
    print('| text index `USING hamming (body)` | %.1f | %.1f | %.0f |'
          % (res['create index'], res['index bytes'] / rows, res['index bytes'] / 2 ** 20))
    print('| text index `WITH (probe_tables = off)` | %.1f | %.1f | %.0f |'
          % (res['flat create index'], res['flat index bytes'] / rows, res['flat index bytes'] / 2 ** 20))
    print('| four half indexes on two `simhash128` columns | %.1f (+ %.1f for the columns) | %.1f | %.0f |'
          % (res['half create index'], res['half fingerprints'], res['half index bytes'] / rows, res['half index bytes'] / 2 ** 20))
    print('| the gate\'s index (filled by inserts) | | %.1f | %.0f |'
          % (res['gate index bytes'] / res['gate rows'], res['gate index bytes'] / 2 ** 20))
    print()
    b = res['batch rows']
    print('The batch of %d documents (%d planted copies) inserted into the %d rows, rolled back: without an index '
          '%.1f s (%.0f us a row), with the text index %.1f s (%.0f us a row).'
          % (b, res['batch copies'], rows, res['insert no index'], res['insert no index'] / b * 1e6,
             res['insert text index'], res['insert text index'] / b * 1e6))
    print()
    g, gb = res['g rows'], res['g batch rows']
    print('### The gate: %d documents (%d planted copies) inserted into %d rows' % (gb, res['g batch copies'], g))
    print()
    print('| table | seconds | us / row inserted | rows inserted |')
    print('|---|---:|---:|---:|')
    for k, name in [('g no index', 'no index'), ('g text index', 'the text index'),
                    ('g gate', 'the gate (`EXCLUDE ... WITH ~=`), `INSERT ... ON CONFLICT DO NOTHING`'),
                    ('g gate plain', 'the gate, a plain `INSERT` of the rows it let in'),
                    ('g gate txn', 'the gate, `INSERT ... ON CONFLICT DO NOTHING` in transactions of 10,000 rows')]:
        print('| %s | %.2f | %.0f | %d |' % (name, res['insert ' + k], res['insert ' + k] / res['inserted ' + k] * 1e6,
                                          res['inserted ' + k]))
    print()
    gate = res['insert g gate'] / gb * 1e3
    base = res['insert g no index'] / gb * 1e3
    plain = res['insert g gate plain'] / res['inserted g gate plain'] * 1e3
    look = res['g lookup median ms']
    own = res['g lookup of batch rows mean ms']
    print('Per document of the batch: the gate %.3f ms (a plain `INSERT` %.3f ms a row), without an index %.3f ms. '
          'One lookup in %d rows: %.3f ms (median of the queries above); of the rows of the batch, %.3f ms '
          '(mean; median %.3f ms). The target, no index + 1.5 lookups of the rows of the batch: %.3f ms '
          '(%.3f ms with the median query).'
          % (gate, plain, base, g, look, own, res['g lookup of batch rows median ms'], base + 1.5 * own, base + 1.5 * look))
    print('In transactions of 10,000 rows the gate costs %.3f ms a document and lets in %d rows, '
          'the same %d as in one statement.'
          % (res['insert g gate txn'] / gb * 1e3, res['inserted g gate txn'], res['inserted g gate txn same']))
    print('Filling the gated table row by row with its %d rows: %.0f s (%.3f ms a row), %d rows refused; '
          'its index then takes %.0f bytes a row.'
          % (g, res['gate fill'], res['gate fill'] / g * 1e3, g - res['gate rows'], res['gate index bytes'] / res['gate rows']))
    print('The gate\'s index held %d entries in its tail before the batch (after a VACUUM).'
          % res['gate tail entries before the batch'])
    print()
    fp = (res['batch fingerprint'] - res['batch detoast']) / b * 1e3
    verify = (res['pairs similarity'] - res['pairs detoast']) / res['pairs'] * 1e3
    near = (res['pairs operator'] - res['pairs detoast']) / res['pairs'] * 1e3
    print('Broken down (ms, averages over %d rows of the batch, by EXPLAIN ANALYZE):' % args.probes)
    print()
    print('| index | Bitmap Index Scan (the key\'s fingerprint and the probes) | bitmap scan in all (with the recheck) | plain Index Scan in all | candidates |')
    print('|---|---:|---:|---:|---:|')
    for tab, name in [('g_gate', 'the gate\'s, %d rows' % res['gate rows']), ('docs', 'the text index, %d rows' % rows)]:
        print('| %s | %.3f | %.3f | %.3f | %.1f |' % (name, res['probe index ms ' + tab], res['probe total ms ' + tab],
                                                   res['probe plain ms ' + tab], res['probe candidates ' + tab]))
    print()
    print('The fingerprint of a row (`shingle_simhash256` over the batch) %.3f ms; the verification of one candidate: '
          '`shingle_similarity` of two texts %.3f ms, `a ~= b` of two texts (both shingled and fingerprinted) %.3f ms.'
          % (fp, verify, near))
    print()
    print('### Quality on the public corpus: every document looked up through the index')
    print()
    with open(args.quality) as f:
        print(f.read().rstrip())
    print()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    sub = ap.add_subparsers(dest='cmd', required=True)
    q = sub.add_parser('quality')
    q.add_argument('--data', default=default_data())
    q.add_argument('--threshold', default='0.8')
    q.set_defaults(func=quality)
    s = sub.add_parser('lsh')
    s.add_argument('table')
    s.add_argument('queries')
    s.add_argument('--data', default=default_data())
    s.add_argument('--perm', type=int, default=128)
    s.add_argument('--threshold', type=float, default=0.8)
    s.set_defaults(func=lsh)
    r = sub.add_parser('report')
    r.add_argument('result')
    r.add_argument('lsh')
    r.add_argument('quality')
    r.add_argument('--n', type=int)
    r.add_argument('--probes', type=int, default=300)
    r.add_argument('--load-start')
    r.add_argument('--load-end')
    r.add_argument('--seconds', type=int)
    r.set_defaults(func=report)
    args = ap.parse_args()
    args.func(args)


if __name__ == '__main__':
    main()
